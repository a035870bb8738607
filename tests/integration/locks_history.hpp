// The lock torture test's history and its checker (tests/integration/locks_torture_test.cc
// says why the checker is sound). No asnd code: the records are what clients saw, and the
// checker knows nothing else.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace asn::test {

inline constexpr double kNever = std::numeric_limits<double>::infinity();

// ---- the history and its checker (no asnd code) ---------------------------------------------

struct Bytes {
  uint64_t first = 0;  // [first, end)
  uint64_t end = 0;
};

// kLocksLost: asnd told the session (KeepAlive locks_lost) that the switch lost its lock
// table (a board reset): its switch locks end when it learned it.
enum class Kind { kGrant, kRelease, kDowngrade, kSessionEnd, kLocksLost };

struct Record {
  Kind kind = Kind::kGrant;
  int client = 0;
  uint64_t session = 0;
  std::string file;
  std::vector<Bytes> ranges;
  bool exclusive = false;
  uint64_t token = 0;
  double sent = 0;        // grant: the request was sent; release, downgrade: the first attempt was
  double at = 0;          // grant: received; session end: learned gone / closed (kNever: abandoned)
  double last_touch = 0;  // session end: send time of the last call answered OK
  double ttl = 0;         // session end: the lease granted
  bool in_switch = false;  // grant: in the switch's lock table (a board reset loses it)
};

struct Restart {
  double killed = 0;
  double ready = 0;
};

class HistoryChecker {
 public:
  HistoryChecker(double grace) : grace_(grace) {}

  // Every violation, described; empty when the history is consistent.
  std::vector<std::string> check(const std::vector<std::vector<Record>>& clients,
                                 const std::vector<Restart>& restarts) {
    std::vector<std::string> out;
    std::vector<Piece> pieces;
    for (const auto& history : clients) replay(history, restarts, pieces);
    std::map<std::string, std::vector<const Piece*>> by_file;
    for (const Piece& p : pieces) {
      if (p.end > p.start) by_file[p.file].push_back(&p);
    }
    for (auto& [file, list] : by_file) {
      std::sort(list.begin(), list.end(),
                [](const Piece* a, const Piece* b) { return a->start < b->start; });
      for (size_t i = 0; i < list.size(); ++i) {
        for (size_t j = i + 1; j < list.size() && list[j]->start < list[i]->end; ++j) {
          const Piece& a = *list[i];
          const Piece& b = *list[j];
          if (a.session == b.session || (!a.exclusive && !b.exclusive)) continue;
          if (a.first >= b.last_end || b.first >= a.last_end) continue;
          std::ostringstream what;
          what << "conflict on file " << file << ": " << describe(a) << " and " << describe(b)
               << " overlap in bytes and time";
          out.push_back(what.str());
          if (out.size() > 50) return out;
        }
      }
    }
    std::map<std::string, std::vector<const Record*>> grants;
    for (const auto& history : clients) {
      for (const Record& r : history) {
        if (r.kind == Kind::kGrant) grants[r.file].push_back(&r);
      }
    }
    for (auto& [file, list] : grants) {
      // A before B when A was received before B was sent.
      std::sort(list.begin(), list.end(),
                [](const Record* a, const Record* b) { return a->at < b->at; });
      // Sweep B by send time; the highest token of the grants received before it.
      std::vector<const Record*> by_sent = list;
      std::sort(by_sent.begin(), by_sent.end(),
                [](const Record* a, const Record* b) { return a->sent < b->sent; });
      size_t next = 0;
      const Record* highest = nullptr;
      for (const Record* b : by_sent) {
        while (next < list.size() && list[next]->at < b->sent) {
          if (highest == nullptr || list[next]->token > highest->token) highest = list[next];
          ++next;
        }
        if (highest != nullptr && b->token <= highest->token) {
          std::ostringstream what;
          what << "token " << (b->token < highest->token ? "went backwards" : "reused")
               << " on file " << file << ": client " << b->client << " session " << b->session
               << " was granted token " << b->token << " (request sent at " << b->sent
               << ") after client " << highest->client << " session " << highest->session
               << " had received token " << highest->token << " at " << highest->at;
          out.push_back(what.str());
          if (out.size() > 100) return out;
        }
      }
    }
    return out;
  }

