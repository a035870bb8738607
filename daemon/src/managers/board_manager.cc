#include "managers/board_manager.hpp"

#include <spdlog/spdlog.h>

namespace asn {

ResetResult BoardManager::reset(const std::string& who) {
  uint32_t before = 0;
  const uint32_t after = reconciler_.reset_board(who, [&] {
    before = device_.read(regs::id::kGenerationValue);
    const uint32_t generation = device_.reset_board();
    spdlog::warn("board reset by {}: generation {} -> {}", who, before, generation);
    return generation;
  });
  return {before, after};
}

}  // namespace asn
