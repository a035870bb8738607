// The emulated board's bus: a bus offset decoded to a block's register word or table window,
// the access applied as its type says and told to the block's model; the clock (advance,
// run_clock's catch-up, the next event); and EmulatedBoard's public functions, each under the
// board's lock. Opening the board (the memory file, the image, the models' contract) is in
// board_open.cc.
#include "asn/model/board.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "board_impl.hpp"
#include "engines/board_router_view.hpp"

namespace asn::model {
namespace {

constexpr uint32_t kBusErrorValue = 0xffffffffu;

}  // namespace

bool EmulatedBoard::Impl::decode(uint32_t offset, Target& target) const {
  if (offset % 4 != 0 || offset >= layout.address_space_bytes) return false;
  // bases[0] == 0, so the block is the last one that starts at or below the offset.
  const auto it = std::upper_bound(layout.bases.begin(), layout.bases.end(), offset);
  const size_t i = static_cast<size_t>(it - layout.bases.begin()) - 1;
  const BlockInstance& block = layout.blocks[i];
  const uint32_t rel = offset - block.base;
  if (rel >= block.desc->size) return false;  // the gap before the next aligned block
  const detail::BlockDecode& decode = layout.decode[layout.decode_index[i]];

  for (const detail::WindowDecode& window : decode.windows) {
    if (rel < window.offset || rel - window.offset >= window.bytes) continue;
    const uint32_t within = rel - window.offset;
    // The window is sized for the largest board; this board implements fewer entries.
    if (within / window.entry_bytes >= window.entries) return false;
    unsigned bank = 0;
    if (window.double_buffered) {
      const bool active = (image[block.base / 4 + window.bank_word] & window.bank_mask) != 0;
      bank = window.active_window == active ? 1 : 0;
    }
    target =
        Target{i, nullptr, &window, (block.base + window.bank_offset[bank] + within) / 4, within};
    return true;
  }
  const size_t word = rel / 4;
  if (word >= decode.words.size() || !decode.words[word].mapped()) return false;
  target = Target{i, &decode.words[word], nullptr, offset / 4};
  return true;
}

void EmulatedBoard::Impl::catch_up(uint32_t offset, bool& ran) {
  if (ran || !time_source || offset >= layout.address_space_bytes) return;
  const auto it = std::upper_bound(layout.bases.begin(), layout.bases.end(), offset);
  const size_t block = static_cast<size_t>(it - layout.bases.begin()) - 1;
  if (!models_[block]->clocked()) return;
  ran = true;
  // Before the access is decoded: the clock may swap the banks a window shows.
  advance_to(time_source());
}

bool EmulatedBoard::Impl::read32(uint32_t offset, uint32_t& value) {
  bool ran = false;
  catch_up(offset, ran);
  Target target{};
  return read(decode(offset, target) ? &target : nullptr, offset, value);
}

bool EmulatedBoard::Impl::write32(uint32_t offset, uint32_t value) {
  bool ran = false;
  catch_up(offset, ran);
  Target target{};
  return write(decode(offset, target) ? &target : nullptr, offset, value);
}

bool EmulatedBoard::Impl::access(Op& op, Burst& burst) {
  if (!burst.clock_ran && time_source) {
    catch_up(op.offset, burst.clock_ran);
    // The clock may have swapped banks (or reset the board) under the run.
    if (burst.clock_ran) burst.window = nullptr;
  }
  if (burst.window != nullptr && op.offset == burst.next_offset) {
    const detail::WindowDecode& window = *burst.window;
    const uint32_t within = burst.within + 4;
    // Past the window, past the entries this board implements or a write to a read-only
    // window: decoded in full below, which answers as a single access would.
    if (within < window.bytes && within / window.entry_bytes < window.entries &&
        (!op.write || window.writable)) {
      burst = Burst{&window, op.offset + 4, within, burst.storage + 1, burst.clock_ran};
      if (op.write) {
        image[burst.storage] = op.value;
      } else {
        op.value = image[burst.storage];
      }
      return true;
    }
  }
  Target target{};
  const bool decoded = decode(op.offset, target);
  burst = Burst{.clock_ran = burst.clock_ran};
  if (decoded && target.window != nullptr) {
    burst = Burst{target.window, op.offset + 4, target.within, target.storage, burst.clock_ran};
  }
  const Target* at = decoded ? &target : nullptr;
  return op.write ? write(at, op.offset, op.value) : read(at, op.offset, op.value);
}

bool EmulatedBoard::Impl::read(const Target* target, uint32_t offset, uint32_t& value) {
  if (target == nullptr) {
    detail::RegisterView id = id_view();
    detail::IdBlockModel::bus_error(id, offset);
    value = kBusErrorValue;
    return false;
  }
  // Table words are plain RAM; in registers WO and reserved bits read as zero, whatever the
  // memory holds.
  value = image[target->storage];
  if (target->word != nullptr) value &= target->word->readable();
  return true;
}

bool EmulatedBoard::Impl::write(const Target* at, uint32_t offset, uint32_t value) {
  if (at == nullptr) {
    detail::RegisterView id = id_view();
    detail::IdBlockModel::bus_error(id, offset);
    return false;
  }
  const Target& target = *at;
  const bool writable = target.window ? target.window->writable : target.word->writable();
  if (!writable) {
    detail::RegisterView id = id_view();
    detail::IdBlockModel::ro_write(id);
    return true;
  }
  if (target.window != nullptr) {
    image[target.storage] = value;
    return true;
  }
  const detail::WordDecode& word = *target.word;
  const uint32_t old = image[target.storage];
  // RO bits keep their value, RW bits take the new one, W1C bits clear where a 1 is written;
  // WO and reserved bits are never stored.
  image[target.storage] = (old & word.ro) | (value & word.rw) | (old & word.w1c & ~value);
  detail::RegisterView v = view(target.block);
  models_[target.block]->on_write(*this, v, *word.reg, word.element, old, value);
  // An arm, a new configuration: the block's next event may have moved.
  if (models_[target.block]->clocked()) note_event();
  return true;
}

void EmulatedBoard::Impl::board_reset() {
  // The time base runs on through a reset: it counts a clock that PTP disciplines outside
  // the board's reset domain (for the emulated boards, the host's clock).
  std::optional<size_t> tdm;
  for (size_t i = 0; i < layout.blocks.size() && !tdm; ++i) {
    if (layout.blocks[i].desc->type == regs::tdm::kType) tdm = i;
  }
  const uint64_t time = tdm ? view(*tdm).get64(regs::tdm::kTime) : 0;
  header->generation = detail::next_generation(header->generation);
  init_image();
  if (tdm) view(*tdm).set64(regs::tdm::kTime, time);
  note_event();
}

void EmulatedBoard::Impl::advance(uint64_t cycles) {
  // The external reset input is sampled on the clock, as hardware samples a reset line.
  if (std::atomic_ref<uint32_t>(header->reset_request).exchange(0) != 0) board_reset();
  if (cycles == 0) return;
  for (size_t i = 0; i < models_.size(); ++i) {
    detail::RegisterView v = view(i);
    models_[i]->advance(*this, v, cycles);
  }
}

// The engine reads the ROUTE block and the PORT blocks, nothing else.
engines::RouteDecision EmulatedBoard::Impl::route_packet(const engines::PacketHeader& header,
                                                         uint32_t random) {
  size_t route = layout.blocks.size();
  std::vector<detail::RegisterView> ports;
  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    const uint16_t type = layout.blocks[i].desc->type;
    if (type == regs::route::kType) route = i;
    if (type == regs::port::kType) ports.push_back(view(i));
  }
  if (route == layout.blocks.size()) {
    engines::RouteDecision none;
    none.status = engines::RouteStatus::kBadConfig;
    return none;
  }
  detail::RegisterView route_view = view(route);
  const detail::engines::BoardRouterView router(route_view, ports, owned_profile.get());
  return engines::route_packet(router, header, random);
}

