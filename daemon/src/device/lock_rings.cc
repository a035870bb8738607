#include "device/lock_rings.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "error.hpp"

namespace asn {
namespace {

namespace l = regs::lock;

uint32_t words_of(size_t bytes) { return static_cast<uint32_t>((bytes + 3) / 4); }

void put_bytes(std::vector<uint32_t>& out, std::string_view bytes) {
  const size_t first = out.size();
  out.resize(first + words_of(bytes.size()), 0);
  if (!bytes.empty()) std::memcpy(out.data() + first, bytes.data(), bytes.size());
}

void put64(std::vector<uint32_t>& out, uint64_t v) {
  out.push_back(static_cast<uint32_t>(v));
  out.push_back(static_cast<uint32_t>(v >> 32));
}

uint64_t pair(uint32_t lo, uint32_t hi) { return (uint64_t{hi} << 32) | lo; }

std::string get_bytes(std::span<const uint32_t> words, size_t bytes) {
  std::string out(bytes, '\0');
  if (bytes > 0) std::memcpy(out.data(), words.data(), bytes);
  return out;
}

}  // namespace

LockRings::LockRings(Device& device) : device_(device) {
  const auto layout = device_.layout();
  const uint16_t version = layout->block(l::kType).version;
  if (version < l::kRequest.window.since) {
    throw Error(ErrorCode::kFailedPrecondition,
                fmt::format("the lock engine needs lock block version {}; this board's is "
                            "version {}",
                            l::kRequest.window.since, version));
  }
  request_entries_ = device_.entries(l::kRequest.window);
  completion_entries_ = device_.entries(l::kCompletion.window);
  data_words_ = device_.entries(l::kRequestData);
  take_indices();
}

void LockRings::take_indices() {
  Device::ReadBatch b;
  const size_t rp = b.add(l::kRequestProducerIndex);
  const size_t rc = b.add(l::kRequestConsumerIndex);
  const size_t cc = b.add(l::kCompletionConsumerIndex);
  const size_t gen = b.add(regs::id::kGenerationValue);
  device_.read(b);
  generation_ = static_cast<uint32_t>(b[gen]);
  request_producer_ = static_cast<uint32_t>(b[rp] % request_entries_);
  request_consumer_ = static_cast<uint32_t>(b[rc] % request_entries_);
  completion_consumer_ = completion_written_ = static_cast<uint32_t>(b[cc] % completion_entries_);
  data_next_ = 0;
}

void LockRings::enable() {
  take_indices();
  // Requests the engine never consumed and records nobody read: their callers are gone (a
  // previous asnd's, or this one's from before a board reset, which may have written its
  // stale indices into the reset board).
  request_producer_ = request_consumer_;
  completion_consumer_ = completion_producer();
  Device::WriteBatch w;
  w.add(l::kRequestProducerIndex, request_producer_);
  w.add(l::kCompletionConsumerIndex, completion_consumer_);
  w.add(l::kConfigEnable, 1);
  device_.write(w);
  completion_written_ = completion_consumer_;
}

uint32_t LockRings::read_request_consumer() {
  request_consumer_ = device_.read(l::kRequestConsumerIndex) % request_entries_;
  return request_consumer_;
}

void LockRings::post(const LockDescriptor& d, Doorbell ring) {
  std::vector<uint32_t> data;
  put_bytes(data, d.file);
  if (d.strided) {
    put64(data, d.strided->offset);
    put64(data, d.strided->block_length);
    put64(data, d.strided->stride);
    put64(data, d.strided->count);
  } else {
    data.reserve(data.size() + d.ranges.size() * 4);
    for (const auto& r : d.ranges) {
      put64(data, r.offset);
      put64(data, r.length);
    }
  }
  const uint32_t producer = request_producer_;
  const uint32_t next = (producer + 1) % request_entries_;
  // The consumer index as last read is behind the engine or at it: the ring or the data may
  // only look full.
  if (next == request_consumer_ && next == read_request_consumer()) {
    throw Error(
        ErrorCode::kResourceExhausted,
        fmt::format("the lock request ring (lock.request, {} entries) is full", request_entries_));
  }
  const auto words = static_cast<uint32_t>(data.size());
  if (words > data_words_ - data_next_ && producer != request_consumer_) read_request_consumer();
  // Data of requests in flight stays where it is; with none in flight, start again at 0.
  if (producer == request_consumer_) data_next_ = 0;
  if (words > data_words_ - data_next_) {
    throw Error(ErrorCode::kResourceExhausted,
                fmt::format("the data of this lock request ({} words) does not fit in "
                            "lock.request_data ({} words, {} in use)",
                            words, data_words_, data_next_));
  }
  const uint32_t index = data_next_;

  std::vector<uint32_t> entry(l::kRequest.window.words(), 0);
  entry[0] = static_cast<uint32_t>(d.op) | (d.exclusive ? 1u << 8 : 0) |
             (d.try_mode ? 1u << 9 : 0) | (d.strided ? 1u << 10 : 0);
  entry[1] = d.tag;
  entry[2] = static_cast<uint32_t>(d.session);
  entry[3] = static_cast<uint32_t>(d.session >> 32);
  entry[4] = index;
  entry[5] = static_cast<uint32_t>(d.file.size());
  entry[6] = d.strided ? 1u : (d.limit != 0 ? d.limit : static_cast<uint32_t>(d.ranges.size()));
  Device::WriteBatch writes;
  // First, so that an engine stalled on a full completion ring has the room again before it
  // sees this request.
  if (completion_consumer_ != completion_written_) {
    writes.add(l::kCompletionConsumerIndex, completion_consumer_);
  }
  if (!data.empty()) writes.add_entries(l::kRequestData, index, data);
  writes.add_entries(l::kRequest.window, producer, entry);
  writes.add(l::kRequestProducerIndex, next);
  if (ring == Doorbell::kRing) writes.add(l::kDoorbellRing, 1);
  device_.write(writes);
  completion_written_ = completion_consumer_;
  request_producer_ = next;
  data_next_ += words;
}

void LockRings::ring_doorbell() { device_.write(l::kDoorbellRing, 1); }

void LockRings::acknowledge() {
  if (completion_consumer_ == completion_written_) return;
  device_.write(l::kCompletionConsumerIndex, completion_consumer_);
  completion_written_ = completion_consumer_;
}

uint32_t LockRings::completion_producer() {
  return device_.read(l::kCompletionProducerIndex) % completion_entries_;
}

std::vector<LockCompletion> LockRings::drain(size_t max) {
  const uint32_t n = completion_entries_;
  // Most operations end in one record: the producer index and the slot that record would be
  // in are read together (when the engine has posted nothing, the slot is read and ignored).
  // Reading more slots ahead costs more words than the transactions it saves.
  Device::ReadBatch b;
  const size_t gen = b.add(regs::id::kGenerationValue);
  const size_t p_item = b.add(l::kCompletionProducerIndex);
  const size_t slot_item = b.add_entries(l::kCompletion.window, completion_consumer_, 1);
  device_.read(b);
  if (b[gen] != generation_) {
    throw Error(ErrorCode::kUnavailable,
                fmt::format("the board was reset (id.generation is {}; the lock rings were set "
                            "up at {}): asnd sets them up again when it sees the reset",
                            b[gen], generation_));
  }
  const auto producer = static_cast<uint32_t>(b[p_item] % n);
  const size_t available = std::min<size_t>((producer + n - completion_consumer_) % n, max);
  std::vector<LockCompletion> out;
  out.reserve(available);
  const uint32_t prefetched = available > 0 ? 1 : 0;
  read_records(completion_consumer_, prefetched, b.entries(slot_item), out);
  uint32_t consumer = (completion_consumer_ + prefetched) % n;
  while (out.size() < available) {
    // Up to the end of the ring in one batch.
    const auto count =
        static_cast<uint32_t>(std::min<size_t>(available - out.size(), n - consumer));
    read_records(consumer, count, device_.read_entries(l::kCompletion.window, consumer, count),
                 out);
    consumer = (consumer + count) % n;
  }
  completion_consumer_ = consumer;
  return out;
}

// Decodes `count` records from their slots' words, and reads the data of all of them in one
// batch.
void LockRings::read_records(uint32_t first, uint32_t count, std::span<const uint32_t> slots,
                             std::vector<LockCompletion>& out) {
  const uint32_t words = l::kCompletion.window.words();
  const size_t begin = out.size();
  Device::ReadBatch data;
  std::vector<size_t> data_item(count, SIZE_MAX);
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t* w = slots.data() + size_t{i} * words;
    LockCompletion c;
    c.kind = static_cast<LockRecordKind>(w[0] & 0xff);
    c.error = static_cast<uint8_t>((w[0] >> 8) & 0xf);
    c.exclusive = (w[0] >> 12) & 1;
    c.has_index = (w[0] >> 13) & 1;
    c.tag = w[1];
    c.request = pair(w[2], w[3]);
    c.token = pair(w[4], w[5]);
    c.session = pair(w[6], w[7]);
    c.value = pair(w[8], w[9]);
    c.waiting = w[15];
    if (w[11] > 0) data_item[i] = data.add_entries(l::kResultData, w[10], w[11]);
    out.push_back(std::move(c));
  }
  if (std::ranges::all_of(data_item, [](size_t d) { return d == SIZE_MAX; })) return;
  device_.read(data);
  for (uint32_t i = 0; i < count; ++i) {
    if (data_item[i] == SIZE_MAX) continue;
    const uint32_t* w = slots.data() + size_t{i} * words;
    const uint32_t file_bytes = w[12] & 0xffff;
    const uint32_t range_count = w[13];
    const uint32_t message_bytes = w[14] & 0xffff;
    std::span<const uint32_t> rest = data.entries(data_item[i]);
    const uint64_t need =
        uint64_t{words_of(file_bytes)} + uint64_t{range_count} * 4 + words_of(message_bytes);
    if (need > rest.size()) {
      throw Error(ErrorCode::kHardware,
                  fmt::format("lock completion record {} names {} words of data in "
                              "lock.result_data; its contents need {}",
                              (first + i) % completion_entries_, rest.size(), need));
    }
    LockCompletion& c = out[begin + i];
    c.file = get_bytes(rest, file_bytes);
    rest = rest.subspan(words_of(file_bytes));
    c.ranges.resize(range_count);
    for (uint32_t r = 0; r < range_count; ++r) {
      c.ranges[r] = {pair(rest[4 * r], rest[4 * r + 1]), pair(rest[4 * r + 2], rest[4 * r + 3])};
    }
    rest = rest.subspan(size_t{range_count} * 4);
    c.message = get_bytes(rest, message_bytes);
  }
}

}  // namespace asn
