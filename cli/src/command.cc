#include "command.hpp"

#include <algorithm>

#include "asn/text/text.hpp"

namespace asnctl {

namespace {

struct Group {
  int order;
  Declare declare;
};

// Every command below `app` by its words ("status", "locks", "locks list", ...).
void command_paths(const CLI::App& app, const std::string& prefix, std::vector<std::string>& out) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string path = prefix.empty() ? sub->get_name() : prefix + " " + sub->get_name();
    out.push_back(path);
    command_paths(*sub, path, out);
  }
}

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

std::string unknown_command(const CLI::App& app, const std::string& word) {
  // The groups parsed so far ("lock" of "asnctl lock list"), then the word that is none.
  const CLI::App* group = &app;
  std::string given;
  for (auto subs = app.get_subcommands(); !subs.empty(); subs = subs.front()->get_subcommands()) {
    group = subs.front();
    given += group->get_name() + " ";
  }
  given += word;
  std::vector<std::string> paths;
  command_paths(app, "", paths);
  if (auto best = asn::text::closest(given, paths)) {
    return "unknown command '" + word + "' (did you mean '" + app.get_name() + " " + *best + "'?)";
  }
  std::vector<std::string> here;
  for (const CLI::App* sub : group->get_subcommands([](const CLI::App*) { return true; })) {
    here.push_back(sub->get_name());
  }
  return "unknown command '" + word + "'" + asn::text::did_you_mean(word, here);
}

}  // namespace asnctl
