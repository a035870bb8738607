// A randomized run of the lock table (lib/locks) against a brute-force model written apart
// from it: many sessions lock (list, strided, try or wait), unlock, downgrade, cancel and
// expire on a small file space, with a small capacity. After every step the table's answer,
// its grants (which, in what order), its held locks and waiters must be the model's, no two
// conflicting locks may be held, and a file's tokens never go backwards.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>

#include "asn/locks/lock_table.hpp"

namespace asn::locks {
namespace {

using Ranges = std::vector<ByteRange>;

constexpr size_t kCapacity = 32;
constexpr uint64_t kSpace = 64;  // offsets drawn below this; ranges may reach a little past

struct ModelLock {
  SessionId session = 0;
  RequestId request = 0;
  Mode mode = Mode::kShared;
  Token token = 0;
  std::string file;
  uint64_t first = 0;  // inclusive
  uint64_t last = 0;   // inclusive
};

struct ModelWaiter {
  RequestId id = 0;
  SessionId session = 0;
  std::string file;
  Mode mode = Mode::kShared;
  Ranges ranges;  // offset order
};

bool clash(SessionId s1, Mode m1, SessionId s2, Mode m2) {
  return s1 != s2 && (m1 == Mode::kExclusive || m2 == Mode::kExclusive);
}

bool touches(const ByteRange& r, uint64_t first, uint64_t last) {
  return r.offset <= last && first <= r.last();
}

// The rules, by brute force over the bytes of a small space.
class Model {
 public:
  std::set<SessionId> open;
  std::vector<ModelLock> held;
  std::vector<ModelWaiter> waiting;  // FIFO
  std::map<std::string, Token> last_token;

  size_t entries() const {
    size_t n = held.size();
    for (const ModelWaiter& w : waiting) n += w.ranges.size();
    return n;
  }

  // Whether a request conflicts with a held lock or with the waiters before `end`.
  bool blocked(SessionId s, const std::string& file, Mode mode, const Ranges& ranges,
               size_t end) const {
    for (const ByteRange& r : ranges) {
      for (const ModelLock& l : held) {
        if (l.file == file && touches(r, l.first, l.last) && clash(s, mode, l.session, l.mode)) {
          return true;
        }
      }
      for (size_t i = 0; i < end; ++i) {
        const ModelWaiter& w = waiting[i];
        if (w.file != file || !clash(s, mode, w.session, w.mode)) continue;
        for (const ByteRange& q : w.ranges) {
          if (touches(r, q.offset, q.last())) return true;
        }
      }
    }
    return false;
  }

  void hold(const ModelWaiter& w, Token token) {
    for (const ByteRange& r : w.ranges) {
      held.push_back({w.session, w.id, w.mode, token, w.file, r.offset, r.last()});
    }
  }

  // Every waiter that can go, in FIFO order, sorted as the table issues them.
  std::vector<ModelWaiter> pump() {
    std::vector<ModelWaiter> granted;
    for (size_t i = 0; i < waiting.size();) {
      const ModelWaiter& w = waiting[i];
      if (blocked(w.session, w.file, w.mode, w.ranges, i)) {
        ++i;
        continue;
      }
      hold(w, 0);
      granted.push_back(w);
      waiting.erase(waiting.begin() + static_cast<long>(i));
    }
    std::sort(granted.begin(), granted.end(), [](const ModelWaiter& a, const ModelWaiter& b) {
      if (a.file != b.file) return a.file < b.file;
      if (a.ranges[0].offset != b.ranges[0].offset) return a.ranges[0].offset < b.ranges[0].offset;
      return a.id < b.id;
    });
    return granted;
  }

  // What is left of `l` (runs of equal mode) once `ranges` are released or made shared.
  static std::vector<ModelLock> carve(const ModelLock& l, const Ranges& ranges, bool downgrade) {
    std::vector<ModelLock> out;
    for (uint64_t b = l.first; b <= l.last; ++b) {
      bool inside = std::any_of(ranges.begin(), ranges.end(),
                                [&](const ByteRange& r) { return touches(r, b, b); });
      if (inside && !downgrade) continue;
      Mode mode = inside ? Mode::kShared : l.mode;
      if (!out.empty() && out.back().last + 1 == b && out.back().mode == mode) {
        out.back().last = b;
      } else {
        ModelLock piece = l;
        piece.first = piece.last = b;
        piece.mode = mode;
        out.push_back(piece);
      }
    }
    return out;
  }

