#include "services/device_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>

#include "asn/text/text.hpp"
#include "asn/version.hpp"
#include "device/resolver.hpp"
#include "services/grpc_status.hpp"
#include "services/support.hpp"

namespace asn {

namespace {

// Targets a dump reads per bus transaction: large enough to amortise the call, small enough
// that a slow client never makes asnd hold much.
constexpr size_t kDumpChunk = 512;

void fill_value(const Target& target, uint64_t value, v1::RegisterValue* out) {
  out->set_name(target.name);
  out->set_offset(target.offset);
  out->set_value(value);
  out->set_width_bits(target.width_bits);
  out->set_access(std::string(regmap::to_string(target.access)));
  out->set_description(std::string(target.description));
}

std::string describe_ref(const v1::RegisterRef& ref) {
  switch (ref.target_case()) {
    case v1::RegisterRef::kName:
      return text::quoted(ref.name(), 64);
    case v1::RegisterRef::kOffset:
      return fmt::format("0x{:x}", ref.offset());
    default:
      return "(empty)";
  }
}

void fill_capabilities(const DeviceLayout& layout, v1::DeviceInfo* response) {
  const auto& values = layout.caps.values();
  for (size_t i = 0; i < values.size(); ++i) {
    auto* c = response->add_capabilities();
    const regmap::CapabilityDesc* desc = layout.caps.desc(i);
    c->set_name(desc ? std::string(desc->name) : fmt::format("cap{}", i));
    c->set_index(static_cast<uint32_t>(i));
    c->set_value(values[i]);
    if (desc) c->set_description(std::string(desc->description));
  }
}

}  // namespace

DeviceService::DeviceService(Device& device, BoardManager& board, Reconciler& reconciler,
                             Authorizer authorizer, std::chrono::steady_clock::time_point started,
                             std::shared_ptr<StreamLimiter> streams)
    : device_(device),
      board_(board),
      reconciler_(reconciler),
      authorizer_(std::move(authorizer)),
      started_(started),
      streams_(std::move(streams)) {}

Target DeviceService::resolve(const v1::RegisterRef& ref) const {
  switch (ref.target_case()) {
    case v1::RegisterRef::kName:
      return device_.resolve(ref.name());
    case v1::RegisterRef::kOffset:
      return device_.resolve(ref.offset());
    default:
      throw Error(ErrorCode::kInvalidArgument, "an item names neither a register nor an offset");
  }
}

grpc::Status DeviceService::GetInfo(grpc::ServerContext*, const v1::GetInfoRequest*,
                                    v1::DeviceInfo* response) {
  return guarded("GetInfo", [&] {
    authorizer_.require(Permission::kRead, "reading the board's information");
    const auto layout = device_.layout();
    const BoardIdentity identity = device_.bus().identity();
    const unsigned ports = layout->caps.get(regmap::Cap::kPorts);

    // Everything read from the board in one bus transaction.
    Device::ReadBatch batch;
    const size_t generation = batch.add(regs::id::kGenerationValue);
    const size_t bus_errors = batch.add(regs::id::kBusErrorCount);
    const size_t ro_writes = batch.add(regs::id::kRoWriteCount);
    const size_t irq = batch.add(regs::id::kIrqStatus);
    const size_t first_port = batch.add(regs::port::kPortInfoMedia, 0);
    for (unsigned p = 0; p < ports; ++p) {
      if (p > 0) batch.add(regs::port::kPortInfoMedia, p);
      batch.add(regs::port::kSpeedMbps, p);
      batch.add(regs::port::kControlEnable, p);
      batch.add(regs::port::kLinkUp, p);
    }
    device_.read(batch);

    response->set_backend(identity.backend);
    response->set_board_name(identity.name);
    response->set_profile(identity.profile);
    response->set_board_location(identity.location);
    response->set_board_kind(board_kind_name(layout->kind));
    response->set_regmap_version(fmt::format("{}.{}", layout->major, layout->minor));
    fill_capabilities(*layout, response);
    response->set_generation(static_cast<uint32_t>(batch[generation]));
    response->set_asnd_version(std::string(kVersion));
    response->set_uptime_seconds(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::steady_clock::now() - started_)
                                  .count()));
    for (const auto& block : layout->blocks) {
      auto* b = response->add_blocks();
      b->set_name(block.name);
      b->set_type(block.desc->type);
      b->set_version(block.version);
      b->set_base(block.base);
      b->set_size(block.desc->size);
    }
    for (unsigned p = 0; p < ports; ++p) {
      const size_t at = first_port + 4 * p;
      auto* port = response->add_ports();
      port->set_index(p);
      port->set_media(port_media_name(static_cast<uint32_t>(batch[at])));
      port->set_speed_mbps(static_cast<uint32_t>(batch[at + 1]));
      port->set_enabled(batch[at + 2] != 0);
      port->set_link_up(batch[at + 3] != 0);
    }
    response->set_bus_errors(static_cast<uint32_t>(batch[bus_errors]));
    response->set_ro_writes(static_cast<uint32_t>(batch[ro_writes]));
    response->set_irq_status(static_cast<uint32_t>(batch[irq]));
    for (const auto& s : reconciler_.summaries()) {
      auto* out = response->add_state();
      out->set_manager(s.manager);
      out->set_status(s.status);
      out->set_revision(s.revision);
      out->set_last_restore(s.last_restore);
      if (s.problem) response->add_warnings(fmt::format("{} state: {}", s.manager, s.status));
    }
  });
}

