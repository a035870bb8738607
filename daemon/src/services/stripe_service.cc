#include "services/stripe_service.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <vector>

#include "services/grpc_status.hpp"

namespace asn {

namespace {

// A rebuild reports progress at most this often (the data path may call back per unit).
constexpr auto kProgressInterval = std::chrono::milliseconds(100);

StripeGroupSpec spec_of(const v1::GroupSpec& in) {
  StripeGroupSpec out;
  out.group = in.group();
  out.raid = static_cast<unsigned>(in.raid());
  if (in.raid() == v1::RAID_LEVEL_UNSPECIFIED) {
    throw Error(ErrorCode::kInvalidArgument, "raid: give the raid level, 4, 5 or 6");
  }
  out.data_ports.assign(in.data_ports().begin(), in.data_ports().end());
  out.parity_ports.assign(in.parity_ports().begin(), in.parity_ports().end());
  out.unit_bytes = in.unit_bytes();
  switch (in.durability()) {
    case v1::DURABILITY_UNSPECIFIED:  // not named: none for a new group, kept by an update
      break;
    case v1::DURABILITY_NONE:
      out.durability = StripeDurability::kNone;
      break;
    case v1::DURABILITY_FSYNC:
      out.durability = StripeDurability::kFsync;
      break;
    default:
      throw Error(
          ErrorCode::kInvalidArgument,
          fmt::format("durability: {} is not one of DURABILITY_NONE ({}), "
                      "DURABILITY_FSYNC ({}) (asnctl: --durability none|fsync); "
                      "nothing was changed",
                      static_cast<int>(in.durability()), static_cast<int>(v1::DURABILITY_NONE),
                      static_cast<int>(v1::DURABILITY_FSYNC)));
  }
  return out;
}

void fill(const StripeGroupView& view, v1::StripeGroup* out) {
  auto* spec = out->mutable_spec();
  spec->set_group(view.group);
  spec->set_raid(static_cast<v1::RaidLevel>(view.state.raid()));
  *spec->mutable_data_ports() = view.state.data_ports();
  *spec->mutable_parity_ports() = view.state.parity_ports();
  spec->set_unit_bytes(view.state.unit_bytes());
  spec->set_durability(view.state.durability() == static_cast<uint32_t>(StripeDurability::kFsync)
                           ? v1::DURABILITY_FSYNC
                           : v1::DURABILITY_NONE);
  for (uint32_t m : view.members()) out->add_members(m);
  *out->mutable_failed_ports() = view.state.failed_ports();
  *out->mutable_failed_why() = view.state.failed_why();
  out->set_stripe_bytes(view.stripe_bytes());
  out->set_file_size(view.file_size);
  out->set_board(view.board);
}

void fill(const StripeChange& change, v1::GroupResponse* out) {
  fill(change.group, out->mutable_group());
  out->set_revision(change.revision);
  out->set_changed(change.changed);
}

// A long call's progress (a rebuild's, a scrub's) as messages of `Message` on `writer`: the
// first at once, then at most one per kProgressInterval, and always the last.
template <typename Message>
auto progress_writer(grpc::ServerWriter<Message>* writer) {
  return [writer, last = std::chrono::steady_clock::now() - kProgressInterval](
             uint64_t done, uint64_t total) mutable {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < kProgressInterval && done < total) return;
    last = now;
    Message message;
    message.set_stripes_done(done);
    message.set_stripes_total(total);
    writer->Write(message);  // a client gone away only misses progress
  };
}

v1::ScrubFault fault_of(stripe::Mismatch mismatch) {
  switch (mismatch) {
    case stripe::Mismatch::kNone:
      break;
    case stripe::Mismatch::kP:
      return v1::SCRUB_FAULT_P;
    case stripe::Mismatch::kQ:
      return v1::SCRUB_FAULT_Q;
    case stripe::Mismatch::kData:
      return v1::SCRUB_FAULT_DATA;
    case stripe::Mismatch::kUnlocated:
      return v1::SCRUB_FAULT_UNLOCATED;
  }
  return v1::SCRUB_FAULT_UNSPECIFIED;
}

void fill(const StripeScrub& scrub, bool dry_run, v1::ScrubReport* out) {
  const stripe::ScrubReport& r = scrub.report;
  out->set_stripes_checked(r.stripes);
  out->set_mismatches(r.mismatches);
  out->set_repaired(r.repaired);
  out->set_bytes_read(r.bytes_read);
  out->set_dry_run(dry_run);
  const std::vector<uint32_t> members = scrub.group.members();
  for (const stripe::ScrubFinding& f : r.findings) {
    auto* m = out->add_stripes();
    m->set_stripe(f.stripe);
    m->set_offset(f.stripe * scrub.group.stripe_bytes());
    m->set_fault(fault_of(f.mismatch));
    if (f.mismatch != stripe::Mismatch::kUnlocated && f.member < members.size()) {
      m->set_port(members[f.member]);
    }
    m->set_repaired(f.repaired);
  }
}

}  // namespace

