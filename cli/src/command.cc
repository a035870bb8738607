#include "command.hpp"

#include <algorithm>

namespace asnctl {

namespace {

struct Group {
  int order;
  Declare declare;
};

// Function-local, so registrars in other files may run in any order at start-up.
std::vector<Group>& groups() {
  static std::vector<Group> all;
  return all;
}

}  // namespace

Command* CommandSet::parsed() const {
  for (const auto& leaf : leaves_) {
    if (leaf.app->parsed()) return leaf.command.get();
  }
  return nullptr;
}

Registrar::Registrar(int order, Declare declare) {
  groups().push_back({order, std::move(declare)});
}

void declare_commands(CLI::App& app, CommandSet& commands) {
  auto all = groups();
  std::stable_sort(all.begin(), all.end(),
                   [](const Group& a, const Group& b) { return a.order < b.order; });
  for (const auto& group : all) group.declare(app, commands);
}

}  // namespace asnctl
