// The software lock domain (daemon/src/locks/software_domain.*) when its journal cannot be
// written: the operation is refused as UNAVAILABLE naming the journal's directory, with
// nothing changed, and the domain goes on once there is room again.
#include "locks/software_domain.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <string>

#include "error.hpp"

namespace asn {
namespace {

locks::Request request_of(locks::SessionId session, uint64_t i) {
  return {session, "f" + std::to_string(i % 5), locks::Mode::kExclusive,
          std::vector<locks::ByteRange>{{i * 10, 5}}};
}

// In a child process (the file size limit is the process's): 0 when all went as it should,
// else which check failed.
int refuse_when_the_journal_cannot_grow(const std::string& dir) {
  ::signal(SIGXFSZ, SIG_IGN);  // a write past the limit then fails with EFBIG
  SoftwareDomain domain(dir, 4096);
  const locks::SessionId session = domain.open_session("test");
  rlimit unlimited{};
  if (::getrlimit(RLIMIT_FSIZE, &unlimited) != 0) return 10;
  // The first window of the log (4 MiB) is mapped: the next one is what cannot be reserved.
  rlimit limit{locks::FileJournal::kLogWindowBytes, unlimited.rlim_max};
  if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
  uint64_t i = 0;
  locks::Stats before{};
  try {
    for (; i < 1'000'000; ++i) {
      before = domain.stats();
      domain.request(request_of(session, i));
      domain.release(session, "f" + std::to_string(i % 5),
                     std::vector<locks::ByteRange>{{i * 10, 5}});
    }
    return 11;  // never refused
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kUnavailable) return 12;
    const std::string what = e.what();
    if (what.find(dir) == std::string::npos || what.find("nothing changed") == std::string::npos) {
      return 13;
    }
  }
  const locks::Stats after = domain.stats();
  if (after.grants != before.grants || after.releases != before.releases ||
      after.entries_in_use != before.entries_in_use) {
    return 14;
  }
  if (::setrlimit(RLIMIT_FSIZE, &unlimited) != 0) return 10;
  const locks::Outcome outcome = domain.request(request_of(session, i));  // room again
  return outcome.status == locks::Status::kGranted ? 0 : 15;
}

TEST(SoftwareDomainTest, AJournalThatCannotGrowRefusesWithUnavailableAndChangesNothing) {
  const std::string dir = testing::TempDir() + "/software_domain_full";
  std::filesystem::remove_all(dir);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(refuse_when_the_journal_cannot_grow(dir));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "10: rlimit, 11: never refused, 12: not UNAVAILABLE, 13: the message, 14: the refused "
         "operation changed the table, 15: no grant once there was room";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace asn
