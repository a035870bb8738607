#include "locks/software_domain.hpp"

#include <fmt/format.h>

#include <system_error>

#include "error.hpp"

namespace asn {

// Runs a change of the table: a journal that cannot be written (the disk is full, the file
// cannot grow) refuses it with nothing changed, and that is UNAVAILABLE, not asnd's bug.
template <typename Change>
auto SoftwareDomain::logged(Change&& change) -> decltype(change()) {
  try {
    return change();
  } catch (const std::system_error& e) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("the software lock domain's journal in {} cannot be written ({}): "
                            "nothing changed; free space there and try again",
                            directory_, e.what()));
  }
}

SoftwareDomain::SoftwareDomain(const std::string& directory, size_t capacity)
    : directory_(directory) {
  try {
    journal_ = std::make_unique<locks::FileJournal>(directory);
    table_ =
        std::make_unique<locks::DurableTable>(*journal_, locks::TableLimits{.capacity = capacity});
  } catch (const locks::LockError& e) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("the software lock domain's journal in {} cannot be read: {}",
                            directory, e.what()));
  } catch (const std::system_error& e) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("the software lock domain's journal in {}: {}", directory, e.what()));
  }
}

SoftwareDomain::~SoftwareDomain() = default;

locks::SessionId SoftwareDomain::open_session(std::string_view label) {
  return logged([&] { return table_->open_session(label); });
}

locks::Token SoftwareDomain::raise_token_floor(locks::Token floor) {
  return logged([&] { return table_->raise_token_floor(floor); });
}

locks::Outcome SoftwareDomain::request(const locks::Request& request) {
  return logged([&] { return table_->request(request); });
}

locks::Change SoftwareDomain::release(locks::SessionId session, std::string_view file,
                                      const locks::RangeSpec& ranges) {
  return logged([&] { return table_->release(session, file, ranges); });
}

locks::Change SoftwareDomain::downgrade(locks::SessionId session, std::string_view file,
                                        const locks::RangeSpec& ranges) {
  return logged([&] { return table_->downgrade(session, file, ranges); });
}

locks::Change SoftwareDomain::cancel(locks::RequestId request) {
  return logged([&] { return table_->cancel(request); });
}

locks::Change SoftwareDomain::withdraw(std::span<const locks::RequestId> requests) {
  return logged([&] { return table_->withdraw(requests); });
}

locks::Change SoftwareDomain::expire(locks::SessionId session) {
  return logged([&] { return table_->expire(session); });
}

std::vector<DomainSession> SoftwareDomain::sessions() {
  std::vector<DomainSession> out;
  for (const auto& s : table_->table().sessions()) {
    out.push_back({s.id, s.label, s.held_entries, s.waiting_requests});
  }
  return out;
}

size_t SoftwareDomain::held_entries(locks::SessionId session) {
  const auto info = table_->table().session(session);
  return info ? info->held_entries : 0;
}

std::vector<std::string> SoftwareDomain::files(std::string_view after, size_t limit) {
  return table_->table().files(after, limit);
}

locks::FileLocks SoftwareDomain::list(std::string_view file) { return table_->table().list(file); }

locks::Stats SoftwareDomain::stats() { return table_->table().stats(); }

}  // namespace asn
