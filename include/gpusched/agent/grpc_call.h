// File: grpc_call.h
//
// One unary gRPC call over HTTP/2 without TLS (h2c, prior knowledge) on a unix socket, as the
// kubelet serves its local APIs (PodResources). libnghttp2 does the HTTP/2 framing, flow control
// and HPACK; this file frames the message (gRPC's 5-byte prefix, no compression) and reads the
// status from the trailers.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "gpusched/common/status.h"

namespace gpusched::agent {

struct GrpcCallOptions {
  std::chrono::milliseconds timeout{5000};  // the whole call, connect included
  size_t max_response = 64 << 20;           // bytes of the response message
};

// Calls `method` ("/package.Service/Method") with the serialized `request` on the server at unix
// socket `socket_path` and returns the serialized response. Errors: Unavailable when the socket
// cannot be reached or the connection ends early; DeadlineExceeded past the timeout (connecting
// included: a server that accepts nothing never holds the caller longer);
// ResourceExhausted beyond max_response; otherwise the server's grpc-status (NotFound for
// UNIMPLEMENTED, Unavailable for UNAVAILABLE, Internal for the rest) with its grpc-message.
StatusOr<std::string> GrpcUnaryCall(const std::string& socket_path, std::string_view method, std::string_view request,
                                    const GrpcCallOptions& options = {});

}  // namespace gpusched::agent
