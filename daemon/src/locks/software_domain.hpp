// The software lock domain (issue 9, part 2): a lock table in asnd for files that do not fit
// in the switch's, with the same semantics (it is the same asn::locks::LockTable). It is kept
// in the state directory as a checkpoint and a log of every operation (asn::locks::
// DurableTable over a FileJournal), each operation logged before its result is returned, so
// its grants survive an asnd restart, kill -9 included: the log is stored through a shared
// mapping of its file and lives in the page cache when asnd dies. A host crash can lose its tail,
// which is why the LockManager forgets lock state from another boot (lock_manager.cc).
#pragma once

#include <memory>
#include <string>

#include "asn/locks/durable.hpp"
#include "locks/lock_domain.hpp"

namespace asn {

class SoftwareDomain final : public LockDomain {
 public:
  // Restores the table from `directory` (created if missing). Throws asn::Error when the
  // directory cannot be used or its journal is damaged.
  SoftwareDomain(const std::string& directory, size_t capacity);
  ~SoftwareDomain() override;

  std::string_view name() const override { return "software"; }
  locks::SessionId open_session(std::string_view label) override;
  locks::Outcome request(const locks::Request& request) override;
  locks::Change release(locks::SessionId session, std::string_view file,
                        const locks::RangeSpec& ranges) override;
  locks::Change downgrade(locks::SessionId session, std::string_view file,
                          const locks::RangeSpec& ranges) override;
  locks::Change cancel(locks::RequestId request) override;
  locks::Change withdraw(std::span<const locks::RequestId> requests) override;
  locks::Change expire(locks::SessionId session) override;
  locks::Token raise_token_floor(locks::Token floor) override;
  std::vector<DomainSession> sessions() override;
  size_t held_entries(locks::SessionId session) override;
  std::vector<std::string> files(std::string_view after, size_t limit) override;
  locks::FileLocks list(std::string_view file) override;
  locks::Stats stats() override;

 private:
  template <typename Change>
  auto logged(Change&& change) -> decltype(change());

  std::string directory_;
  std::unique_ptr<locks::JournalMedium> journal_;
  std::unique_ptr<locks::DurableTable> table_;
};

}  // namespace asn