  // The earliest moment a session's lease could have run out.
  double lease_end(double last_touch, double ttl, const std::vector<Restart>& restarts) const {
    double end = last_touch + ttl;
    for (const Restart& r : restarts) {
      if (r.killed >= last_touch && r.killed < end) {
        end = std::min(end, r.killed + grace_);
        break;
      }
    }
    return end;
  }

 private:
  struct Piece {
    int client;
    uint64_t session;
    std::string file;
    uint64_t first, last_end;
    bool exclusive;
    uint64_t token;
    double start, end;
  };

  static std::string describe(const Piece& p) {
    std::ostringstream out;
    out << "client " << p.client << " session " << p.session << " "
        << (p.exclusive ? "exclusive" : "shared") << " [" << p.first << ", " << p.last_end
        << ") token " << p.token << " held [" << p.start << ", " << p.end << ")";
    return out.str();
  }

  void replay(const std::vector<Record>& history, const std::vector<Restart>& restarts,
              std::vector<Piece>& out) {
    std::map<uint64_t, double> session_end;
    std::map<uint64_t, std::vector<double>> losses;  // when the session learned, in order
    for (const Record& r : history) {
      if (r.kind == Kind::kSessionEnd) {
        session_end[r.session] = std::min(r.at, lease_end(r.last_touch, r.ttl, restarts));
      }
      if (r.kind == Kind::kLocksLost) losses[r.session].push_back(r.at);
    }
    for (auto& [session, at] : losses) std::sort(at.begin(), at.end());
    std::vector<Piece> open;
    auto close_part = [&](const Record& r, bool downgrade) {
      std::vector<Piece> still;
      for (Piece& p : open) {
        bool touched = false;
        if (p.session == r.session && p.file == r.file && (!downgrade || p.exclusive)) {
          for (const Bytes& b : r.ranges) {
            if (b.first < p.last_end && p.first < b.end) touched = true;
          }
        }
        if (!touched) {
          still.push_back(p);
          continue;
        }
        // Split p into the bytes r names (ended at r.sent) and the rest (still open).
        std::vector<Bytes> rest{{p.first, p.last_end}};
        for (const Bytes& b : r.ranges) {
          std::vector<Bytes> next;
          for (const Bytes& x : rest) {
            if (b.end <= x.first || x.end <= b.first) {
              next.push_back(x);
              continue;
            }
            if (x.first < b.first) next.push_back({x.first, b.first});
            if (b.end < x.end) next.push_back({b.end, x.end});
            Piece ended = p;
            ended.first = std::max(x.first, b.first);
            ended.last_end = std::min(x.end, b.end);
            ended.end = std::min(p.end, r.sent);
            out.push_back(ended);
            if (downgrade) {
              Piece shared = ended;
              shared.exclusive = false;
              shared.end = p.end;  // held (at least shared) on
              still.push_back(shared);
            }
          }
          rest = std::move(next);
        }
        for (const Bytes& x : rest) {
          Piece kept = p;
          kept.first = x.first;
          kept.last_end = x.end;
          still.push_back(kept);
        }
      }
      open = std::move(still);
    };
    for (const Record& r : history) {
      switch (r.kind) {
        case Kind::kGrant: {
          auto it = session_end.find(r.session);
          double end = it == session_end.end() ? kNever : it->second;
          // A switch lock received before the session learned of a loss may be one the
          // switch lost: it ends then (the first loss learned after its receipt).
          if (auto l = losses.find(r.session); r.in_switch && l != losses.end()) {
            auto first = std::lower_bound(l->second.begin(), l->second.end(), r.at);
            if (first != l->second.end()) end = std::min(end, *first);
          }
          for (const Bytes& b : r.ranges) {
            open.push_back(
                {r.client, r.session, r.file, b.first, b.end, r.exclusive, r.token, r.at, end});
          }
          break;
        }
        case Kind::kRelease:
          close_part(r, false);
          break;
        case Kind::kDowngrade:
          close_part(r, true);
          break;
        case Kind::kSessionEnd:
        case Kind::kLocksLost:
          break;
      }
    }
    out.insert(out.end(), open.begin(), open.end());
  }

  double grace_;
};

}  // namespace asn::test
