// Internal: a board profile with its own storage, so that a board never depends on the
// lifetime of the profile its opener passed in (a test's profile on the stack, say).
#pragma once

#include <string>
#include <vector>

#include "asn/regmap/types.hpp"

namespace asn::model::detail {

class OwnedProfile {
 public:
  explicit OwnedProfile(const regmap::BoardProfile& from)
      : name_(from.name),
        kind_name_(from.kind_name),
        description_(from.description),
        ports_(from.ports.begin(), from.ports.end()),
        capabilities_(from.capabilities.begin(), from.capabilities.end()),
        block_versions_(from.block_versions.begin(), from.block_versions.end()),
        view_{name_, kind_name_, from.kind, description_, ports_, capabilities_, block_versions_} {}
  OwnedProfile(const OwnedProfile&) = delete;
  OwnedProfile& operator=(const OwnedProfile&) = delete;

  const regmap::BoardProfile& get() const { return view_; }

 private:
  std::string name_;
  std::string kind_name_;
  std::string description_;
  std::vector<regmap::PortProfile> ports_;
  std::vector<uint32_t> capabilities_;
  std::vector<regmap::BlockVersion> block_versions_;
  regmap::BoardProfile view_;
};

}  // namespace asn::model::detail
