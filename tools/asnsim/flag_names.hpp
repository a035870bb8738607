// asnsim's flags are spelt with dashes, as GNU tools and asnctl spell theirs; each is also
// taken with underscores, as BookSim and asnsim's config keys spell them (and asnsim did
// before issue 28), so that older command lines keep working.
#pragma once

#include <algorithm>
#include <sstream>
#include <string>

// "--num-vcs,--warmup" -> "--num-vcs,--num_vcs,--warmup": every dashed long name of a CLI11
// name list followed by its underscore spelling.
inline std::string with_underscore_aliases(const std::string& names) {
  std::string out;
  std::stringstream in(names);
  for (std::string name; std::getline(in, name, ',');) {
    out += (out.empty() ? "" : ",") + name;
    if (name.rfind("--", 0) == 0 && name.find('-', 2) != std::string::npos) {
      std::string underscores = name;
      std::replace(underscores.begin() + 2, underscores.end(), '-', '_');
      out += "," + underscores;
    }
  }
  return out;
}
