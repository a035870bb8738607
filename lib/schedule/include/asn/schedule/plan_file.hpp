// Reading and writing plan files (YAML; docs/schedule-format.md). The reader checks the
// structure and the types of every key; the rules that need a board (ports, slots, the clock)
// and the rules between keys (policy and wormhole, guard band and slot) are validate()'s.
//
// Hostile input fails fast and in bounded memory: the limits below are checked before and
// while the YAML is parsed (the file size and line count before yaml-cpp sees a byte; the
// node count and nesting depth as yaml-cpp reports each node; aliases, which could expand a
// small file into a huge tree, are refused), and every limit is named in its error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "asn/schedule/error.hpp"
#include "asn/schedule/plan.hpp"

namespace asn::schedule {

struct ParseLimits {
  // yaml-cpp reads about 5 MB/s and the tree takes up to ~400 bytes a value, so these bound
  // a hostile file to about a second and 100 MB. The largest explicit phase a board takes,
  // 1024 slots of 64 connections, is about 0.7 MB and 67,000 values; larger plans are
  // better written with generators, or read with raised limits.
  size_t max_file_bytes = size_t{4} << 20;  // 4 MiB
  size_t max_lines = 262144;
  size_t max_line_bytes = 65536;
  // A flow collection ([...] or {...}): yaml-cpp reads one whole, at a few hundred bytes a
  // token, before it reports what is inside. A slot of 64 connections is about 700 bytes.
  size_t max_flow_bytes = 262144;
  size_t max_nodes = 262144;  // YAML scalars, sequences and maps
  size_t max_depth = 32;      // nesting of sequences and maps (a plan needs 7)
  size_t max_scalar_bytes = 65536;
  // Connections in the whole plan once repeats and generators are expanded (16 bytes each).
  size_t max_connections = size_t{1} << 21;
  size_t max_phases = 1024;
  size_t max_switches = 1024;
  size_t max_slots = 65535;   // per part: tdm.slots_in_use is 16 bits
  uint32_t max_port = 65535;  // port numbers; a board's own limit is validate()'s
};

// Parses plan text. `file` names it in errors. Throws PlanError (kInvalidArgument) whose
// problem has the file, line, column, the key and what would be accepted.
Plan parse_plan(std::string_view text, std::string file = "<plan>", const ParseLimits& limits = {});

// Reads and parses a plan file (reading at most max_file_bytes + 1 bytes of it).
Plan load_plan_file(const std::string& path, const ParseLimits& limits = {});

// The text of a plan or fabric file, read in chunks up to one byte past `max_bytes` (so that
// a file such as /dev/zero does not fill memory, and a parser given the text names the
// limit). Throws PlanError naming the path and what could not be read (`what`: "plan file").
std::string read_limited(const std::string& path, size_t max_bytes, std::string_view what);

// Writes a plan back as YAML that parse_plan() reads into the same plan: explicit slots as
// they stand (so a compiled plan is written with its slots), patterns as connection lists,
// lengths as written. Used for `asnctl schedule compile -o yaml` and the fabric compiler's
// output.
std::string format_plan(const Plan& plan);

}  // namespace asn::schedule
