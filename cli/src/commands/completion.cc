// asnctl completion bash|zsh: the shell completion script, written from the command table
// (completion.hpp). It needs no asnd.
#include "completion.hpp"

#include <cstdio>
#include <string>

#include "command.hpp"
#include "errors.hpp"

namespace asnctl {

namespace {

class Completion final : public Command {
 public:
  Completion(CLI::App* sub, const CLI::App& root) : root_(root) {
    sub->add_option("SHELL", shell_, "bash or zsh")->required();
  }
  void check() override {
    script_ = completion_script(root_, shell_);
    if (!script_) {
      std::string shells;
      for (const auto& shell : completion_shells()) shells += (shells.empty() ? "" : ", ") + shell;
      throw UsageError("SHELL: no completion for '" + shell_ + "'; accepted: " + shells);
    }
  }
  int run(Session&) override {
    std::fputs(script_->c_str(), stdout);
    return kExitOk;
  }

 private:
  const CLI::App& root_;
  std::string shell_;
  std::optional<std::string> script_;
};

const Registrar kCompletion(90, [](CLI::App& app, CommandSet& commands) {
  auto* completion = app.add_subcommand(
      "completion", "Print the shell completion script: bash or zsh (docs/asnctl.md says where)");
  commands.add<Completion>(completion, completion, app);
});

}  // namespace

}  // namespace asnctl
