// How asnctl's commands are made. Each file under commands/ declares its command group in
// one place: the subcommands with their options (CLI11), the checks that need no asnd
// (usage errors, exit code 2, before any call), and what runs. A Registrar at the end of the
// file adds the group to asnctl, so a new command group is one new file.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "connection.hpp"
#include "output.hpp"

namespace asnctl {

// What a running command has: the connection to asnd and the output format.
struct Session {
  Connection& connection;
  OutputFormat format;
};

// One runnable leaf command (asnctl regs read, asnctl port set, ...).
class Command {
 public:
  virtual ~Command() = default;
  // Checks the command line and builds the request; throws UsageError. asnd is not
  // contacted yet.
  virtual void check() {}
  // Makes the calls, prints, returns the exit code; a failed call throws RpcError.
  virtual int run(Session& session) = 0;
};

// The leaves of the command tree, each bound to the CLI11 subcommand that selects it.
class CommandSet {
 public:
  template <typename C, typename... Args>
  C& add(CLI::App* subcommand, Args&&... args) {
    auto command = std::make_unique<C>(std::forward<Args>(args)...);
    C& ref = *command;
    leaves_.push_back({subcommand, std::move(command)});
    return ref;
  }
  // The leaf the command line selected, or nullptr.
  Command* parsed() const;

 private:
  struct Leaf {
    CLI::App* app;
    std::unique_ptr<Command> command;
  };
  std::vector<Leaf> leaves_;
};

// Declares a command group on asnctl's top-level app. `order` places it in --help.
using Declare = std::function<void(CLI::App& app, CommandSet& commands)>;

struct Registrar {
  Registrar(int order, Declare declare);
};

// Declares every registered group, in order.
void declare_commands(CLI::App& app, CommandSet& commands);

// "unknown command 'lsit' (did you mean 'asnctl lock list'?)": `word` after the commands
// `app` parsed, held against every command of the table by its words, so that a wrong group
// ("lock list") is caught as well as a misspelt word; without a close one, the commands the
// last parsed group has.
std::string unknown_command(const CLI::App& app, const std::string& word);

}  // namespace asnctl