grpc::Status DeviceService::ReadRegisters(grpc::ServerContext*,
                                          const v1::ReadRegistersRequest* request,
                                          v1::ReadRegistersResponse* response) {
  return guarded("ReadRegisters", [&] {
    authorizer_.require(Permission::kRead, "reading registers");
    check_batch(request->items_size(), "registers to read");
    // Each item stands alone: a bad name is that item's error, not the call's. The good
    // ones are read in one bus transaction.
    std::vector<Target> targets;
    std::vector<v1::ReadResult*> results;
    for (const auto& ref : request->items()) {
      auto* result = response->add_results();
      *result->mutable_ref() = ref;
      try {
        targets.push_back(resolve(ref));
        results.push_back(result);
      } catch (const Error& e) {
        result->mutable_error()->set_code(std::string(code_name(e.code())));
        result->mutable_error()->set_message(e.what());
      }
    }
    const std::vector<uint64_t> values = device_.read(targets);
    for (size_t i = 0; i < targets.size(); ++i) {
      fill_value(targets[i], values[i], results[i]->mutable_value());
    }
  });
}

void DeviceService::write_board_reset(grpc::ServerContext* context,
                                      const v1::WriteRegistersRequest& request,
                                      const Target& target, v1::WriteRegistersResponse* response) {
  if (request.items_size() != 1) {
    throw Error(ErrorCode::kInvalidArgument,
                "id.control.board_reset resets the board: write it alone (or use `asnctl board "
                "reset`); nothing was written");
  }
  authorizer_.require(Permission::kRegisters, "resetting the board", *context);
  board_.reset(authorizer_.principal(*context) + " (register write)");
  fill_value(target, request.items(0).value(), response->add_results());
}

