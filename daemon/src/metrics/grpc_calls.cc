#include "metrics/grpc_calls.hpp"

#include "asn/status/codes.hpp"

namespace asn::metrics {

namespace {

namespace ex = grpc::experimental;

class CountingInterceptor final : public ex::Interceptor {
 public:
  CountingInterceptor(GrpcCalls& calls, std::string method)
      : calls_(calls), method_(std::move(method)) {}

  void Intercept(ex::InterceptorBatchMethods* methods) override {
    // The status leaves exactly once per call, whatever ended it.
    if (methods->QueryInterceptionHookPoint(ex::InterceptionHookPoints::PRE_SEND_STATUS)) {
      calls_.add(method_, static_cast<int>(methods->GetSendStatus().error_code()));
    }
    methods->Proceed();
  }

 private:
  GrpcCalls& calls_;
  std::string method_;
};

class CountingFactory final : public ex::ServerInterceptorFactoryInterface {
 public:
  explicit CountingFactory(GrpcCalls& calls) : calls_(calls) {}
  ex::Interceptor* CreateServerInterceptor(ex::ServerRpcInfo* info) override {
    const char* method = info->method();
    return new CountingInterceptor(calls_, method != nullptr ? method : "unknown");
  }

 private:
  GrpcCalls& calls_;
};

}  // namespace

void GrpcCalls::add(const std::string& method, int code) {
  std::lock_guard lock(mutex_);
  ++counts_[{method, code}];
}

std::vector<GrpcCalls::Count> GrpcCalls::counts() const {
  std::lock_guard lock(mutex_);
  std::vector<Count> out;
  for (const auto& [key, n] : counts_)
    out.push_back({key.first, std::string(status::name(key.second)), n});
  return out;
}

std::unique_ptr<ex::ServerInterceptorFactoryInterface> GrpcCalls::interceptor_factory() {
  return std::make_unique<CountingFactory>(*this);
}

}  // namespace asn::metrics
