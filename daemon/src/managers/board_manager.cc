#include "managers/board_manager.hpp"

#include <spdlog/spdlog.h>

namespace asn {

ResetResult BoardManager::reset(const std::string& who) {
  const uint32_t before = device_.read(regs::id::kGenerationValue);
  const uint32_t after = device_.reset_board();
  spdlog::warn("board reset by {}: generation {} -> {}", who, before, after);
  reconciler_.board_was_reset(after, who);
  return {before, after};
}

}  // namespace asn