  bool covers(SessionId s, const std::string& file, const Ranges& ranges, bool exclusive) const {
    for (const ByteRange& r : ranges) {
      for (uint64_t b = r.offset; b <= r.last(); ++b) {
        bool mine = std::any_of(held.begin(), held.end(), [&](const ModelLock& l) {
          return l.session == s && l.file == file && l.first <= b && b <= l.last &&
                 (!exclusive || l.mode == Mode::kExclusive);
        });
        if (!mine) return false;
      }
    }
    return true;
  }
};

bool valid(const Ranges& ranges) {
  for (size_t i = 0; i < ranges.size(); ++i) {
    if (ranges[i].length == 0) return false;
    for (size_t j = 0; j < i; ++j) {
      if (overlaps(ranges[i], ranges[j])) return false;
    }
  }
  return !ranges.empty();
}

class Walk {
 public:
  explicit Walk(uint32_t seed) : rng_(seed), table_(TableLimits{kCapacity, 8}) {}

  void step();
  void check() const;
  Stats stats() const { return table_.stats(); }
  size_t woken() const { return woken_; }
  size_t split_refused() const { return split_refused_; }

 private:
  uint64_t pick(uint64_t below) {
    return std::uniform_int_distribution<uint64_t>(0, below - 1)(rng_);
  }
  std::string file() { return pick(3) == 0 ? "b" : "a"; }
  SessionId session();
  Ranges ranges(RangeSpec& spec);
  void request();
  void carve(bool downgrade);
  void cancel();
  void expire();
  void expect_grants(const std::vector<Grant>& grants);

