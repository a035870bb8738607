#include "logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/systemd_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

namespace asn {

namespace {

bool journal = false;

// systemd sets JOURNAL_STREAM to "<dev>:<inode>" of the stream it gave us; when stderr is
// that stream, log to the journal directly so priorities and fields survive.
bool stderr_is_journal() {
  const char* stream = std::getenv("JOURNAL_STREAM");
  if (stream == nullptr) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(stream, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (fstat(2, &st) != 0) return false;
  return st.st_dev == dev && st.st_ino == ino;
}

}  // namespace

void setup_logging(const std::string& level) {
  journal = stderr_is_journal();
  std::shared_ptr<spdlog::logger> logger;
  if (journal) {
    logger = std::make_shared<spdlog::logger>(
        "asnd", std::make_shared<spdlog::sinks::systemd_sink_mt>("asnd"));
    logger->set_pattern("%v");
  } else {
    logger = spdlog::stderr_color_mt("asnd");
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  }
  spdlog::set_default_logger(logger);
  set_log_level(level);
}

void set_log_level(const std::string& level) {
  spdlog::set_level(spdlog::level::from_str(level));
  spdlog::flush_on(spdlog::level::trace);
}

bool logging_to_journal() { return journal; }

}  // namespace asn