grpc::Status StripeService::CreateGroup(grpc::ServerContext* context,
                                        const v1::CreateGroupRequest* request,
                                        v1::GroupResponse* response) {
  return guarded("CreateGroup", [&] {
    authorizer_.require(Permission::kConfigure, "creating a stripe group", *context);
    const StripeChange change = stripe_.create(spec_of(request->spec()), request->validate_only());
    fill(change, response);
    if (change.changed) {
      spdlog::info("stripe: group {} created (RAID {}) by {}", request->spec().group(),
                   static_cast<int>(request->spec().raid()), authorizer_.principal(*context));
    }
  });
}

grpc::Status StripeService::UpdateGroup(grpc::ServerContext* context,
                                        const v1::UpdateGroupRequest* request,
                                        v1::GroupResponse* response) {
  return guarded("UpdateGroup", [&] {
    authorizer_.require(Permission::kConfigure, "changing a stripe group", *context);
    const StripeChange change =
        stripe_.update(spec_of(request->spec()), request->validate_only(), request->discard_file());
    fill(change, response);
    if (change.changed) {
      spdlog::info("stripe: group {} changed by {}", request->spec().group(),
                   authorizer_.principal(*context));
    }
  });
}

grpc::Status StripeService::DeleteGroup(grpc::ServerContext* context,
                                        const v1::DeleteGroupRequest* request,
                                        v1::DeleteGroupResponse* response) {
  return guarded("DeleteGroup", [&] {
    authorizer_.require(Permission::kConfigure, "deleting a stripe group", *context);
    const StripeChange change = stripe_.remove(request->group(), request->validate_only());
    fill(change.group, response->mutable_group());
    response->set_revision(change.revision);
    if (change.changed) {
      spdlog::info("stripe: group {} deleted by {}", request->group(),
                   authorizer_.principal(*context));
    }
  });
}

grpc::Status StripeService::ListGroups(grpc::ServerContext*, const v1::ListGroupsRequest*,
                                       v1::ListGroupsResponse* response) {
  return guarded("ListGroups", [&] {
    authorizer_.require(Permission::kRead, "listing the stripe groups");
    for (const auto& group : stripe_.list()) fill(group, response->add_groups());
    response->set_capacity(stripe_.capacity());
    response->set_revision(stripe_.revision());
    response->set_data_path(stripe_.has_data_path());
  });
}

grpc::Status StripeService::GetGroupStats(grpc::ServerContext*,
                                          const v1::GetGroupStatsRequest* request,
                                          v1::GetGroupStatsResponse* response) {
  return guarded("GetGroupStats", [&] {
    authorizer_.require(Permission::kRead, "reading a stripe group's counters");
    const StripeStats stats = stripe_.stats(request->group());
    fill(stats.group, response->mutable_group());
    for (const auto& m : stats.members) {
      auto* out = response->add_members();
      out->set_port(m.port);
      out->set_role(m.parity ? "parity" : "data");
      out->set_failed(m.failed);
      out->set_units(m.units);
      out->set_bytes(m.bytes);
    }
    response->set_data_units(stats.data_units);
    response->set_parity_units(stats.parity_units);
    response->set_bytes_striped(stats.bytes_striped);
    response->set_errors(stats.errors);
    response->set_bytes_read(stats.bytes_read);
    response->set_units_rebuilt(stats.units_rebuilt);
  });
}

grpc::Status StripeService::FailMember(grpc::ServerContext* context,
                                       const v1::MemberRequest* request,
                                       v1::GroupResponse* response) {
  return guarded("FailMember", [&] {
    authorizer_.require(Permission::kConfigure, "failing a stripe group member", *context);
    const StripeChange change = stripe_.fail_member(request->group(), request->port());
    fill(change, response);
    if (!change.changed) return;
    spdlog::warn("stripe: group {} member port {} marked failed by {}", request->group(),
                 request->port(), authorizer_.principal(*context));
  });
}

grpc::Status StripeService::RebuildMember(grpc::ServerContext* context,
                                          const v1::MemberRequest* request,
                                          grpc::ServerWriter<v1::RebuildProgress>* writer) {
  return guarded("RebuildMember", [&] {
    authorizer_.require(Permission::kConfigure, "rebuilding a stripe group member", *context);
    // The data path counts stripes (bus/stripe_data_port.hpp allows bytes or stripes; the
    // emulated board's says stripes).
    const auto progress = progress_writer<v1::RebuildProgress>(writer);
    const StripeChange change = stripe_.rebuild_member(request->group(), request->port(), progress);
    v1::RebuildProgress message;
    message.set_finished(true);
    fill(change.group, message.mutable_group());
    writer->Write(message);
    spdlog::info("stripe: group {} member port {} rebuilt by {}", request->group(), request->port(),
                 authorizer_.principal(*context));
  });
}

