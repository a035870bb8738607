// listen.metrics: an HTTP endpoint (libmicrohttpd) that serves GET /metrics in the
// Prometheus text format. The text is made at scrape time by `collect` from what the
// managers and the Device already report, so a scrape reads the board as `asnctl` would.
#pragma once

#include <functional>
#include <memory>
#include <string>

struct MHD_Daemon;

namespace asn::metrics {

class MetricsServer {
 public:
  using Collect = std::function<std::string()>;

  // Listens on `address` (host:port, checked by the configuration) and serves from one
  // thread of its own. Throws asn::Error (kUnavailable) naming listen.metrics when the
  // address cannot be listened on (taken, not this host's, not allowed).
  MetricsServer(const std::string& address, Collect collect);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  const std::string& address() const { return address_; }
  // Called by libmicrohttpd's thread.
  std::string scrape() const;

 private:
  std::string address_;
  Collect collect_;
  int listen_fd_ = -1;
  MHD_Daemon* daemon_ = nullptr;
};

}  // namespace asn::metrics
