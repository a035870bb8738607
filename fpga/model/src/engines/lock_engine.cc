#include "lock_engine.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <string_view>

#include "asn/regmap/regs.hpp"

namespace asn::model::detail::engines {
namespace {

namespace l = regs::lock;

// Words of `bytes` bytes, padded.
uint32_t words_of(size_t bytes) { return static_cast<uint32_t>((bytes + 3) / 4); }

void put_bytes(std::vector<uint32_t>& out, std::string_view bytes) {
  const size_t first = out.size();
  out.resize(first + words_of(bytes.size()), 0);
  if (!bytes.empty()) std::memcpy(out.data() + first, bytes.data(), bytes.size());
}

void put_range(std::vector<uint32_t>& out, const locks::ByteRange& r) {
  out.push_back(static_cast<uint32_t>(r.offset));
  out.push_back(static_cast<uint32_t>(r.offset >> 32));
  out.push_back(static_cast<uint32_t>(r.length));
  out.push_back(static_cast<uint32_t>(r.length >> 32));
}

uint64_t pair(uint32_t lo, uint32_t hi) { return (uint64_t{hi} << 32) | lo; }

void set64(std::array<uint32_t, 16>& w, size_t word, uint64_t value) {
  w[word] = static_cast<uint32_t>(value);
  w[word + 1] = static_cast<uint32_t>(value >> 32);
}

uint32_t error_code(locks::ErrorKind kind) { return static_cast<uint32_t>(kind) + 1; }

// The header of a record: kind, tag.
std::array<uint32_t, 16> header(LockRecord kind, uint32_t tag) {
  std::array<uint32_t, 16> w{};
  w[0] = static_cast<uint32_t>(kind);
  w[1] = tag;
  return w;
}

// A record's data: file id, ranges, message (result_data layout); counts in words 12-14.
void set_data(std::array<uint32_t, 16>& w, std::vector<uint32_t>& data, std::string_view file,
              std::span<const locks::ByteRange> ranges, std::string_view message) {
  put_bytes(data, file);
  for (const auto& r : ranges) put_range(data, r);
  put_bytes(data, message);
  w[12] = static_cast<uint32_t>(file.size());
  w[13] = static_cast<uint32_t>(ranges.size());
  w[14] = static_cast<uint32_t>(message.size());
}

void set_error(std::array<uint32_t, 16>& w, const locks::LockError& e) {
  w[0] |= error_code(e.kind()) << 8;
  if (e.index()) {
    w[0] |= 1u << 13;
    set64(w, 8, *e.index());
  }
}

constexpr uint32_t kExclusive = 1u << 12;

}  // namespace

size_t LockEngine::dram_bytes(size_t entries) { return locks::RegionJournal::bytes_for(entries); }

LockEngine::LockEngine(RegisterView& view, BoardContext&, std::span<std::byte> dram,
                       size_t entries) {
  data_words_ = view.entries(l::kResultData);
  locks::TableLimits limits;
  limits.capacity = entries;
  try {
    journal_ = std::make_unique<locks::RegionJournal>(dram);
    table_ = std::make_unique<locks::DurableTable>(*journal_, limits);
  } catch (const std::exception& e) {
    table_.reset();
    error_ = e.what();
  }
  // Records posted before a restart and not consumed yet keep their data in result_data.
  const uint32_t n = view.entries(l::kCompletion.window);
  const uint32_t producer = view.get(l::kCompletionProducerIndex) % n;
  for (uint32_t slot = view.get(l::kCompletionConsumerIndex) % n; slot != producer;
       slot = (slot + 1) % n) {
    const auto entry = view.entry(l::kCompletion.window, slot, Bank::kShadow);
    const uint32_t index = entry[10];
    const uint32_t words = entry[11];
    if (words == 0 || index >= data_words_ || words > data_words_ - index) continue;
    posted_.push_back({slot, index, index + words});
    data_head_ = index + words;
  }
  publish(view);
  if (table_) {
    const locks::Stats stats = table_->table().stats();
    view.set(l::kStatusRestored, stats.sessions > 0 || stats.expired > 0 ? 1 : 0);
  }
}

LockEngine::~LockEngine() = default;

void LockEngine::publish(RegisterView& view) {
  view.set(l::kStatusReady, table_ ? 1 : 0);
  view.set(l::kStatusError, table_ ? 0 : 1);
  view.set(l::kStatusStalled, backlog_.empty() ? 0 : 1);
  view.set(l::kBacklogRecords, static_cast<uint32_t>(backlog_.size()));
  if (!table_) return;
  const locks::Stats s = table_->table().stats();
  view.set(l::kEntriesInUseCount, static_cast<uint32_t>(s.entries_in_use));
  view.set(l::kHeldEntriesCount, static_cast<uint32_t>(s.held_entries));
  view.set(l::kWaitingEntriesCount, static_cast<uint32_t>(s.waiting_entries));
  view.set(l::kWaitingRequestsCount, static_cast<uint32_t>(s.waiting_requests));
  view.set(l::kFilesCount, static_cast<uint32_t>(s.files));
  view.set(l::kSessionsCount, static_cast<uint32_t>(s.sessions));
  view.set64(l::kGrants, s.grants);
  view.set64(l::kQueued, s.queued);
  view.set64(l::kReleases, s.releases);
  view.set64(l::kTableFull, s.table_full);
  view.set64(l::kConflicts, s.conflicts);
  view.set64(l::kCancelled, s.cancelled);
  view.set64(l::kExpired, s.expired);
}

void LockEngine::doorbell(RegisterView& view, BoardContext& board) { consume(view, board); }

void LockEngine::consumer_moved(RegisterView& view, BoardContext& board) {
  free_consumed(view);
  flush(view, board);
  consume(view, board);
}

void LockEngine::consume(RegisterView& view, BoardContext& board) {
  if (!table_ || view.get(l::kConfigEnable) == 0) return;
  const uint32_t n = view.entries(l::kRequest.window);
  const uint32_t producer = view.get(l::kRequestProducerIndex) % n;
  uint32_t consumer = view.get(l::kRequestConsumerIndex) % n;
  while (backlog_.empty() && consumer != producer) {
    const auto entry = view.entry(l::kRequest.window, consumer, Bank::kShadow);
    const std::vector<uint32_t> descriptor(entry.begin(), entry.end());
    consumer = (consumer + 1) % n;
    view.set(l::kRequestConsumerIndex, consumer);
    execute(view, descriptor);
    flush(view, board);
  }
  publish(view);
}

bool LockEngine::allocate(uint32_t words, uint32_t& index) const {
  if (words > data_words_) return false;
  if (posted_.empty()) {
    index = 0;
    return true;
  }
  const uint32_t tail = posted_.front().index;
  if (data_head_ >= tail) {
    if (data_head_ + words <= data_words_) {
      index = data_head_;
      return true;
    }
    if (words < tail) {
      index = 0;
      return true;
    }
    return false;
  }
  if (data_head_ + words < tail) {
    index = data_head_;
    return true;
  }
  return false;
}

void LockEngine::free_consumed(RegisterView& view) {
  const uint32_t n = view.entries(l::kCompletion.window);
  const uint32_t producer = view.get(l::kCompletionProducerIndex) % n;
  const uint32_t consumer = view.get(l::kCompletionConsumerIndex) % n;
  const uint32_t outstanding = (producer + n - consumer) % n;
  while (!posted_.empty() && (posted_.front().slot + n - consumer) % n >= outstanding) {
    posted_.pop_front();
  }
  if (posted_.empty()) data_head_ = 0;
}

void LockEngine::flush(RegisterView& view, BoardContext& board) {
  const uint32_t n = view.entries(l::kCompletion.window);
  uint32_t producer = view.get(l::kCompletionProducerIndex) % n;
  const uint32_t consumer = view.get(l::kCompletionConsumerIndex) % n;
  bool posted = false;
  while (!backlog_.empty()) {
    if ((producer + 1) % n == consumer) break;  // the ring is full
    Record& record = backlog_.front();
    const uint32_t words = static_cast<uint32_t>(record.data.size());
    uint32_t index = 0;
    if (words > 0) {
      if (!allocate(words, index)) break;  // result_data is full
      for (uint32_t i = 0; i < words; ++i) {
        view.entry(l::kResultData, index + i, Bank::kShadow)[0] = record.data[i];
      }
      posted_.push_back({producer, index, index + words});
      data_head_ = index + words;
    }
    record.words[10] = words > 0 ? index : 0;
    record.words[11] = words;
    auto entry = view.entry(l::kCompletion.window, producer, Bank::kShadow);
    std::copy(record.words.begin(), record.words.end(), entry.begin());
    producer = (producer + 1) % n;
    backlog_.pop_front();
    posted = true;
  }
  view.set(l::kCompletionProducerIndex, producer);
  view.set(l::kStatusStalled, backlog_.empty() ? 0 : 1);
  view.set(l::kBacklogRecords, static_cast<uint32_t>(backlog_.size()));
  if (posted) board.raise(regs::id::kIrqStatusLockCompletion);
}

void LockEngine::execute(RegisterView& view, std::span<const uint32_t> d) {
  const auto op = static_cast<LockOp>(d[0] & 0xff);
  const bool exclusive = (d[0] >> 8) & 1;
  const bool try_mode = (d[0] >> 9) & 1;
  const bool strided = (d[0] >> 10) & 1;
  const uint32_t tag = d[1];
  const uint64_t arg = pair(d[2], d[3]);
  const uint32_t data_index = d[4];
  const uint32_t file_bytes = d[5] & 0xffff;
  const uint32_t range_count = d[6];

  auto emit = [&](Record r) { backlog_.push_back(std::move(r)); };
  auto refuse = [&](LockRecord kind, locks::ErrorKind error, const std::string& message) {
    Record r{header(kind, tag), {}};
    set_error(r.words, locks::LockError(error, message));
    set_data(r.words, r.data, {}, {}, message);
    emit(std::move(r));
  };
  const LockRecord refused_kind =
      op == LockOp::kRequest ? LockRecord::kInvalid
      : (op == LockOp::kOpenSession || (op >= LockOp::kListSessions && op <= LockOp::kListFile))
          ? LockRecord::kEnd
          : LockRecord::kRefused;

  // The data: the file id, then the ranges, all inside request_data.
  const uint32_t window = view.entries(l::kRequestData);
  const bool has_ranges =
      op == LockOp::kRequest || op == LockOp::kRelease || op == LockOp::kDowngrade;
  const uint64_t range_words = has_ranges ? (strided ? 8 : uint64_t{range_count} * 4) : 0;
  const uint64_t need = uint64_t{words_of(file_bytes)} + range_words;
  if (data_index > window || need > window - data_index) {
    refuse(refused_kind, locks::ErrorKind::kInvalidArgument,
           "the request's data (" + std::to_string(need) + " words from word " +
               std::to_string(data_index) + ") runs past request_data (" + std::to_string(window) +
               " words)");
    return;
  }
  auto word = [&](uint64_t i) {
    return view.entry(l::kRequestData, static_cast<uint32_t>(data_index + i), Bank::kShadow)[0];
  };
  std::string file(file_bytes, '\0');
  for (uint32_t i = 0; i < file_bytes; ++i) {
    file[i] = static_cast<char>((word(i / 4) >> (8 * (i % 4))) & 0xff);
  }
  const uint64_t base = words_of(file_bytes);
  locks::RangeSpec ranges;
  if (has_ranges) {
    if (strided) {
      ranges = locks::Strided{
          pair(word(base), word(base + 1)), pair(word(base + 2), word(base + 3)),
          pair(word(base + 4), word(base + 5)), pair(word(base + 6), word(base + 7))};
    } else {
      std::vector<locks::ByteRange> list(range_count);
      for (uint32_t i = 0; i < range_count; ++i) {
        list[i] = {pair(word(base + 4 * i), word(base + 4 * i + 1)),
                   pair(word(base + 4 * i + 2), word(base + 4 * i + 3))};
      }
      ranges = std::move(list);
    }
  }

  auto grant_record = [&](LockRecord kind, const locks::Grant& g) {
    Record r{header(kind, tag), {}};
    if (g.mode == locks::Mode::kExclusive) r.words[0] |= kExclusive;
    set64(r.words, 2, g.request);
    set64(r.words, 4, g.token);
    set64(r.words, 6, g.session);
    set_data(r.words, r.data, g.file, g.ranges, {});
    return r;
  };
  auto change = [&](const locks::Change& c) {
    for (const auto& g : c.granted) emit(grant_record(LockRecord::kGrantedLater, g));
    for (const auto id : c.cancelled) {
      Record r{header(LockRecord::kCancelled, tag), {}};
      set64(r.words, 2, id);
      emit(std::move(r));
    }
    Record r{header(c.ok() ? LockRecord::kDone : LockRecord::kRefused, tag), {}};
    set64(r.words, 8, c.released);
    if (c.error) {
      set_error(r.words, *c.error);
      set_data(r.words, r.data, {}, {}, c.error->what());
    }
    emit(std::move(r));
  };

  try {
    switch (op) {
      case LockOp::kOpenSession: {
        Record r{header(LockRecord::kSession, tag), {}};
        set64(r.words, 6, table_->open_session(file));
        emit(std::move(r));
        return;
      }
      case LockOp::kRequest: {
        locks::Request request;
        request.session = arg;
        request.file = file;
        request.mode = exclusive ? locks::Mode::kExclusive : locks::Mode::kShared;
        request.ranges = std::move(ranges);
        request.wait = try_mode ? locks::Wait::kTry : locks::Wait::kBlock;
        const locks::Outcome o = table_->request(request);
        const auto kind = static_cast<LockRecord>(static_cast<uint8_t>(o.status) + 1);
        Record r = o.grant ? grant_record(kind, *o.grant) : Record{header(kind, tag), {}};
        set64(r.words, 2, o.request);
        if (o.error) {
          set_error(r.words, *o.error);
          r.data.clear();
          set_data(r.words, r.data, {}, {}, o.error->what());
        }
        emit(std::move(r));
        return;
      }
      case LockOp::kRelease:
        change(table_->release(arg, file, ranges));
        return;
      case LockOp::kDowngrade:
        change(table_->downgrade(arg, file, ranges));
        return;
      case LockOp::kCancel:
        change(table_->cancel(arg));
        return;
      case LockOp::kExpire:
        change(table_->expire(arg));
        return;
      case LockOp::kRaiseTokenFloor: {
        Record r{header(LockRecord::kDone, tag), {}};
        set64(r.words, 4, table_->raise_token_floor(arg));
        emit(std::move(r));
        return;
      }
      case LockOp::kListSessions: {
        size_t left = range_count == 0 ? SIZE_MAX : range_count;
        for (const auto& s : table_->table().sessions()) {
          if (s.id <= arg) continue;
          if (left-- == 0) break;
          Record r{header(LockRecord::kSession, tag), {}};
          set64(r.words, 6, s.id);
          set64(r.words, 8, s.held_entries);
          r.words[15] = static_cast<uint32_t>(s.waiting_requests);
          set_data(r.words, r.data, s.label, {}, {});
          emit(std::move(r));
        }
        emit(Record{header(LockRecord::kEnd, tag), {}});
        return;
      }
      case LockOp::kListFiles: {
        const size_t limit = range_count == 0 ? SIZE_MAX : range_count;
        for (const auto& f : table_->table().files(file, limit)) {
          Record r{header(LockRecord::kFile, tag), {}};
          set_data(r.words, r.data, f, {}, {});
          emit(std::move(r));
        }
        emit(Record{header(LockRecord::kEnd, tag), {}});
        return;
      }
      case LockOp::kListFile: {
        const locks::FileLocks locks = table_->table().list(file);
        for (const auto& h : locks.held) {
          Record r{header(LockRecord::kHeld, tag), {}};
          if (h.mode == locks::Mode::kExclusive) r.words[0] |= kExclusive;
          set64(r.words, 2, h.request);
          set64(r.words, 4, h.token);
          set64(r.words, 6, h.session);
          set_data(r.words, r.data, {}, std::span(&h.range, 1), {});
          emit(std::move(r));
        }
        for (const auto& w : locks.waiting) {
          Record r{header(LockRecord::kWaiting, tag), {}};
          if (w.mode == locks::Mode::kExclusive) r.words[0] |= kExclusive;
          set64(r.words, 2, w.request);
          set64(r.words, 6, w.session);
          set_data(r.words, r.data, {}, w.ranges, {});
          emit(std::move(r));
        }
        emit(Record{header(LockRecord::kEnd, tag), {}});
        return;
      }
    }
    refuse(LockRecord::kRefused, locks::ErrorKind::kInvalidArgument,
           "unknown lock operation " + std::to_string(d[0] & 0xff));
  } catch (const locks::LockError& e) {
    // The journal in DRAM has no room (or the request could not be read): nothing applied.
    refuse(refused_kind, e.kind(), e.what());
  } catch (const std::exception& e) {
    refuse(refused_kind, locks::ErrorKind::kResourceExhausted, e.what());
  }
}

}  // namespace asn::model::detail::engines
