// Shell completion for asnctl, written from the command table that parses its command lines
// (the CLI11 app every commands/*.cc declares into): a command, an alias or an option added
// there is completed with no change here. `asnctl completion bash|zsh` prints it; the
// package installs what the built asnctl printed (cli/CMakeLists.txt).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace asnctl {

// The shells a script is written for, in the order an error names them.
const std::vector<std::string>& completion_shells();

// The script that makes `shell` complete the commands of `app` (asnctl's root), or nullopt
// for a shell not in completion_shells().
std::optional<std::string> completion_script(const CLI::App& app, const std::string& shell);

}  // namespace asnctl
