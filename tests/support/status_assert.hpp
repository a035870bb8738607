// ASSERT_OK(call): the gRPC call returned OK, or the test stops with the status's message.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#define ASSERT_OK(call)                                   \
  do {                                                    \
    const grpc::Status status_ = (call);                  \
    ASSERT_TRUE(status_.ok()) << status_.error_message(); \
  } while (0)