size_t EmulatedBoard::Impl::block_index(uint16_t type) const {
  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    if (layout.blocks[i].desc->type == type) return i;
  }
  throw std::out_of_range("the board has no block of type " + std::to_string(type));
}

void EmulatedBoard::Impl::advance_to(uint64_t time) {
  detail::RegisterView tdm = view(block_index(regs::tdm::kType));
  const uint64_t now = tdm.get64(regs::tdm::kTime);
  advance(time > now ? time - now : 0);
}

uint64_t EmulatedBoard::Impl::cycles_to_next_event() {
  // The external reset input is sampled on the clock: at once.
  if (std::atomic_ref<uint32_t>(header->reset_request).load() != 0) return 0;
  uint64_t soonest = kNoEvent;
  for (size_t i = 0; i < models_.size(); ++i) {
    detail::RegisterView v = view(i);
    soonest = std::min(soonest, models_[i]->cycles_to_event(*this, v));
  }
  return soonest;
}

void EmulatedBoard::Impl::set_traffic_pending(uint32_t slot, bool pending) {
  const size_t i = block_index(regs::tdm::kType);
  // The input changes now: the frames up to now ran with the old one.
  if (time_source) advance_to(time_source());
  detail::RegisterView tdm = view(i);
  if (slot >= regs::tdm::kTrafficPending.count * 32) {
    throw std::out_of_range("no slot " + std::to_string(slot));
  }
  const regmap::FieldRef word = regs::tdm::kTrafficPendingSlots.at(slot / 32);
  const uint32_t bit = 1u << (slot % 32);
  const uint32_t old = tdm.get(word);
  tdm.set(word, pending ? old | bit : old & ~bit);
  models_[i]->on_input(*this, tdm);
  note_event();  // PREEMPT's frames after the next boundary change length
}

