// The Locks service's Batch stream (locks.proto): a bidirectional stream of LockBatch
// messages, each op run through LockOps as its unary call would be, the results written back
// as they come, those that arrive while a write is in flight together in the next message.
#pragma once

#include <grpcpp/grpcpp.h>

#include "asn/v1/locks.grpc.pb.h"
#include "services/auth.hpp"
#include "services/lock_ops.hpp"

namespace asn {

// A reactor for one Batch stream; it deletes itself once gRPC is done with it and every
// lock it started has ended. It stops reading ops while more than `max_queued_bytes` of
// results wait to be written (locks.batch_reply_queue_bytes).
grpc::ServerBidiReactor<v1::LockBatch, v1::LockBatchReply>* start_batch(
    const LockOps& ops, const Authorizer& authorizer, grpc::CallbackServerContext* context,
    size_t max_queued_bytes);

}  // namespace asn