  std::mt19937 rng_;
  LockTable table_;
  Model model_;
  std::vector<SessionId> sessions_;  // every session ever opened
  size_t woken_ = 0;                 // waiters granted after a change
  size_t split_refused_ = 0;         // releases and downgrades refused for want of an entry
};

SessionId Walk::session() {
  if (sessions_.empty() || (model_.open.size() < 6 && pick(8) == 0)) {
    SessionId s = table_.open_session();
    sessions_.push_back(s);
    model_.open.insert(s);
  }
  if (pick(20) == 0) return sessions_[pick(sessions_.size())];  // maybe ended
  std::vector<SessionId> open(model_.open.begin(), model_.open.end());
  if (open.empty()) return sessions_.back();
  return open[pick(open.size())];
}

// Random ranges, now and then invalid or strided; `spec` as the table is given them.
Ranges Walk::ranges(RangeSpec& spec) {
  if (pick(5) == 0) {
    Strided s{pick(kSpace), pick(4) + (pick(10) == 0 ? 0 : 1), pick(8) + 1, pick(4) + 1};
    spec = s;
    if (validate(s, 8)) return {};
    return expand(s, 8);
  }
  Ranges out;
  for (uint64_t n = pick(3) + 1; n > 0; --n) {
    out.push_back({pick(kSpace), pick(12) + (pick(30) == 0 ? 0 : 1)});
  }
  spec = out;
  if (!valid(out)) return {};
  std::sort(out.begin(), out.end(),
            [](const ByteRange& a, const ByteRange& b) { return a.offset < b.offset; });
  return out;
}

void Walk::expect_grants(const std::vector<Grant>& grants) {
  std::vector<ModelWaiter> expected = model_.pump();
  woken_ += expected.size();
  ASSERT_EQ(grants.size(), expected.size());
  std::map<RequestId, Token> tokens;
  for (size_t i = 0; i < grants.size(); ++i) {
    ASSERT_EQ(grants[i].request, expected[i].id) << "grant " << i;
    ASSERT_EQ(grants[i].ranges, expected[i].ranges);
    ASSERT_EQ(grants[i].file, expected[i].file);
    ASSERT_GT(grants[i].token, model_.last_token[grants[i].file]) << "token went backwards";
    model_.last_token[grants[i].file] = grants[i].token;
    tokens[grants[i].request] = grants[i].token;
  }
  for (ModelLock& l : model_.held) {
    if (l.token == 0) l.token = tokens.at(l.request);
  }
}

void Walk::request() {
  SessionId s = session();
  Request r{s,
            file(),
            pick(2) ? Mode::kExclusive : Mode::kShared,
            {},
            pick(3) == 0 ? Wait::kTry : Wait::kBlock};
  Ranges sorted = ranges(r.ranges);
  Outcome out = table_.request(r);
  if (!model_.open.contains(s) || sorted.empty()) {
    ASSERT_EQ(out.status, Status::kInvalid);
    return;
  }
  bool blocked = model_.blocked(s, r.file, r.mode, sorted, model_.waiting.size());
  if (blocked && r.wait == Wait::kTry) {
    ASSERT_EQ(out.status, Status::kConflict);
  } else if (model_.entries() + sorted.size() > kCapacity) {
    ASSERT_EQ(out.status, Status::kTableFull);
  } else if (blocked) {
    ASSERT_EQ(out.status, Status::kQueued);
    model_.waiting.push_back({out.request, s, r.file, r.mode, sorted});
  } else {
    ASSERT_EQ(out.status, Status::kGranted);
    ASSERT_EQ(out.grant->ranges, sorted);
    ASSERT_GT(out.grant->token, model_.last_token[r.file]) << "token went backwards";
    model_.last_token[r.file] = out.grant->token;
    model_.hold({out.request, s, r.file, r.mode, sorted}, out.grant->token);
  }
  expect_grants({});
}

void Walk::carve(bool downgrade) {
  SessionId s = session();
  std::string f = file();
  RangeSpec spec;
  Ranges sorted = ranges(spec);
  if (!model_.held.empty() && pick(4) != 0) {  // a lock held, or part of one, mostly
    const ModelLock& l = model_.held[pick(model_.held.size())];
    s = l.session;
    f = l.file;
    sorted = {{l.first, l.last - l.first + 1}};
    if (pick(2) == 0) {
      uint64_t first = l.first + pick(l.last - l.first + 1);
      sorted = {{first, pick(l.last - first + 1) + 1}};
    }
    spec = sorted;
  }
  Change change = downgrade ? table_.downgrade(s, f, spec) : table_.release(s, f, spec);
  bool ok = model_.open.contains(s) && !sorted.empty() && model_.covers(s, f, sorted, downgrade);
  std::vector<ModelLock> kept;
  std::vector<ModelLock> pieces;
  for (const ModelLock& l : model_.held) {
    bool affected = l.session == s && l.file == f && (!downgrade || l.mode == Mode::kExclusive) &&
                    std::any_of(sorted.begin(), sorted.end(),
                                [&](const ByteRange& r) { return touches(r, l.first, l.last); });
    if (!affected) {
      kept.push_back(l);
      continue;
    }
    for (const ModelLock& p : Model::carve(l, sorted, downgrade)) pieces.push_back(p);
  }
  if (ok && kept.size() + pieces.size() > model_.held.size() &&
      model_.entries() + (kept.size() + pieces.size() - model_.held.size()) > kCapacity) {
    ok = false;  // the split needs an entry the table does not have
    ++split_refused_;
  }
  ASSERT_EQ(change.ok(), ok) << (change.error ? change.error->what() : "no error");
  if (!ok) return;
  kept.insert(kept.end(), pieces.begin(), pieces.end());
  model_.held = kept;
  expect_grants(change.granted);
}

void Walk::cancel() {
  RequestId id = model_.waiting.empty() || pick(4) == 0
                     ? pick(200)
                     : model_.waiting[pick(model_.waiting.size())].id;
  Change change = table_.cancel(id);
  auto it = std::find_if(model_.waiting.begin(), model_.waiting.end(),
                         [&](const ModelWaiter& w) { return w.id == id; });
  ASSERT_EQ(change.ok(), it != model_.waiting.end());
  if (it == model_.waiting.end()) return;
  model_.waiting.erase(it);
  ASSERT_EQ(change.cancelled, (std::vector<RequestId>{id}));
  expect_grants(change.granted);
}

void Walk::expire() {
  SessionId s = session();
  Change change = table_.expire(s);
  ASSERT_EQ(change.ok(), model_.open.contains(s));
  if (!change.ok()) return;
  model_.open.erase(s);
  std::vector<RequestId> cancelled;
  std::erase_if(model_.waiting, [&](const ModelWaiter& w) {
    if (w.session == s) cancelled.push_back(w.id);
    return w.session == s;
  });
  std::sort(cancelled.begin(), cancelled.end());
  ASSERT_EQ(change.cancelled, cancelled);
  size_t before = model_.held.size();
  std::erase_if(model_.held, [&](const ModelLock& l) { return l.session == s; });
  ASSERT_EQ(change.released, before - model_.held.size());
  expect_grants(change.granted);
}

void Walk::step() {
  uint64_t dice = pick(20);
  if (dice < 9) return request();
  if (dice < 15) return carve(false);
  if (dice < 17) return carve(true);
  if (dice < 18) return cancel();
  if (dice < 19) return expire();
  return request();
}

// The table's state is the model's, and no two conflicting locks are held.
void Walk::check() const {
  for (const std::string f : {"a", "b"}) {
    std::vector<HeldLock> expected;
    for (const ModelLock& l : model_.held) {
      if (l.file == f) {
        expected.push_back(
            {l.session, l.request, l.mode, l.token, {l.first, l.last - l.first + 1}});
      }
    }
    std::sort(expected.begin(), expected.end(), [](const HeldLock& a, const HeldLock& b) {
      if (a.range.offset != b.range.offset) return a.range.offset < b.range.offset;
      if (a.range.end() != b.range.end()) return a.range.end() < b.range.end();
      return a.token < b.token;
    });
    FileLocks locks = table_.list(f);
    ASSERT_EQ(locks.held, expected) << "file " << f;
    for (size_t i = 0; i < locks.held.size(); ++i) {
      for (size_t j = 0; j < i; ++j) {
        const HeldLock& x = locks.held[i];
        const HeldLock& y = locks.held[j];
        ASSERT_FALSE(overlaps(x.range, y.range) && clash(x.session, x.mode, y.session, y.mode))
            << "conflicting locks held: requests " << x.request << " and " << y.request;
      }
    }
    std::vector<RequestId> waiting;
    for (const ModelWaiter& w : model_.waiting) {
      if (w.file == f) waiting.push_back(w.id);
    }
    ASSERT_EQ(locks.waiting.size(), waiting.size());
    for (size_t i = 0; i < waiting.size(); ++i) ASSERT_EQ(locks.waiting[i].request, waiting[i]);
  }
  ASSERT_EQ(table_.stats().entries_in_use, model_.entries());
  ASSERT_LE(model_.entries(), kCapacity);
}

TEST(LocksProperty, RandomSessionsAgreeWithABruteForceModel) {
  Stats total;
  size_t woken = 0;
  size_t split_refused = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Walk run(seed);
    for (int i = 0; i < 2000; ++i) {
      SCOPED_TRACE("step " + std::to_string(i));
      run.step();
      if (::testing::Test::HasFatalFailure()) return;
      run.check();
      if (::testing::Test::HasFatalFailure()) return;
    }
    Stats stats = run.stats();
    total.grants += stats.grants;
    total.queued += stats.queued;
    total.conflicts += stats.conflicts;
    total.table_full += stats.table_full;
    total.releases += stats.releases;
    total.expired += stats.expired;
    woken += run.woken();
    split_refused += run.split_refused();
  }
  // The walk reaches every path (about 6000 grants, 1000 of them after waiting, per run).
  EXPECT_GT(total.grants, 1000u);
  EXPECT_GT(total.queued, 1000u);
  EXPECT_GT(woken, 500u);
  EXPECT_GT(total.conflicts, 500u);
  EXPECT_GT(total.table_full, 500u);
  EXPECT_GT(total.releases, 1000u);
  EXPECT_GT(total.expired, 500u);
  EXPECT_GT(split_refused, 20u);
}

}  // namespace
}  // namespace asn::locks