grpc::Status StripeService::Scrub(grpc::ServerContext* context, const v1::ScrubRequest* request,
                                  grpc::ServerWriter<v1::ScrubProgress>* writer) {
  return guarded("Scrub", [&] {
    const bool repair = request->repair();
    if (repair) {
      authorizer_.require(Permission::kConfigure, "repairing a stripe group", *context);
    } else {
      authorizer_.require(Permission::kRead, "checking a stripe group's parity");
    }
    if (!stripe_.has_data_path()) throw Error(ErrorCode::kFailedPrecondition, kNoDataPath);
    if (request->validate_only() && !repair) {
      throw Error(ErrorCode::kInvalidArgument,
                  "validate_only: a check writes nothing already; give it with repair only");
    }
    const auto progress = progress_writer<v1::ScrubProgress>(writer);
    const StripeScrub scrub =
        stripe_.scrub(request->group(), repair, request->validate_only(), progress);
    v1::ScrubProgress message;
    message.set_finished(true);
    fill(scrub, repair && request->validate_only(), message.mutable_report());
    fill(scrub.group, message.mutable_group());
    writer->Write(message);
    const auto& r = scrub.report;
    if (r.mismatches != 0) {
      spdlog::warn("stripe: group {} {}: {} of {} stripes did not match their parity, {} repaired",
                   request->group(), repair ? "repair" : "check", r.mismatches, r.stripes,
                   r.repaired);
    }
    if (repair && r.repaired != 0) {
      spdlog::info("stripe: group {} repaired by {}", request->group(),
                   authorizer_.principal(*context));
    }
  });
}

grpc::Status StripeService::Write(
    grpc::ServerContext* context,
    grpc::ServerReaderWriter<v1::WriteReply, v1::WriteRequest>* stream) {
  return guarded("Write", [&] {
    authorizer_.require(Permission::kConfigure, "writing a stripe group's file", *context);
    if (!stripe_.has_data_path()) throw Error(ErrorCode::kFailedPrecondition, kNoDataPath);
    v1::WriteRequest request;
    if (!stream->Read(&request)) {
      throw Error(ErrorCode::kInvalidArgument, "the write named no group: the stream was empty");
    }
    StripeStreamWriter writer(stripe_, request.group(), request.offset());
    const auto reply = [&](bool done) {
      v1::WriteReply message;
      message.set_acked(writer.acked());
      message.set_file_size(writer.file_size());
      message.set_done(done);
      stream->Write(message);
    };
    do {
      const uint64_t before = writer.acked();
      writer.add({reinterpret_cast<const uint8_t*>(request.data().data()), request.data().size()});
      if (writer.acked() != before) reply(false);
    } while (stream->Read(&request));
    if (context->IsCancelled()) {
      throw Error(
          ErrorCode::kAborted,
          fmt::format("the client cancelled the write; {} bytes were written", writer.acked()));
    }
    writer.finish();
    reply(true);
  });
}

grpc::Status StripeService::Read(grpc::ServerContext*, const v1::ReadRequest* request,
                                 grpc::ServerWriter<v1::ReadChunk>* writer) {
  return guarded("Read", [&] {
    authorizer_.require(Permission::kRead, "reading a stripe group's file");
    if (!stripe_.has_data_path()) throw Error(ErrorCode::kFailedPrecondition, kNoDataPath);
    uint64_t offset = request->offset();
    if (request->length() > ~uint64_t{0} - offset) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("length: offset + length wraps past 2^64 (offset {}, length {}); "
                              "give a length of at most 2^64 - 1 - offset, or 0 for the rest "
                              "of the file",
                              offset, request->length()));
    }
    const uint64_t size = stripe_.file_size(request->group());
    const uint64_t end = request->length() == 0 ? size : std::min(size, offset + request->length());
    v1::ReadChunk chunk;
    chunk.set_file_size(size);
    std::string* data = chunk.mutable_data();
    bool first = true;
    while (offset < end || first) {
      const size_t want = static_cast<size_t>(
          std::min<uint64_t>(offset < end ? end - offset : 0, kStripeChunkBytes));
      data->resize(want);
      const size_t got = want == 0 ? 0
                                   : stripe_.read(request->group(), offset,
                                                  {reinterpret_cast<uint8_t*>(data->data()), want});
      data->resize(got);
      if (!writer->Write(chunk)) return;  // the client went away
      chunk.clear_file_size();
      offset += got;
      first = false;
      if (got == 0) break;
    }
  });
}

}  // namespace asn
