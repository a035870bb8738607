// asnctl: the operator CLI of asnd. Every command is one or a few gRPC calls to asnd; each
// command group lives in its own file under commands/ and registers itself (command.hpp).
// See docs/asnctl.md for the commands, their output and the exit codes.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "asn/version.hpp"
#include "command.hpp"
#include "connection.hpp"
#include "errors.hpp"
#include "parse.hpp"

namespace {

using asnctl::kExitFailed;
using asnctl::kExitUnreachable;
using asnctl::kExitUsage;

constexpr const char* kFooter =
    "Global options (--socket, --address, --tls-*, -o/--output, -j, --timeout) may come before\n"
    "or after the subcommand.\n"
    "\n"
    "Exit codes:\n"
    "  0  success\n"
    "  1  asnd refused or failed the request ('asnctl: CODE_NAME: message'), a register\n"
    "     item failed, or a board reset was not confirmed\n"
    "  2  usage error: bad command line or value; asnd was not contacted\n"
    "  3  cannot reach asnd: not running, wrong --socket/--address, or no access to the socket";

// "asnctl regs write": the command as far as it was given.
std::string command_path(const CLI::App* app) {
  std::string command = app->get_name();
  for (auto subs = app->get_subcommands(); !subs.empty(); subs = subs.front()->get_subcommands()) {
    command += " " + subs.front()->get_name();
  }
  return command;
}

// A usage error: "asnctl regs write: <what is wrong>" and where to find help. Exit code 2.
std::string usage_message(const CLI::App* app, const std::string& what) {
  std::string command = command_path(app);
  return command + ": " + what + "\nRun '" + command + " --help' for more information.\n";
}

int report_unreachable(const asnctl::Connection& connection, const asnctl::RpcError& e) {
  std::string message = e.status().error_message();
  if (e.status().error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) {
    message = "no connection within " + asnctl::strprintf("%g", connection.timeout_seconds()) +
              " s (" + message + ")";
  }
  std::fprintf(stderr, "asnctl: cannot reach asnd at %s: %s\n", connection.target().c_str(),
               message.c_str());
  if (message.find("Permission denied") != std::string::npos) {
    std::fprintf(stderr,
                 "hint: the socket is not open to you: run as root, or join the group that owns "
                 "it (listen.socket_group in /etc/asn/asnd.yaml)\n");
  } else if (connection.over_tls()) {
    std::fprintf(stderr,
                 "hint: over TLS: --tls-ca must name the CA that signed asnd's certificate (whose "
                 "name or address must match %s), and asnd takes only a client certificate "
                 "(--tls-cert, --tls-key) signed by its listen.tls.client_ca; asnd's log says "
                 "why a handshake failed\n",
                 connection.target().c_str());
  } else if (connection.over_tcp()) {
    std::fprintf(stderr,
                 "hint: is asnd running with a TCP listener? start it with 'asnd --tcp %s' or "
                 "set listen.tcp in /etc/asn/asnd.yaml; if it serves TLS (listen.tls), give "
                 "--tls-ca, --tls-cert and --tls-key\n",
                 connection.target().c_str());
  } else {
    std::fprintf(stderr,
                 "hint: is asnd running? start it with 'systemctl start asnd' or "
                 "'asnd --socket PATH'\n");
  }
  return kExitUnreachable;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"asnctl: operator CLI of asnd, the asn switch daemon", "asnctl"};
  app.fallthrough();  // global options are also accepted after the subcommand
  app.require_subcommand(1);
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    // CLI11 says "A subcommand is required" for a misspelt one too: name it instead.
    std::vector<std::string> extra = a->remaining();
    if (e.get_name() == "RequiredError" && !extra.empty()) {
      return usage_message(a, asnctl::unknown_command(*a, extra.front()));
    }
    return usage_message(a, e.what());
  });
  app.footer(kFooter);
  app.set_version_flag("--version", "asnctl " + std::string(asn::kVersion));

  asnctl::GlobalOptions global;
  if (const char* env = std::getenv("ASN_SOCKET"); env != nullptr && *env != '\0') {
    global.socket_path = env;
  }
  auto* socket_opt = app.add_option("--socket", global.socket_path,
                                    "asnd's Unix socket (default: $ASN_SOCKET, else "
                                    "/run/asn/asnd.sock)")
                         ->type_name("PATH");
  auto* address_opt =
      app.add_option("--address", global.address, "Reach asnd over TCP instead of the socket")
          ->type_name("HOST:PORT");
  app.add_option("--tls-ca", global.tls_ca,
                 "With --address: TLS, trusting asnd's certificate if this CA signed it "
                 "(default: $ASNCTL_TLS_CA; without it, the system's CAs)")
      ->type_name("PATH");
  app.add_option("--tls-cert", global.tls_cert,
                 "With --address: TLS, with this client certificate (default: $ASNCTL_TLS_CERT)")
      ->type_name("PATH");
  app.add_option("--tls-key", global.tls_key,
                 "The private key of --tls-cert (default: $ASNCTL_TLS_KEY)")
      ->type_name("PATH");
  auto* output_opt =
      app.add_option("-o,--output", global.output, "Output format: table (default) or json")
          ->check(CLI::IsMember({"table", "json"}).description(""))
          ->type_name("FORMAT");
  bool json_flag = false;
  app.add_flag("-j", json_flag, "Short for -o json (as ip -j)");
  app.add_option("--timeout", global.timeout_seconds,
                 "Deadline of each call to asnd, in seconds (default 10)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            char* end = nullptr;
            double seconds = std::strtod(text.c_str(), &end);
            if (text.empty() || *end != '\0' || !(seconds >= 0.001 && seconds <= 86400)) {
              return "expected seconds from 0.001 to 86400, not '" + text + "'";
            }
            return "";
          },
          ""))
      ->type_name("SECONDS");

  // Every command group (commands/*.cc) declares its subcommands here.
  asnctl::CommandSet commands;
  asnctl::declare_commands(app, commands);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }

  // Everything that can be checked without asnd is checked before contacting it.
  asnctl::Command* command = commands.parsed();
  try {
    if (socket_opt->count() > 0 && address_opt->count() > 0) {
      throw asnctl::UsageError("--socket and --address exclude each other: give one");
    }
    if (address_opt->count() > 0 && global.address.empty()) {
      throw asnctl::UsageError("--address: an empty address; expected HOST:PORT");
    }
    if (global.address.empty() && global.socket_path.empty()) {
      throw asnctl::UsageError("--socket: an empty path");
    }
    // $ASNCTL_TLS_* apply to TCP only: set in a profile, they must not break the socket.
    if (!global.address.empty()) {
      for (auto [name, value] : {std::pair{"ASNCTL_TLS_CA", &global.tls_ca},
                                 std::pair{"ASNCTL_TLS_CERT", &global.tls_cert},
                                 std::pair{"ASNCTL_TLS_KEY", &global.tls_key}}) {
        const char* env = std::getenv(name);
        if (value->empty() && env != nullptr && *env != '\0') *value = env;
      }
    }
    if (json_flag) {
      if (output_opt->count() > 0 && global.output != "json") {
        throw asnctl::UsageError("-j is -o json, and -o " + global.output +
                                 " was given too: give one");
      }
      global.output = "json";
    }
    asnctl::check_tls_options(global);
    if (command == nullptr) throw asnctl::UsageError("no command given");
    command->check();
  } catch (const asnctl::UsageError& e) {
    std::fputs(usage_message(&app, e.what()).c_str(), stderr);
    return kExitUsage;
  }

  auto format =
      global.output == "json" ? asnctl::OutputFormat::kJson : asnctl::OutputFormat::kTable;
  asnctl::Connection connection(global);
  asnctl::Session session{connection, format};
  try {
    return command->run(session);
  } catch (const asnctl::RpcError& e) {
    if (e.unreachable()) return report_unreachable(connection, e);
    std::string message = e.status().error_message();
    if (e.status().error_code() == grpc::StatusCode::UNIMPLEMENTED) {
      // gRPC's own answer for a method the server does not have ("Method not found!"); asnd
      // never answers UNIMPLEMENTED itself.
      message = "the server at " + connection.target() +
                " does not know this call: it is not asnd, or an asnd of another version than "
                "this asnctl (" +
                std::string(asn::kVersion) + "); `asnctl version` shows both (" + message + ")";
    } else if (e.status().error_code() == grpc::StatusCode::DEADLINE_EXCEEDED &&
               e.status().error_message() == "Deadline Exceeded") {
      // gRPC's own text: the call's deadline (--timeout) ran out. asnd's own
      // DEADLINE_EXCEEDED (a swap that did not come, a wait that ran out) keeps its message.
      message = "asnd did not answer within " +
                asnctl::strprintf("%g", connection.timeout_seconds()) + " s (--timeout)";
    }
    std::fprintf(stderr, "asnctl: %s: %s\n", asnctl::code_name(e.status().error_code()).data(),
                 message.c_str());
    return kExitFailed;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "asnctl: %s\n", e.what());
    return kExitFailed;
  }
}
