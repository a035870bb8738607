// What one scrape of listen.metrics reports, gathered when it is asked for from the readers
// asnd already has (the same ones its gRPC services answer from): the Device's registers,
// the reconciler's summaries, the TDM sequencer, the lock manager's and stripe manager's
// statistics, the listeners' connection counts and the gRPC call counts. Nothing is kept
// twice. The names are listed in docs/operator-guide.md ("Metrics").
#pragma once

#include <string>

namespace asn {
class Device;
class Reconciler;
class TdmManager;
class StripeManager;
class LockManager;
class Listeners;
}  // namespace asn

namespace asn::metrics {

class GrpcCalls;

struct Sources {
  Device& device;
  Reconciler& reconciler;
  TdmManager& tdm;
  StripeManager& stripe;
  LockManager& locks;
  const Listeners* listeners = nullptr;  // null until they are open
  const GrpcCalls* grpc_calls = nullptr;
};

// The whole text of one scrape. Throws asn::Error when the board does not answer.
std::string collect(const Sources& sources);

}  // namespace asn::metrics
