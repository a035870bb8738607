// gRPC Locks service: byte-range file locks through the LockManager (proto/asn/v1/locks.proto).
// Served with gRPC's callback API, so that a Lock call that waits holds no server thread: it
// is a reactor the LockManager finishes when the lock is granted, the deadline passes, the
// client cancels or the session ends. Batch carries many of these operations in one stream
// (services/lock_batch.hpp); both run them through LockOps (services/lock_ops.hpp). Sessions
// and locks need the lock permission; ListLocks, GetLockStats and ListSessions the read permission.
#pragma once

#include "asn/v1/locks.grpc.pb.h"
#include "locks/lock_manager.hpp"
#include "services/auth.hpp"
#include "services/lock_ops.hpp"

namespace asn {

class LockService final : public v1::Locks::CallbackService {
 public:
  LockService(LockManager& locks, Authorizer authorizer)
      : locks_(locks), authorizer_(std::move(authorizer)), ops_(locks_, authorizer_) {}

  grpc::ServerUnaryReactor* OpenSession(grpc::CallbackServerContext* context,
                                        const v1::OpenSessionRequest* request,
                                        v1::OpenSessionResponse* response) override;
  grpc::ServerUnaryReactor* KeepAlive(grpc::CallbackServerContext* context,
                                      const v1::KeepAliveRequest* request,
                                      v1::KeepAliveResponse* response) override;
  grpc::ServerUnaryReactor* CloseSession(grpc::CallbackServerContext* context,
                                         const v1::CloseSessionRequest* request,
                                         v1::CloseSessionResponse* response) override;
  grpc::ServerUnaryReactor* Lock(grpc::CallbackServerContext* context,
                                 const v1::LockRequest* request,
                                 v1::LockResponse* response) override;
  grpc::ServerUnaryReactor* TryLock(grpc::CallbackServerContext* context,
                                    const v1::LockRequest* request,
                                    v1::LockResponse* response) override;
  grpc::ServerUnaryReactor* Unlock(grpc::CallbackServerContext* context,
                                   const v1::UnlockRequest* request,
                                   v1::UnlockResponse* response) override;
  grpc::ServerUnaryReactor* Downgrade(grpc::CallbackServerContext* context,
                                      const v1::UnlockRequest* request,
                                      v1::UnlockResponse* response) override;
  grpc::ServerBidiReactor<v1::LockBatch, v1::LockBatchReply>* Batch(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* ListLocks(grpc::CallbackServerContext* context,
                                      const v1::ListLocksRequest* request,
                                      v1::ListLocksResponse* response) override;
  grpc::ServerUnaryReactor* GetLockStats(grpc::CallbackServerContext* context,
                                         const v1::GetLockStatsRequest* request,
                                         v1::GetLockStatsResponse* response) override;
  // Admin (Permission::kLockAdmin): end any session; force-release bytes of a file.
  grpc::ServerUnaryReactor* RevokeSession(grpc::CallbackServerContext* context,
                                          const v1::RevokeSessionRequest* request,
                                          v1::RevokeSessionResponse* response) override;
  grpc::ServerUnaryReactor* ReleaseLocks(grpc::CallbackServerContext* context,
                                         const v1::ReleaseLocksRequest* request,
                                         v1::ReleaseLocksResponse* response) override;
  grpc::ServerUnaryReactor* ListSessions(grpc::CallbackServerContext* context,
                                         const v1::ListSessionsRequest* request,
                                         v1::ListSessionsResponse* response) override;

 private:
  grpc::ServerUnaryReactor* lock(grpc::CallbackServerContext* context,
                                 const v1::LockRequest* request, v1::LockResponse* response,
                                 locks::Wait wait);

  LockManager& locks_;
  Authorizer authorizer_;
  LockOps ops_;  // over locks_ and authorizer_
};

}  // namespace asn
