// FabricSession: a file's calls routed to the switch that owns its slot (asn/client/fabric.hpp).
#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "asn/client/fabric.hpp"
#include "asn/fabric_spec/lock_slot.hpp"

namespace asn::client {

namespace {

// A redirect names the owner; a map in motion may send a call on a few times, never in a loop.
constexpr int kMaxRedirects = 8;

}  // namespace

struct FabricSession::Impl {
  std::vector<std::string> endpoints;
  ClientOptions options;
  std::chrono::seconds ttl{0};
  std::string name;

  struct Member {
    LockClient client;
    std::optional<Session> session;
  };
  mutable std::mutex mutex;
  std::map<std::string, Member> members;        // by endpoint; never erased before close
  std::map<std::uint32_t, std::string> owners;  // slot -> endpoint, learnt from redirects
  bool closed = false;

  std::string route(std::uint32_t slot) const {
    auto it = owners.find(slot);
    return it != owners.end() ? it->second : endpoints[slot % endpoints.size()];
  }

  // The session at `endpoint`, opened on first use; throws SessionLost when any switch's is.
  Session& session_at(std::string_view call, const std::string& endpoint) {
    std::lock_guard lock(mutex);
    if (closed) throw Error(call, StatusCode::kFailedPrecondition, "the session was closed");
    for (const auto& [at, member] : members) {
      if (member.session && member.session->lost()) {
        throw SessionLost(call, StatusCode::kFailedPrecondition,
                          "the session at " + at +
                              " is lost, and its locks there are gone: open a new FabricSession");
      }
    }
    auto it = members.find(endpoint);
    if (it == members.end()) {
      it = members.emplace(endpoint, Member{LockClient(endpoint, options), std::nullopt}).first;
    }
    if (!it->second.session) it->second.session.emplace(it->second.client.open_session(ttl, name));
    return *it->second.session;
  }

  // Runs `body` at the file's owner, following redirects.
  template <class Body>
  auto at_owner(std::string_view call, std::string_view file, Body&& body) {
    const std::uint32_t slot = fabric::lock_slot(file);
    for (int redirects = 0;; ++redirects) {
      std::string endpoint;
      {
        std::lock_guard lock(mutex);
        endpoint = route(slot);
      }
      Session& session = session_at(call, endpoint);
      try {
        return body(session);
      } catch (const Moved& moved) {
        if (redirects >= kMaxRedirects) throw;
        std::lock_guard lock(mutex);
        owners[slot] = moved.owner();
      }
    }
  }
};

FabricLockClient::FabricLockClient(std::vector<std::string> endpoints, ClientOptions options)
    : endpoints_(std::move(endpoints)), options_(std::move(options)) {
  if (endpoints_.empty()) {
    throw Error("CONNECT", StatusCode::kInvalidArgument,
                "a fabric needs at least one asnd endpoint");
  }
}

FabricSession FabricLockClient::open_session(std::chrono::seconds ttl, std::string name) {
  auto impl = std::make_shared<FabricSession::Impl>();
  impl->endpoints = endpoints_;
  impl->options = options_;
  impl->ttl = ttl;
  impl->name = std::move(name);
  return FabricSession(std::move(impl));
}

FabricSession::FabricSession(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
FabricSession::FabricSession(FabricSession&&) noexcept = default;
FabricSession& FabricSession::operator=(FabricSession&&) noexcept = default;
FabricSession::~FabricSession() {
  if (impl_) close();
}

Grant FabricSession::lock(std::string_view file, const Ranges& ranges, Mode mode, Deadline deadline,
                          std::stop_token stop) {
  auto backoff = impl_->options.initial_backoff;
  for (;;) {
    try {
      return impl_->at_owner(
          "LOCK", file, [&](Session& s) { return s.lock(file, ranges, mode, deadline, stop); });
    } catch (const Error& e) {
      // A takeover's grace or a fenced switch: wait, within the deadline, as for a holder.
      if (e.code() != StatusCode::kUnavailable || stop.stop_requested() ||
          (!deadline.is_never() && std::chrono::steady_clock::now() + backoff >= deadline.at())) {
        throw;
      }
      std::this_thread::sleep_for(backoff);
      backoff = std::min(backoff * 2, impl_->options.max_backoff);
    }
  }
}

Grant FabricSession::try_lock(std::string_view file, const Ranges& ranges, Mode mode) {
  return impl_->at_owner("TRY_LOCK", file,
                         [&](Session& s) { return s.try_lock(file, ranges, mode); });
}

UnlockResult FabricSession::unlock(std::string_view file, const Ranges& ranges) {
  return impl_->at_owner("UNLOCK", file, [&](Session& s) { return s.unlock(file, ranges); });
}

UnlockResult FabricSession::downgrade(std::string_view file, const Ranges& ranges) {
  return impl_->at_owner("DOWNGRADE", file, [&](Session& s) { return s.downgrade(file, ranges); });
}

void FabricSession::close() {
  std::map<std::string, Impl::Member> members;
  {
    std::lock_guard lock(impl_->mutex);
    if (impl_->closed) return;
    impl_->closed = true;
    members.swap(impl_->members);
  }
  for (auto& [endpoint, member] : members) {
    if (member.session) member.session->close();
  }
}

bool FabricSession::lost() const {
  std::lock_guard lock(impl_->mutex);
  return std::any_of(impl_->members.begin(), impl_->members.end(),
                     [](const auto& m) { return m.second.session && m.second.session->lost(); });
}

std::string FabricSession::owner_of(std::string_view file) const {
  std::lock_guard lock(impl_->mutex);
  return impl_->route(fabric::lock_slot(file));
}

}  // namespace asn::client
