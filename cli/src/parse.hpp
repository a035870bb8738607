// Parsing of command-line items into request messages. Everything here runs before asnd is
// contacted; a bad item throws UsageError.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "asn/v1/device.pb.h"

namespace CLI {
class App;
}  // namespace CLI

namespace asnctl {

// "0x1f" (hex, either case) or "31" (decimal), at most `max`; nullopt for anything else,
// including signs, spaces, empty digits and overflow.
std::optional<uint64_t> parse_number(std::string_view text, uint64_t max = UINT64_MAX);

// A register item: a byte offset if it starts with a digit (then it must be a number that
// fits 32 bits), otherwise a name such as id.scratch or port[2].control.enable.
asn::v1::RegisterRef parse_ref(std::string_view item);

// NAME=VALUE or OFFSET=VALUE, VALUE decimal or 0x hex (up to 64 bits).
asn::v1::RegisterWrite parse_write(std::string_view item);

// A list of port numbers: "3", "0-5", "1,4,7", "0-2,6" (each 0-254, at most 255 in all).
std::vector<uint32_t> parse_port_list(std::string_view text);

// A byte count: decimal or 0x hex, with an optional K, M, G or T (powers of 1024): "64K",
// "1M", "0x1000". `what` names the option in the usage error.
uint64_t parse_bytes(const std::string& what, const std::string& text);

// --channels of `topology` and `fabric set`: "dilated" (two channels A, B, the default) or
// "double-rate" (one channel at twice the rate), written to `channels` as given; "double",
// asnsim's word for it, is taken too and written as "double-rate".
void add_channels_option(CLI::App* sub, std::string& channels);

// How to show a ref in messages: the name, or the offset in hex.
std::string describe_ref(const asn::v1::RegisterRef& ref);

}  // namespace asnctl
