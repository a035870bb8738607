// Builds the RegisterBus the configuration's `backend` section asks for. Each backend reads
// its own keys: backend.emulated.* (whose storage directory defaults under state_dir) or
// backend.kernel.device; the other backend's section is not read.
#pragma once

#include <memory>

#include "bus/register_bus.hpp"
#include "config.hpp"

namespace asn {

// Throws asn::Error with the backend's reason when the board cannot be opened.
std::unique_ptr<RegisterBus> make_bus(const Config& config);

}  // namespace asn
