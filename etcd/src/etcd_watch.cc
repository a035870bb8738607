#include "etcd_watch.hpp"

#include <fmt/format.h>

#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace asn::etcd {

namespace pb = etcdserverpb;

WatchEnd Watcher::run(int64_t start_revision, const OnEvents& on_events) {
  Client::Connection connection;
  try {
    connection = client_.connect();
  } catch (const Error& e) {
    return WatchEnd{false, 0, e.what()};
  }
  grpc::ClientContext context;
  if (!connection.token.empty()) context.AddMetadata("token", connection.token);
  {
    std::lock_guard lock(mutex_);
    if (cancelled_) return WatchEnd{true, 0, {}};
    context_ = &context;
  }
  auto forget_context = [this] {
    std::lock_guard lock(mutex_);
    context_ = nullptr;
    return cancelled_;
  };

  auto stub = pb::Watch::NewStub(connection.channel);
  auto stream = stub->Watch(&context);
  pb::WatchRequest request;
  pb::WatchCreateRequest* create = request.mutable_create_request();
  create->set_key(prefix_);
  create->set_range_end(prefix_end(prefix_));
  create->set_start_revision(start_revision);
  WatchEnd end;
  if (stream->Write(request)) {
    pb::WatchResponse response;
    while (stream->Read(&response)) {
      if (response.compact_revision() > 0) {
        end.compacted_to = response.compact_revision();
        break;
      }
      if (response.canceled()) {
        end.error = fmt::format("etcd at {} cancelled the watch: {}", connection.endpoint,
                                response.cancel_reason());
        break;
      }
      if (response.events_size() == 0) continue;  // created, progress
      std::vector<WatchEvent> events;
      events.reserve(response.events_size());
      for (const auto& e : response.events()) {
        const auto& kv = e.kv();
        events.push_back(WatchEvent{e.type() == mvccpb::Event::DELETE,
                                    KeyValue{kv.key(), kv.value(), kv.create_revision(),
                                             kv.mod_revision(), kv.version(), kv.lease()}});
      }
      on_events(events, response.header().revision());
    }
  }
  context.TryCancel();
  const grpc::Status status = stream->Finish();
  if (forget_context()) return WatchEnd{true, 0, {}};
  if (end.compacted_to == 0 && end.error.empty()) {
    end.error = fmt::format("the watch stream to etcd at {} ended: {}", connection.endpoint,
                            status.ok() ? "closed by the member" : status.error_message());
    client_.mark_failed(connection.endpoint);
  }
  return end;
}

void Watcher::cancel() {
  std::lock_guard lock(mutex_);
  cancelled_ = true;
  if (context_) context_->TryCancel();
}

}  // namespace asn::etcd
