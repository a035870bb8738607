// asnctl board reset: the one destructive command, so it asks first.
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <iostream>
#include <string>

#include "asn/v1/device.grpc.pb.h"
#include "command.hpp"
#include "errors.hpp"

namespace asnctl {

namespace {

// True for "y" or "yes" in any case, ignoring surrounding blanks.
bool is_yes(std::string answer) {
  auto first = answer.find_first_not_of(" \t\r");
  auto last = answer.find_last_not_of(" \t\r");
  if (first == std::string::npos) return false;
  answer = answer.substr(first, last - first + 1);
  for (char& c : answer) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return answer == "y" || answer == "yes";
}

class BoardReset final : public Command {
 public:
  explicit BoardReset(CLI::App* sub) {
    sub->add_flag("-y,--yes", yes_, "Do not ask; required when stdin is not a terminal");
  }
  void check() override {
    if (!yes_ && isatty(STDIN_FILENO) == 0) {
      throw UsageError(
          "stdin is not a terminal, so asnctl cannot ask; pass --yes to reset without asking");
    }
  }
  int run(Session& s) override {
    auto stub = asn::v1::Device::NewStub(s.connection.channel());
    asn::v1::DeviceInfo info;
    {
      grpc::ClientContext context;
      s.connection.prepare(context);
      s.connection.check(stub->GetInfo(&context, asn::v1::GetInfoRequest{}, &info));
    }
    if (!yes_) {
      std::fprintf(stderr,
                   "Reset board '%s'? Every register and table returns to its reset value; asnd "
                   "then restores its desired state. [y/N] ",
                   info.board_name().c_str());
      std::fflush(stderr);
      std::string answer;
      if (!std::getline(std::cin, answer)) std::fputc('\n', stderr);
      if (!is_yes(answer)) {
        std::fprintf(stderr, "asnctl: board reset not confirmed; nothing was changed\n");
        return kExitFailed;
      }
    }
    grpc::ClientContext context;  // its deadline starts now, not before the question
    s.connection.prepare(context);
    asn::v1::ResetBoardResponse response;
    s.connection.check(stub->ResetBoard(&context, asn::v1::ResetBoardRequest{}, &response));
    if (s.format == OutputFormat::kJson) {
      print_json(response);
    } else {
      std::printf("board '%s' reset: generation %u -> %u\n", info.board_name().c_str(),
                  response.generation_before(), response.generation_after());
    }
    return kExitOk;
  }

 private:
  bool yes_ = false;
};

const Registrar kBoard(40, [](CLI::App& app, CommandSet& commands) {
  auto* board = app.add_subcommand("board", "Board operations");
  board->require_subcommand(1);
  auto* reset = board->add_subcommand(
      "reset", "Reset the board: every register and table returns to its reset value");
  commands.add<BoardReset>(reset, reset);
});

}  // namespace

}  // namespace asnctl
