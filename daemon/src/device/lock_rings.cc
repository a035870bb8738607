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
}

void LockRings::enable() { device_.write(l::kConfigEnable, 1); }

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
  Device::ReadBatch indices;
  const size_t p_item = indices.add(l::kRequestProducerIndex);
  const size_t c_item = indices.add(l::kRequestConsumerIndex);
  device_.read(indices);
  const auto producer = static_cast<uint32_t>(indices[p_item] % request_entries_);
  const auto consumer = static_cast<uint32_t>(indices[c_item] % request_entries_);
  if ((producer + 1) % request_entries_ == consumer) {
    throw Error(
        ErrorCode::kResourceExhausted,
        fmt::format("the lock request ring (lock.request, {} entries) is full", request_entries_));
  }
  // Data of requests in flight stays where it is; with none in flight, start again at 0.
  if (producer == consumer) data_next_ = 0;
  const auto words = static_cast<uint32_t>(data.size());
  if (words > data_words_ - data_next_) {
    throw Error(ErrorCode::kResourceExhausted,
                fmt::format("the data of this lock request ({} words) does not fit in "
                            "lock.request_data ({} words, {} in use)",
                            words, data_words_, data_next_));
  }
  const uint32_t index = data_next_;
  data_next_ += words;

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
  if (!data.empty()) writes.add_entries(l::kRequestData, index, data);
  writes.add_entries(l::kRequest.window, producer, entry);
  writes.add(l::kRequestProducerIndex, (producer + 1) % request_entries_);
  if (ring == Doorbell::kRing) writes.add(l::kDoorbellRing, 1);
  device_.write(writes);
}

void LockRings::ring_doorbell() { device_.write(l::kDoorbellRing, 1); }

uint32_t LockRings::completion_producer() {
  return device_.read(l::kCompletionProducerIndex) % completion_entries_;
}

std::vector<LockCompletion> LockRings::drain(size_t max) {
  Device::ReadBatch indices;
  const size_t p_item = indices.add(l::kCompletionProducerIndex);
  const size_t c_item = indices.add(l::kCompletionConsumerIndex);
  device_.read(indices);
  const uint32_t n = completion_entries_;
  const auto producer = static_cast<uint32_t>(indices[p_item] % n);
  uint32_t consumer = static_cast<uint32_t>(indices[c_item] % n);
  const size_t available = std::min<size_t>((producer + n - consumer) % n, max);
  std::vector<LockCompletion> out;
  out.reserve(available);
  const uint32_t words = l::kCompletion.window.words();
  while (out.size() < available) {
    // Up to the end of the ring in one batch.
    const auto count =
        static_cast<uint32_t>(std::min<size_t>(available - out.size(), n - consumer));
    const std::vector<uint32_t> entries =
        device_.read_entries(l::kCompletion.window, consumer, count);
    for (uint32_t i = 0; i < count; ++i) {
      const uint32_t* w = entries.data() + size_t{i} * words;
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
      const uint32_t data_index = w[10];
      const uint32_t data_words = w[11];
      const uint32_t file_bytes = w[12] & 0xffff;
      const uint32_t range_count = w[13];
      const uint32_t message_bytes = w[14] & 0xffff;
      if (data_words > 0) {
        const std::vector<uint32_t> data =
            device_.read_entries(l::kResultData, data_index, data_words);
        const uint64_t need =
            uint64_t{words_of(file_bytes)} + uint64_t{range_count} * 4 + words_of(message_bytes);
        if (need > data.size()) {
          throw Error(ErrorCode::kHardware,
                      fmt::format("lock completion record {} names {} words of data in "
                                  "lock.result_data; its contents need {}",
                                  consumer + i, data.size(), need));
        }
        std::span<const uint32_t> rest(data);
        c.file = get_bytes(rest, file_bytes);
        rest = rest.subspan(words_of(file_bytes));
        c.ranges.resize(range_count);
        for (uint32_t r = 0; r < range_count; ++r) {
          c.ranges[r] = {pair(rest[4 * r], rest[4 * r + 1]),
                         pair(rest[4 * r + 2], rest[4 * r + 3])};
        }
        rest = rest.subspan(size_t{range_count} * 4);
        c.message = get_bytes(rest, message_bytes);
      }
      out.push_back(std::move(c));
    }
    consumer = (consumer + count) % n;
  }
  if (!out.empty()) device_.write(l::kCompletionConsumerIndex, consumer);
  return out;
}

}  // namespace asn
