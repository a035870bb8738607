#include "asn/sim/traffic.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <fstream>
#include <numeric>

#include "asn/topology/fabric.hpp"

namespace asn::sim {
namespace {

// Benign (004 L604): each pair of terminals of a router sends to a different directly
// connected router. Pair p = t / 2 goes along dimension p mod r, p / r + 1 routers on
// (mod the dimension's radix); terminal t there receives, so the pattern is a permutation and
// each pair fills exactly its two lanes.
uint32_t benign(const topology::Fabric& fabric, uint32_t source) {
  const uint32_t k = fabric.k();
  const uint32_t router = source / k, t = source % k;
  const unsigned r = fabric.dimensions();
  if (r == 0) return source;
  const uint32_t pair = t / 2;
  const unsigned dim = pair % r;
  const uint32_t radix = fabric.dimension_radix(dim);
  std::vector<uint32_t> digits = fabric.digits(router);
  digits[dim] = (digits[dim] + 1 + (pair / r) % (radix - 1)) % radix;
  return fabric.router_of(digits) * k + t;
}

// Adversarial (004 L606): every terminal of router i sends to router i + j. The seed wants
// the two routers directly connected ("only two end-terminals ... can send through the direct
// link"), so i + j is read in digit 0: router i with digit 0 advanced by j (mod its radix);
// terminal t goes to terminal t.
uint32_t adversarial(const topology::Fabric& fabric, uint32_t source, uint32_t shift) {
  const uint32_t k = fabric.k();
  if (fabric.dimensions() == 0) return source;
  std::vector<uint32_t> digits = fabric.digits(source / k);
  const uint32_t radix = fabric.dimension_radix(0);
  digits[0] = (digits[0] + shift) % radix;
  return fabric.router_of(digits) * k + source % k;
}

}  // namespace

Traffic::Traffic(const Settings& settings, uint64_t seed)
    : terminals_(settings.terminals),
      pattern_(settings.pattern),
      hot_fraction_(settings.hot_fraction),
      hot_node_(settings.hot_node) {
  const topology::Fabric fabric(settings.terminals, settings.k);
  const uint32_t n = settings.terminals;
  const unsigned bits = std::bit_width(n) - 1;
  switch (pattern_) {
    case Pattern::kUniform:
    case Pattern::kTrace:
    case Pattern::kHotspot:
      return;
    case Pattern::kRandomPermutation: {
      table_.resize(n);
      std::iota(table_.begin(), table_.end(), 0u);
      // Fisher-Yates with our own generator; the point's seed (settings.seed and the load's
      // index) picks the permutation, so another --seed draws another one.
      Random random(seed ^ 0x7065726d75746174ull);
      for (uint32_t i = n; i > 1; --i) std::swap(table_[i - 1], table_[random.below(i)]);
      return;
    }
    default:
      break;
  }
  table_.resize(n);
  for (uint32_t s = 0; s < n; ++s) {
    switch (pattern_) {
      case Pattern::kBenign:
        table_[s] = benign(fabric, s);
        break;
      case Pattern::kAdversarial:
        table_[s] = adversarial(fabric, s, settings.adversarial_shift);
        break;
      case Pattern::kRouterShift:  // across the grid: every digit may change, not only digit 0
        table_[s] = (s / settings.k + 1) % fabric.routers() * settings.k + s % settings.k;
        break;
      case Pattern::kBitComplement:
        table_[s] = ~s & (n - 1);
        break;
      case Pattern::kTranspose: {
        const unsigned half = bits / 2;
        const uint32_t low = s & ((1u << half) - 1);
        table_[s] = (low << half) | (s >> half);
        break;
      }
      default:
        break;
    }
  }
}

uint32_t Traffic::destination(uint32_t source, Random& random) const {
  if (!table_.empty()) return table_[source];
  // Uniform: any terminal but the source.
  const uint32_t d = random.below(terminals_ - 1);
  return d >= source ? d + 1 : d;
}

// Pfister and Norton's model (001 L487) has N processors and N memory modules apart: every
// processor, the hot node's own included, sends h of its requests to the hot module and the
// rest to any module uniformly, its own among them. Here a terminal is both; a request to its
// own memory still crosses its router (in at its terminal port, out at the same port), so the
// hot terminal's link carries N r (h + (1 - h) / N) = r (1 + h (N - 1)) flits a cycle: the
// seed's saturation 1 / (1 + h (N - 1)) exactly. The seed's eq. 1.8 (001 L489) is OCR'd as
// "p_i(1 - h) + 2^{i+1} p_i h"; we read p_i as p (the subscript is the OCR's), so that at the
// last of log2 N stages the hot output's rate is p(1 - h) + N p h = p(1 + h(N - 1)).
Traffic::Draw Traffic::draw(uint32_t source, Random& random) const {
  if (pattern_ != Pattern::kHotspot) return {destination(source, random), false};
  if (random.chance(hot_fraction_)) return {hot_node_, true};
  return {random.below(terminals_), false};
}

std::vector<TraceRecord> parse_trace(std::istream& in, const std::string& name, uint32_t terminals,
                                     uint32_t max_size) {
  std::vector<TraceRecord> records;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::replace(line.begin(), line.end(), ',', ' ');
    std::replace(line.begin(), line.end(), '\t', ' ');
    std::vector<uint64_t> fields;
    const char* p = line.data();
    const char* end = p + line.size();
    bool bad = false;
    while (p < end) {
      if (*p == ' ' || *p == '\r') {
        ++p;
        continue;
      }
      uint64_t value = 0;
      auto [next, ec] = std::from_chars(p, end, value);
      if (ec != std::errc() || (next < end && *next != ' ' && *next != '\r')) {
        bad = true;
        break;
      }
      fields.push_back(value);
      p = next;
    }
    if (fields.empty() && !bad) continue;
    const std::string where = name + ":" + std::to_string(number) + ": ";
    if (bad || fields.size() != 4) {
      throw SimError(where + "expected 'time source destination size' (four unsigned integers)");
    }
    if (fields[1] >= terminals || fields[2] >= terminals) {
      throw SimError(where + "source and destination must be terminals 0.." +
                     std::to_string(terminals - 1));
    }
    if (fields[1] == fields[2]) throw SimError(where + "source and destination are the same");
    if (fields[3] == 0 || fields[3] > max_size) {
      throw SimError(where + "size must be 1.." + std::to_string(max_size) +
                     " flits (vc_buf_size)");
    }
    records.push_back({fields[0], static_cast<uint32_t>(fields[1]),
                       static_cast<uint32_t>(fields[2]), static_cast<uint32_t>(fields[3])});
  }
  std::stable_sort(records.begin(), records.end(),
                   [](const TraceRecord& a, const TraceRecord& b) { return a.time < b.time; });
  return records;
}

std::vector<TraceRecord> read_trace(const std::string& path, uint32_t terminals,
                                    uint32_t max_size) {
  std::ifstream in(path);
  if (!in) throw SimError("trace: cannot open '" + path + "'");
  return parse_trace(in, path, terminals, max_size);
}

}  // namespace asn::sim
