#include "stripe_io.hpp"

#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "asn/v1/stripe.grpc.pb.h"
#include "errors.hpp"
#include "output.hpp"
#include "progress.hpp"

namespace asnctl {

namespace {

// File data messages: as asnd's (services/stripe_service.hpp).
constexpr size_t kChunkBytes = size_t{1} << 20;

using Clock = std::chrono::steady_clock;

// The size of a regular file, else 0 (a pipe: unknown).
uint64_t size_of(std::FILE* file) {
  struct stat st = {};
  if (fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  return static_cast<uint64_t>(st.st_size);
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void print_transfer(Session& s, const char* verb, uint32_t group, uint64_t offset, uint64_t bytes,
                    uint64_t file_size, double seconds) {
  const double rate = seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0;
  if (s.format == OutputFormat::kJson) {
    std::printf(
        "{\n  \"group\": %u,\n  \"offset\": \"%llu\",\n  \"bytes\": \"%llu\",\n  \"file_size\": "
        "\"%llu\",\n  \"seconds\": %.3f,\n  \"mb_per_s\": %.1f\n}\n",
        group, static_cast<unsigned long long>(offset), static_cast<unsigned long long>(bytes),
        static_cast<unsigned long long>(file_size), seconds, rate);
    return;
  }
  KeyValues kv;
  kv.add("group", std::to_string(group));
  kv.add(verb, strprintf("%llu bytes at offset %llu", static_cast<unsigned long long>(bytes),
                         static_cast<unsigned long long>(offset)));
  kv.add("file size", std::to_string(file_size));
  kv.add("time", strprintf("%.3f s (%.1f MB/s)", seconds, rate));
  kv.print(stdout, 0);
}

// Sends the file in messages of kChunkBytes, the first naming the group and the offset (so
// an empty file is one message). False when the file could not be read.
template <typename Stream>
bool send(Stream& stream, std::FILE* in, uint32_t group, uint64_t offset) {
  asn::v1::WriteRequest request;
  request.set_group(group);
  request.set_offset(offset);
  std::string buffer(kChunkBytes, '\0');
  for (;;) {
    const size_t n = std::fread(buffer.data(), 1, buffer.size(), in);
    if (std::ferror(in) != 0) return false;
    request.set_data(buffer.data(), n);
    if (!stream.Write(request)) return true;  // asnd ended the call: Finish says why
    request.clear_group();
    request.clear_offset();
    if (n < buffer.size()) return true;
  }
}

}  // namespace

void prepare_stream(Session& s, grpc::ClientContext& context) {
  s.connection.prepare(context);
  context.set_deadline(std::chrono::system_clock::time_point::max());
}

int stripe_write(Session& s, const std::string& file, uint32_t group, uint64_t offset) {
  std::FILE* in = file == "-" ? stdin : std::fopen(file.c_str(), "rb");
  if (in == nullptr) throw std::runtime_error("cannot open " + file + ": " + std::strerror(errno));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(in == stdin ? nullptr : in, &std::fclose);
  const uint64_t total = size_of(in);
  auto stub = asn::v1::Stripe::NewStub(s.connection.channel());
  grpc::ClientContext context;
  prepare_stream(s, context);
  const auto start = Clock::now();
  Progress progress("writing " + file);
  auto stream = stub->Write(&context);
  // asnd acknowledges whole stripes as they reach the members, on a thread of their own so
  // that sending never waits for them.
  std::mutex mutex;
  asn::v1::WriteReply last;
  std::thread acks([&] {
    asn::v1::WriteReply reply;
    while (stream->Read(&reply)) {
      progress.update(reply.acked(), total);
      std::lock_guard lock(mutex);
      last = reply;
    }
  });
  const bool read_error = !send(*stream, in, group, offset);
  if (read_error) context.TryCancel();
  stream->WritesDone();
  acks.join();
  const grpc::Status status = stream->Finish();
  progress.stop();
  if (read_error) throw std::runtime_error("cannot read " + file + ": " + std::strerror(errno));
  if (!status.ok() && last.acked() > 0) {
    std::fprintf(stderr,
                 "asnctl: the write stopped; bytes %llu to %llu of group %u's file were "
                 "acknowledged written and are intact\n",
                 static_cast<unsigned long long>(offset),
                 static_cast<unsigned long long>(offset + last.acked()), group);
  }
  s.connection.check(status);
  print_transfer(s, "written", group, offset, last.acked(), last.file_size(), seconds_since(start));
  return kExitOk;
}

int stripe_read(Session& s, const std::string& path, uint32_t group, uint64_t offset,
                uint64_t length) {
  std::FILE* out = path == "-" ? stdout : std::fopen(path.c_str(), "wb");
  if (out == nullptr) {
    throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(out == stdout ? nullptr : out,
                                                         &std::fclose);
  auto stub = asn::v1::Stripe::NewStub(s.connection.channel());
  asn::v1::ReadRequest request;
  request.set_group(group);
  request.set_offset(offset);
  request.set_length(length);
  grpc::ClientContext context;
  prepare_stream(s, context);
  const auto start = Clock::now();
  Progress progress(strprintf("reading group %u", group));
  auto reader = stub->Read(&context, request);
  asn::v1::ReadChunk chunk;
  uint64_t file_size = 0, got = 0, total = length;
  bool first = true, write_error = false;
  while (reader->Read(&chunk)) {
    if (first) {
      file_size = chunk.file_size();
      if (length == 0) total = file_size > offset ? file_size - offset : 0;
      first = false;
    }
    if (std::fwrite(chunk.data().data(), 1, chunk.data().size(), out) != chunk.data().size()) {
      write_error = true;
      context.TryCancel();
      break;
    }
    got += chunk.data().size();
    progress.update(got, total);
  }
  const grpc::Status status = reader->Finish();
  progress.stop();
  if (write_error || std::fflush(out) != 0) {
    throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  }
  s.connection.check(status);
  if (out != stdout) print_transfer(s, "read", group, offset, got, file_size, seconds_since(start));
  return kExitOk;
}

}  // namespace asnctl
