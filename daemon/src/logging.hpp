// Logging: spdlog to stderr, or to the journal (with priorities) when systemd connected
// stderr to it.
#pragma once

#include <string>

namespace asn {

// Sets up the default logger; `level` is a valid level name (validate_log_level).
void setup_logging(const std::string& level);
void set_log_level(const std::string& level);
bool logging_to_journal();

}  // namespace asn
