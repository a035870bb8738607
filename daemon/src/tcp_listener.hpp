// A listening TCP socket for one of asnd's listeners (listeners.cc): the gRPC listen.tcp and
// the metrics endpoint's listen.metrics open theirs the same way.
#pragma once

#include <string>

#include "unique_fd.hpp"

namespace asn {

// Binds and listens on "host:port" (a bracketed IPv6 host too), non-blocking, close-on-exec,
// SO_REUSEADDR. Throws asn::Error kUnavailable "cannot listen on ADDRESS (KEY): why", `key`
// naming the configuration key that gave the address.
UniqueFd open_tcp_listener(const std::string& address, const std::string& key);

}  // namespace asn
