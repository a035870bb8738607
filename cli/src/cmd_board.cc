// asnctl board reset: the one destructive command, so it asks first.
#include <cctype>
#include <cstdio>
#include <iostream>
#include <string>

#include "commands.hpp"
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

}  // namespace

int run_board_reset(Connection& connection, OutputFormat format, bool confirmed) {
  asn::v1::DeviceInfo info;
  {
    grpc::ClientContext context;
    connection.prepare(context);
    connection.check(connection.device().GetInfo(&context, asn::v1::GetInfoRequest{}, &info));
  }
  if (!confirmed) {
    std::fprintf(stderr,
                 "Reset board '%s'? Every register and table returns to its reset value. [y/N] ",
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
  connection.prepare(context);
  asn::v1::ResetBoardResponse response;
  connection.check(
      connection.device().ResetBoard(&context, asn::v1::ResetBoardRequest{}, &response));
  if (format == OutputFormat::kJson) {
    print_json(response);
  } else {
    std::printf("board '%s' reset: generation %u -> %u\n", info.board_name().c_str(),
                response.generation_before(), response.generation_after());
  }
  return kExitOk;
}

}  // namespace asnctl