grpc::Status DeviceService::WriteRegisters(grpc::ServerContext* context,
                                           const v1::WriteRegistersRequest* request,
                                           v1::WriteRegistersResponse* response) {
  return guarded("WriteRegisters", [&] {
    authorizer_.require(Permission::kRegisters, "writing registers", *context);
    check_batch(request->items_size(), "registers to write");
    // Verify every item, then commit: one bad item and nothing is written.
    std::vector<std::pair<Target, uint64_t>> items;
    std::vector<std::string> problems;
    std::optional<ErrorCode> first_code;
    for (int i = 0; i < request->items_size(); ++i) {
      const auto& item = request->items(i);
      try {
        Target target = resolve(item.ref());
        device_.check_write(target, item.value());
        const uint64_t reset_bit =
            target.mask == 0xffffffffu ? regs::id::kControlBoardReset.mask() : uint64_t{1};
        if (target.board_reset && (item.value() & reset_bit) != 0) {
          write_board_reset(context, *request, target, response);
          return;
        }
        items.emplace_back(std::move(target), item.value());
      } catch (const Error& e) {
        if (!first_code) first_code = e.code();
        problems.push_back(
            fmt::format("item {} ({}): {}", i + 1, describe_ref(item.ref()), e.what()));
      }
    }
    if (!problems.empty()) throw Error(*first_code, join_problems(problems, "nothing was written"));
    device_.write(items);
    const std::string who = authorizer_.principal(*context);
    for (const auto& [target, value] : items) {
      spdlog::info("register write: {} (0x{:x}) = 0x{:x} by {}", target.name, target.offset, value,
                   who);
      fill_value(target, value, response->add_results());
    }
  });
}

namespace {

// One dump: a cursor over the board's targets, a chunk of values read in one bus
// transaction, written one message at a time as the client takes them.
class DumpReactor final : public grpc::ServerWriteReactor<v1::RegisterValue> {
 public:
  DumpReactor(grpc::CallbackServerContext* context, Device& device, StreamLimiter& streams)
      : context_(context), device_(device), streams_(streams) {}

  void start(const Authorizer& authorizer, const v1::DumpRegistersRequest& request) {
    grpc::Status status = guarded("DumpRegisters", [&] {
      authorizer.require(Permission::kRead, "dumping registers");
      cursor_.emplace(device_.layout(), request.block(), request.include_tables());
      streams_.add(context_);
      registered_ = true;
    });
    if (!status.ok()) {
      Finish(status);
      return;
    }
    next();
  }

  void OnWriteDone(bool ok) override {
    streams_.written(context_);
    if (!ok) {
      // The client went away, or the stream was cancelled for not reading.
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the dump was cancelled"));
      return;
    }
    next();
  }

  void OnDone() override {
    if (registered_) streams_.remove(context_);
    delete this;
  }

 private:
  void next() {
    if (at_ == chunk_.size()) {
      grpc::Status status = guarded("DumpRegisters", [&] {
        const std::vector<Target> targets = cursor_->next(kDumpChunk);
        const std::vector<uint64_t> values = device_.read(targets);
        chunk_.resize(targets.size());
        for (size_t i = 0; i < targets.size(); ++i) fill_value(targets[i], values[i], &chunk_[i]);
        at_ = 0;
      });
      if (!status.ok() || chunk_.empty()) {
        Finish(status);
        return;
      }
    }
    streams_.writing(context_);
    StartWrite(&chunk_[at_++]);
  }

  grpc::CallbackServerContext* context_;
  Device& device_;
  StreamLimiter& streams_;
  bool registered_ = false;
  std::optional<TargetCursor> cursor_;
  std::vector<v1::RegisterValue> chunk_;
  size_t at_ = 0;
};

}  // namespace

grpc::ServerWriteReactor<v1::RegisterValue>* DeviceService::DumpRegisters(
    grpc::CallbackServerContext* context, const v1::DumpRegistersRequest* request) {
  auto* reactor = new DumpReactor(context, device_, *streams_);
  reactor->start(authorizer_, *request);
  return reactor;
}

grpc::Status DeviceService::ResetBoard(grpc::ServerContext* context, const v1::ResetBoardRequest*,
                                       v1::ResetBoardResponse* response) {
  return guarded("ResetBoard", [&] {
    authorizer_.require(Permission::kRegisters, "resetting the board", *context);
    const ResetResult result = board_.reset(authorizer_.principal(*context));
    response->set_generation_before(result.generation_before);
    response->set_generation_after(result.generation_after);
  });
}

}  // namespace asn
