#include "metrics/metrics_server.hpp"

#include <fmt/format.h>
#include <microhttpd.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <string_view>

#include "error.hpp"
#include "tcp_listener.hpp"

namespace asn::metrics {

namespace {

// A scraper needs one connection; a few more let an operator's curl in beside it, and the
// cap keeps a flood of idle connections from holding descriptors.
constexpr unsigned kMaxConnections = 8;
constexpr unsigned kConnectionTimeoutS = 10;
constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

MHD_Result respond(MHD_Connection* connection, unsigned status, const std::string& body,
                   const char* content_type) {
  MHD_Response* response = MHD_create_response_from_buffer(
      body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, content_type);
  const MHD_Result result = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  return result;
}

MHD_Result handle(void* cls, MHD_Connection* connection, const char* url, const char* method,
                  const char*, const char*, size_t* upload_size, void** state) {
  // The first call for a request only announces it; a request body is never wanted.
  if (*state == nullptr) {
    *state = connection;
    return MHD_YES;
  }
  if (*upload_size != 0) {
    *upload_size = 0;
    return MHD_YES;
  }
  const std::string_view path(url);
  if (path != "/metrics") {
    return respond(connection, MHD_HTTP_NOT_FOUND, "asnd serves /metrics only\n", "text/plain");
  }
  if (std::string_view(method) != MHD_HTTP_METHOD_GET &&
      std::string_view(method) != MHD_HTTP_METHOD_HEAD) {
    return respond(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "GET /metrics\n", "text/plain");
  }
  const auto* server = static_cast<const MetricsServer*>(cls);
  try {
    return respond(connection, MHD_HTTP_OK, server->scrape(), kContentType);
  } catch (const std::exception& e) {
    // A board that does not answer fails the scrape (Prometheus records `up` 0), not asnd.
    spdlog::warn("metrics: a scrape failed: {}", e.what());
    return respond(connection, MHD_HTTP_INTERNAL_SERVER_ERROR,
                   std::string("scrape failed: ") + e.what() + "\n", "text/plain");
  }
}

}  // namespace

MetricsServer::MetricsServer(const std::string& address, Collect collect)
    : address_(address),
      collect_(std::move(collect)),
      listen_fd_(open_tcp_listener(address, "listen.metrics").release()) {
  daemon_ = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, nullptr, nullptr,
                             &handle, this, MHD_OPTION_LISTEN_SOCKET, listen_fd_,
                             MHD_OPTION_CONNECTION_LIMIT, kMaxConnections,
                             MHD_OPTION_CONNECTION_TIMEOUT, kConnectionTimeoutS, MHD_OPTION_END);
  if (daemon_ == nullptr) {
    ::close(listen_fd_);
    throw Error(ErrorCode::kUnavailable,
                fmt::format("cannot serve metrics on {} (listen.metrics): libmicrohttpd "
                            "did not start",
                            address));
  }
}

// libmicrohttpd closes the listening socket it was given when it stops.
MetricsServer::~MetricsServer() { MHD_stop_daemon(daemon_); }

std::string MetricsServer::scrape() const { return collect_(); }

}  // namespace asn::metrics