void EmulatedBoard::Impl::set_queue_occupancy(unsigned port, unsigned vc, uint32_t packets) {
  for (size_t i = 0; i < layout.blocks.size(); ++i) {
    if (layout.blocks[i].desc->type != regs::port::kType || layout.blocks[i].index != port) {
      continue;
    }
    if (vc >= regs::port::kVcOccupancy.count) break;
    detail::RegisterView v = view(i);
    v.set(regs::port::kVcOccupancyPackets.at(vc), packets);
    return;
  }
  throw std::out_of_range("no queue " + std::to_string(vc) + " of port " + std::to_string(port));
}

bool EmulatedBoard::Impl::irq_pending() {
  detail::RegisterView id = id_view();
  return detail::IdBlockModel::irq_pending(id);
}

// ---------------------------------------------------------------------------------------
const OpenReport& EmulatedBoard::open_report() const { return impl_->report; }
const regmap::BoardProfile& EmulatedBoard::profile() const { return impl_->owned_profile.get(); }
const std::string& EmulatedBoard::name() const { return impl_->name; }
const std::string& EmulatedBoard::path() const { return impl_->path; }

bool EmulatedBoard::read32(uint32_t offset, uint32_t& value) {
  std::lock_guard lock(impl_->mu);
  return impl_->read32(offset, value);
}

bool EmulatedBoard::write32(uint32_t offset, uint32_t value) {
  std::lock_guard lock(impl_->mu);
  return impl_->write32(offset, value);
}

void EmulatedBoard::execute(std::span<Op> ops) {
  std::lock_guard lock(impl_->mu);
  Impl::Burst burst;
  for (Op& op : ops) op.ok = impl_->access(op, burst);
}

void EmulatedBoard::board_reset() {
  std::lock_guard lock(impl_->mu);
  impl_->board_reset();
}

void EmulatedBoard::advance(uint64_t cycles) {
  std::lock_guard lock(impl_->mu);
  impl_->advance(cycles);
}

void EmulatedBoard::run_clock(std::function<uint64_t()> time) {
  std::lock_guard lock(impl_->mu);
  impl_->time_source = std::move(time);
}

uint64_t EmulatedBoard::cycles_to_next_event() {
  std::lock_guard lock(impl_->mu);
  return impl_->cycles_to_next_event();
}

uint64_t EmulatedBoard::events() const { return impl_->events.load(std::memory_order_acquire); }

uint32_t EmulatedBoard::generation() const {
  std::lock_guard lock(impl_->mu);
  return impl_->header->generation;
}

uint32_t EmulatedBoard::address_space_bytes() const { return impl_->layout.address_space_bytes; }

uint64_t EmulatedBoard::dram_bytes() const { return impl_->dram_total(); }

std::span<const BlockInstance> EmulatedBoard::blocks() const { return impl_->layout.blocks; }

const BlockInstance* EmulatedBoard::find_block(uint16_t type, unsigned index) const {
  for (const BlockInstance& block : impl_->layout.blocks) {
    if (block.desc->type == type && block.index == index) return &block;
  }
  return nullptr;
}

bool EmulatedBoard::irq_pending() const {
  std::lock_guard lock(impl_->mu);
  return impl_->irq_pending();
}

engines::RouteDecision EmulatedBoard::route_packet(const engines::PacketHeader& header,
                                                   uint32_t random) {
  std::lock_guard lock(impl_->mu);
  return impl_->route_packet(header, random);
}

void EmulatedBoard::set_queue_occupancy(unsigned port, unsigned vc, uint32_t packets) {
  std::lock_guard lock(impl_->mu);
  impl_->set_queue_occupancy(port, vc, packets);
}

void EmulatedBoard::advance_to(uint64_t time) {
  std::lock_guard lock(impl_->mu);
  impl_->advance_to(time);
}

void EmulatedBoard::set_traffic_pending(uint32_t slot, bool pending) {
  std::lock_guard lock(impl_->mu);
  impl_->set_traffic_pending(slot, pending);
}

std::string EmulatedBoard::problem() const {
  std::lock_guard lock(impl_->mu);
  return impl_->file.problem();
}

}  // namespace asn::model
