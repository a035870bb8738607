// Destinations for asnsim's traffic patterns (004 L600-620 for benign and adversarial) and
// the trace file.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "asn/sim/settings.hpp"

namespace asn::sim {

// splitmix64: small, fast, and the same sequence on every platform (std::*_distribution
// is not), so a seed repeats a run exactly.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint32_t below(uint32_t n) { return static_cast<uint32_t>((next() >> 32) * n >> 32); }
  // True with probability p.
  bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

 private:
  uint64_t state_;
};

// One packet of a trace file: at cycle `time`, terminal `source` sends `size` flits to
// terminal `destination`.
struct TraceRecord {
  uint64_t time = 0;
  uint32_t source = 0;
  uint32_t destination = 0;
  uint32_t size = 1;
};

// Lines "time source destination size" (spaces or commas), '#' comments and blank lines
// skipped, sorted by time on return. A bad line throws SimError naming `name`:line.
std::vector<TraceRecord> parse_trace(std::istream& in, const std::string& name, uint32_t terminals,
                                     uint32_t max_size);
std::vector<TraceRecord> read_trace(const std::string& path, uint32_t terminals, uint32_t max_size);

class Traffic {
 public:
  // The fixed patterns are computed here; uniform draws per packet. Not for kTrace.
  Traffic(const Settings& settings, uint64_t seed);
  uint32_t destination(uint32_t source, Random& random) const;
  // A request's destination and whether it is a hot one (a fetch-and-add to the hot address;
  // hotspot only). Hotspot's uniform part includes the source itself (traffic.cc says why).
  struct Draw {
    uint32_t dest;
    bool hot;
  };
  Draw draw(uint32_t source, Random& random) const;
  // The permutation of a fixed pattern (empty for uniform).
  const std::vector<uint32_t>& permutation() const { return table_; }

 private:
  uint32_t terminals_;
  Pattern pattern_;
  double hot_fraction_;
  uint32_t hot_node_;
  std::vector<uint32_t> table_;
};

}  // namespace asn::sim
