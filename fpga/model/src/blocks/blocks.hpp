// Internal: the constructors of the block models, one file each; registry.cc maps block
// types to them.
#pragma once

#include <memory>

#include "../block_model.hpp"

namespace asn::model::detail {

std::unique_ptr<BlockModel> make_port_model();
std::unique_ptr<BlockModel> make_route_model();
std::unique_ptr<BlockModel> make_tdm_model();
std::unique_ptr<BlockModel> make_stripe_model();
std::unique_ptr<BlockModel> make_lock_model();

}  // namespace asn::model::detail
