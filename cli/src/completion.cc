#include "completion.hpp"

#include <algorithm>
#include <set>

namespace asnctl {

namespace {

// The table both shells' scripts read, as two shell functions:
//   _asnctl_words COMMAND   the words that may follow COMMAND ("" for asnctl itself, "lock"
//                           or "locks" for the lock group, ...): its commands, their aliases
//                           and its options; "@files" when a positional takes a path.
//                           Fails for a COMMAND that is none.
//   _asnctl_option OPTION   "file" when OPTION takes a path, "value" when it takes another
//                           value, nothing for a flag.
// Written in the shell language bash and zsh share, so that both read one table.
struct Table {
  std::string words;  // the case arms of _asnctl_words
  std::set<std::string> path_options, value_options;
};

bool takes_path(const CLI::Option& option) {
  const std::string type = option.get_type_name();
  return type == "PATH" || type == "FILE" || type == "DIR";
}

// "--output -o" of an option, as a command line spells it.
std::vector<std::string> spellings(const CLI::Option& option) {
  std::vector<std::string> out;
  for (const auto& name : option.get_lnames()) out.push_back("--" + name);
  for (const auto& name : option.get_snames()) out.push_back("-" + name);
  return out;
}

std::vector<const CLI::App*> subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
}

std::vector<const CLI::Option*> visible_options(const CLI::App& app) {
  return app.get_options([](const CLI::Option* option) { return !option->get_group().empty(); });
}

// Adds `app` (spelt every way in `paths`) and every command below it to `table`. A command
// with no subcommands also offers asnctl's own options, which it takes too (fallthrough).
void add(const CLI::App& app, const std::vector<std::string>& paths,
         const std::vector<std::string>& global, Table& table) {
  std::vector<std::string> words;
  const auto subs = subcommands(app);
  for (const CLI::App* sub : subs) {
    std::vector<std::string> names = {sub->get_name()};
    names.insert(names.end(), sub->get_aliases().begin(), sub->get_aliases().end());
    words.insert(words.end(), names.begin(), names.end());
    std::vector<std::string> sub_paths;
    for (const auto& path : paths) {
      for (const auto& name : names) sub_paths.push_back(path.empty() ? name : path + " " + name);
    }
    add(*sub, sub_paths, global, table);
  }
  for (const CLI::Option* option : visible_options(app)) {
    if (option->get_positional()) {
      if (takes_path(*option)) words.push_back("@files");
      continue;
    }
    for (const auto& spelling : spellings(*option)) {
      words.push_back(spelling);
      if (option->get_expected_max() == 0) continue;  // a flag
      (takes_path(*option) ? table.path_options : table.value_options).insert(spelling);
    }
  }
  if (subs.empty()) {
    for (const auto& word : global) {
      if (std::find(words.begin(), words.end(), word) == words.end()) words.push_back(word);
    }
  }
  std::string patterns;
  for (const auto& path : paths) patterns += (patterns.empty() ? "'" : "|'") + path + "'";
  std::string list;
  for (const auto& word : words) list += (list.empty() ? "" : " ") + word;
  table.words += "    " + patterns + ") printf '%s\\n' '" + list + "' ;;\n";
}

std::string joined(const std::set<std::string>& words, const char* separator) {
  std::string out;
  for (const auto& word : words) out += (out.empty() ? "" : separator) + word;
  return out;
}

std::string table_functions(const CLI::App& app) {
  std::vector<std::string> global;
  for (const CLI::Option* option : visible_options(app)) {
    if (option == app.get_help_ptr() || option->get_lnames() == std::vector<std::string>{"version"})
      continue;
    for (const auto& spelling : spellings(*option)) global.push_back(spelling);
  }
  Table table;
  add(app, {""}, global, table);
  std::string out =
      "_asnctl_words() {\n"
      "  case \"$1\" in\n" +
      table.words +
      "    *) return 1 ;;\n"
      "  esac\n"
      "}\n"
      "\n"
      "_asnctl_option() {\n"
      "  case \"$1\" in\n";
  if (!table.path_options.empty()) {
    out += "    " + joined(table.path_options, "|") + ") printf file ;;\n";
  }
  if (!table.value_options.empty()) {
    out += "    " + joined(table.value_options, "|") + ") printf value ;;\n";
  }
  return out +
         "  esac\n"
         "}\n";
}

// Both drivers walk the words before the cursor the same way: an option's value is skipped,
// a word that extends the command so far is taken into it, anything else (a positional) is
// passed over.
constexpr const char* kBashDriver = R"(
_asnctl() {
  local cur=${COMP_WORDS[COMP_CWORD]} command= word kind words i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    case $word in
      -*=*) ;;
      -*) [[ -n $(_asnctl_option "$word") ]] && i=$((i + 1)) ;;
      *)
        if _asnctl_words "${command:+$command }$word" >/dev/null; then
          command=${command:+$command }$word
        fi
        ;;
    esac
  done
  kind=$(_asnctl_option "${COMP_WORDS[COMP_CWORD - 1]}")
  if ((COMP_CWORD > 1)) && [[ $kind == file ]]; then
    COMPREPLY=($(compgen -f -- "$cur"))
    return
  fi
  ((COMP_CWORD > 1)) && [[ $kind == value ]] && return
  words=$(_asnctl_words "$command")
  COMPREPLY=($(compgen -W "${words//@files/}" -- "$cur"))
  if [[ " $words " == *" @files "* && $cur != -* ]]; then
    COMPREPLY+=($(compgen -f -- "$cur"))
  fi
}

complete -F _asnctl asnctl
)";

constexpr const char* kZshDriver = R"(
_asnctl() {
  local command= word kind i
  local -a choices
  for ((i = 2; i < CURRENT; i++)); do
    word=${words[i]}
    case $word in
      -*=*) ;;
      -*) [[ -n $(_asnctl_option "$word") ]] && i=$((i + 1)) ;;
      *)
        if _asnctl_words "${command:+$command }$word" >/dev/null; then
          command=${command:+$command }$word
        fi
        ;;
    esac
  done
  kind=$(_asnctl_option "${words[CURRENT - 1]}")
  if ((CURRENT > 2)) && [[ $kind == file ]]; then
    _files
    return
  fi
  ((CURRENT > 2)) && [[ $kind == value ]] && return 1
  choices=(${=$(_asnctl_words "$command")})
  if ((${choices[(I)@files]})); then
    choices=(${choices:#@files})
    [[ $PREFIX != -* ]] && _files
  fi
  compadd -a choices
}

_asnctl "$@"
)";

}  // namespace

const std::vector<std::string>& completion_shells() {
  static const std::vector<std::string> shells = {"bash", "zsh"};
  return shells;
}

std::optional<std::string> completion_script(const CLI::App& app, const std::string& shell) {
  const std::string origin = "# " + shell +
                             " completion of asnctl, written by 'asnctl completion " + shell +
                             "' from the\n# command table asnctl parses its command lines with.\n";
  if (shell == "bash") return origin + "\n" + table_functions(app) + kBashDriver;
  // zsh loads a #compdef file as the body of _asnctl: it defines the functions, then the
  // last line calls the _asnctl it just defined.
  if (shell == "zsh")
    return "#compdef asnctl\n" + origin + "\n" + table_functions(app) + kZshDriver;
  return std::nullopt;
}

}  // namespace asnctl
