#include "device_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "asn/version.hpp"
#include "grpc_status.hpp"

namespace asn {

namespace {

// Batches larger than this are refused rather than tying up the bus for one caller.
constexpr int kMaxBatch = 4096;

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
      return ref.name();
    case v1::RegisterRef::kOffset:
      return fmt::format("0x{:x}", ref.offset());
    default:
      return "(empty)";
  }
}

void check_batch(int size, std::string_view what) {
  if (size == 0) {
    throw Error(ErrorCode::kInvalidArgument, fmt::format("no {} given", what));
  }
  if (size > kMaxBatch) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("{} {} in one call; at most {}", size, what, kMaxBatch));
  }
}

// gRPC names a Unix-socket peer just "unix:"; say it in words in the log.
std::string describe_peer(const std::string& peer) {
  return peer.rfind("unix:", 0) == 0 ? "a client on the Unix socket" : peer;
}

}  // namespace

bool AdminPolicy::allows(const std::string& peer) const {
  return peer.rfind("unix:", 0) == 0 || tcp_admin;
}

DeviceService::DeviceService(Device& device, DaemonIdentity identity, AdminPolicy policy)
    : device_(device), identity_(std::move(identity)), policy_(policy) {}

void DeviceService::require_admin(grpc::ServerContext* context, std::string_view operation) const {
  if (!policy_.allows(context->peer())) {
    throw Error(ErrorCode::kPermissionDenied,
                fmt::format("{} is an admin operation: use asnd's Unix socket, or set "
                            "listen.tcp_admin: true in asnd.yaml",
                            operation));
  }
}

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
    response->set_backend(identity_.backend);
    response->set_board_name(identity_.board_name);
    response->set_profile(identity_.profile);
    response->set_board_kind(board_kind_name(device_.board_kind()));
    response->set_regmap_version(
        fmt::format("{}.{}", device_.regmap_major(), device_.regmap_minor()));
    const Capabilities& caps = device_.capabilities();
    auto* c = response->mutable_capabilities();
    c->set_ports(caps.ports);
    c->set_vcs_per_port(caps.vcs_per_port);
    c->set_queue_depth(caps.queue_depth);
    c->set_tdm_slots(caps.tdm_slots);
    c->set_route_entries(caps.route_entries);
    c->set_stripe_groups(caps.stripe_groups);
    c->set_lock_entries(caps.lock_entries);
    c->set_clock_hz(caps.clock_hz);
    response->set_generation(device_.read(regs::id::kGeneration));
    response->set_asnd_version(std::string(kVersion));
    response->set_uptime_seconds(
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                  std::chrono::steady_clock::now() - identity_.started)
                                  .count()));
    for (const auto& block : device_.blocks()) {
      auto* b = response->add_blocks();
      b->set_name(block.name);
      b->set_type(block.desc->type);
      b->set_version(block.desc->version);
      b->set_base(block.base);
      b->set_size(block.desc->size);
    }
    for (unsigned p = 0; p < caps.ports; ++p) {
      auto* port = response->add_ports();
      port->set_index(p);
      port->set_media(port_media_name(device_.read(regs::port::kPortInfoMedia, p)));
      port->set_speed_mbps(device_.read(regs::port::kSpeedMbps, p));
      port->set_enabled(device_.read(regs::port::kControlEnable, p) != 0);
      port->set_link_up(device_.read(regs::port::kLinkUp, p) != 0);
    }
    response->set_bus_errors(device_.read(regs::id::kBusErrorCount));
    response->set_ro_writes(device_.read(regs::id::kRoWriteCount));
    response->set_irq_status(device_.read(regs::id::kIrqStatus));
  });
}

grpc::Status DeviceService::ReadRegisters(grpc::ServerContext*,
                                          const v1::ReadRegistersRequest* request,
                                          v1::ReadRegistersResponse* response) {
  return guarded("ReadRegisters", [&] {
    check_batch(request->items_size(), "registers to read");
    for (const auto& ref : request->items()) {
      auto* result = response->add_results();
      *result->mutable_ref() = ref;
      // Each item stands alone: a bad name is that item's error, not the call's.
      try {
        Target target = resolve(ref);
        fill_value(target, device_.read(target), result->mutable_value());
      } catch (const Error& e) {
        result->mutable_error()->set_code(std::string(code_name(e.code())));
        result->mutable_error()->set_message(e.what());
      }
    }
  });
}

grpc::Status DeviceService::WriteRegisters(grpc::ServerContext* context,
                                           const v1::WriteRegistersRequest* request,
                                           v1::WriteRegistersResponse* response) {
  return guarded("WriteRegisters", [&] {
    require_admin(context, "writing registers");
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
        items.emplace_back(std::move(target), item.value());
      } catch (const Error& e) {
        if (!first_code) first_code = e.code();
        problems.push_back(
            fmt::format("item {} ({}): {}", i + 1, describe_ref(item.ref()), e.what()));
      }
    }
    if (!problems.empty()) {
      std::string message;
      for (const auto& p : problems) message += p + "; ";
      message += "nothing was written";
      throw Error(*first_code, message);
    }
    device_.write(items);
    for (const auto& [target, value] : items) {
      spdlog::info("register write: {} (0x{:x}) = 0x{:x} by {}", target.name, target.offset, value,
                   describe_peer(context->peer()));
      fill_value(target, value, response->add_results());
    }
  });
}

grpc::Status DeviceService::DumpRegisters(grpc::ServerContext* context,
                                          const v1::DumpRegistersRequest* request,
                                          grpc::ServerWriter<v1::RegisterValue>* writer) {
  return guarded("DumpRegisters", [&] {
    for (const auto& target : device_.enumerate(request->block(), request->include_tables())) {
      if (context->IsCancelled()) {
        throw Error(ErrorCode::kAborted, "the client cancelled the dump");
      }
      v1::RegisterValue value;
      fill_value(target, device_.read(target), &value);
      if (!writer->Write(value)) return;  // the client went away
    }
  });
}

grpc::Status DeviceService::ResetBoard(grpc::ServerContext* context, const v1::ResetBoardRequest*,
                                       v1::ResetBoardResponse* response) {
  return guarded("ResetBoard", [&] {
    require_admin(context, "resetting the board");
    uint32_t before = device_.read(regs::id::kGeneration);
    uint32_t after = device_.reset_board();
    spdlog::warn("board reset by {}: generation {} -> {}", describe_peer(context->peer()), before,
                 after);
    response->set_generation_before(before);
    response->set_generation_after(after);
  });
}

}  // namespace asn
