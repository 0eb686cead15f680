// File: grpc_call.cc
//
// grpc_call.h over libnghttp2: a client session on a blocking unix socket driven by poll until
// the stream closes or the deadline passes.
#include "gpusched/agent/grpc_call.h"

#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace gpusched::agent {
namespace {

using Clock = std::chrono::steady_clock;

// One call's state, shared with nghttp2's callbacks.
struct Call {
  int fd = -1;
  std::string outgoing;  // the framed request
  size_t sent = 0;
  std::string body;      // the response's DATA
  std::string http_status, grpc_status, grpc_message;
  size_t max_response = 0;
  bool closed = false;
  bool too_large = false;
  uint32_t close_error = 0;
};

ssize_t Send(nghttp2_session*, const uint8_t* data, size_t length, int, void* user) {
  Call* call = static_cast<Call*>(user);
  ssize_t n = ::send(call->fd, data, length, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK ? NGHTTP2_ERR_WOULDBLOCK : NGHTTP2_ERR_CALLBACK_FAILURE;
  return n;
}

int OnHeader(nghttp2_session*, const nghttp2_frame*, const uint8_t* name, size_t namelen, const uint8_t* value,
             size_t valuelen, uint8_t, void* user) {
  Call* call = static_cast<Call*>(user);
  std::string_view n(reinterpret_cast<const char*>(name), namelen);
  std::string v(reinterpret_cast<const char*>(value), valuelen);
  if (n == ":status") call->http_status = v;
  if (n == "grpc-status") call->grpc_status = v;
  if (n == "grpc-message") call->grpc_message = v;
  return 0;
}

int OnData(nghttp2_session*, uint8_t, int32_t, const uint8_t* data, size_t len, void* user) {
  Call* call = static_cast<Call*>(user);
  if (call->body.size() + len > call->max_response + 5) {
    call->too_large = true;
    return NGHTTP2_ERR_CALLBACK_FAILURE;
  }
  call->body.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int OnClose(nghttp2_session*, int32_t, uint32_t error_code, void* user) {
  Call* call = static_cast<Call*>(user);
  call->closed = true;
  call->close_error = error_code;
  return 0;
}

ssize_t ReadRequest(nghttp2_session*, int32_t, uint8_t* buf, size_t length, uint32_t* flags, nghttp2_data_source*,
                    void* user) {
  Call* call = static_cast<Call*>(user);
  size_t n = std::min(length, call->outgoing.size() - call->sent);
  std::memcpy(buf, call->outgoing.data() + call->sent, n);
  call->sent += n;
  if (call->sent == call->outgoing.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
  return static_cast<ssize_t>(n);
}

// Connects to the unix socket `path` before `deadline`. Non-blocking: a server whose backlog is
// full (a kubelet not accepting) makes connect() answer EAGAIN, tried again until the deadline.
StatusOr<int> Connect(const std::string& path, Clock::time_point deadline) {
  sockaddr_un addr{};
  if (path.size() >= sizeof(addr.sun_path)) return InvalidArgumentError(fmt::format("socket path {} is too long", path));
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return UnavailableError(fmt::format("socket: {}", std::strerror(errno)));
  while (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    int err = errno;
    if (err == EINTR) continue;
    if (err == EAGAIN && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // the backlog is full: wait for room
      continue;
    }
    ::close(fd);
    if (err == EAGAIN) return DeadlineExceededError(fmt::format("connect {}: the server accepts no connection", path));
    return UnavailableError(fmt::format("connect {}: {}", path, std::strerror(err)));
  }
  return fd;
}

nghttp2_nv Header(std::string_view name, std::string_view value) {
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
                    NGHTTP2_NV_FLAG_NONE};
}

// Runs the session until the stream closed or the deadline passed.
Status Drive(nghttp2_session* session, Call* call, Clock::time_point deadline) {
  uint8_t buf[16384];
  while (!call->closed) {
    if (nghttp2_session_send(session) != 0) return UnavailableError("sending failed");
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return DeadlineExceededError("no answer in time");
    pollfd p{.fd = call->fd, .events = static_cast<short>(POLLIN | (nghttp2_session_want_write(session) ? POLLOUT : 0))};
    int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno != EINTR) return UnavailableError(fmt::format("poll: {}", std::strerror(errno)));
    if (ready <= 0 || (p.revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    ssize_t n = ::recv(call->fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0) return UnavailableError("the server closed the connection");
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return UnavailableError(fmt::format("recv: {}", std::strerror(errno)));
    }
    if (nghttp2_session_mem_recv(session, buf, static_cast<size_t>(n)) < 0) {
      if (call->too_large) return ResourceExhaustedError(fmt::format("response beyond {} bytes", call->max_response));
      return UnavailableError("malformed HTTP/2 from the server");
    }
  }
  return OkStatus();
}

// The response message from the call's outcome.
StatusOr<std::string> Outcome(const Call& call) {
  if (!call.grpc_status.empty() && call.grpc_status != "0") {
    std::string what = fmt::format("grpc-status {}: {}", call.grpc_status, call.grpc_message);
    if (call.grpc_status == "12") return NotFoundError(what);  // UNIMPLEMENTED
    if (call.grpc_status == "14") return UnavailableError(what);
    return InternalError(what);
  }
  if (call.close_error != 0) return UnavailableError(fmt::format("stream reset (HTTP/2 error {})", call.close_error));
  if (call.http_status != "200") return InternalError(fmt::format("HTTP status {}", call.http_status));
  if (call.grpc_status.empty()) return InternalError("no grpc-status in the trailers");
  if (call.body.size() < 5) return InternalError("no response message");
  if (call.body[0] != 0) return InternalError("compressed response (none was offered)");
  uint32_t length = (static_cast<uint8_t>(call.body[1]) << 24) | (static_cast<uint8_t>(call.body[2]) << 16) |
                    (static_cast<uint8_t>(call.body[3]) << 8) | static_cast<uint8_t>(call.body[4]);
  if (call.body.size() != 5 + static_cast<size_t>(length)) return InternalError("response length does not match its frame");
  return call.body.substr(5);
}

}  // namespace

StatusOr<std::string> GrpcUnaryCall(const std::string& socket_path, std::string_view method, std::string_view request,
                                    const GrpcCallOptions& options) {
  Clock::time_point deadline = Clock::now() + options.timeout;
  StatusOr<int> connected = Connect(socket_path, deadline);
  if (!connected.ok()) return connected.status().WithContext(fmt::format("gRPC {}", method));
  int fd = *connected;
  Call call{.fd = fd, .max_response = options.max_response};
  uint32_t n = static_cast<uint32_t>(request.size());
  call.outgoing = {0, static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8), static_cast<char>(n)};
  call.outgoing.append(request);

  nghttp2_session_callbacks* callbacks = nullptr;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_send_callback(callbacks, Send);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, OnHeader);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, OnData);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, OnClose);
  nghttp2_session* raw = nullptr;
  nghttp2_session_client_new(&raw, callbacks, &call);
  nghttp2_session_callbacks_del(callbacks);
  std::unique_ptr<nghttp2_session, decltype(&nghttp2_session_del)> session(raw, nghttp2_session_del);

  nghttp2_submit_settings(session.get(), NGHTTP2_FLAG_NONE, nullptr, 0);
  std::string path(method);
  std::vector<nghttp2_nv> headers = {Header(":method", "POST"), Header(":scheme", "http"), Header(":authority", "localhost"),
                                     Header(":path", path), Header("content-type", "application/grpc"),
                                     Header("te", "trailers")};
  nghttp2_data_provider body{.source = {}, .read_callback = ReadRequest};
  Status status = nghttp2_submit_request(session.get(), nullptr, headers.data(), headers.size(), &body, nullptr) < 0
                      ? InternalError("cannot submit the request")
                      : Drive(session.get(), &call, deadline);
  ::close(fd);
  if (!status.ok()) return status.WithContext(fmt::format("gRPC {} on {}", method, socket_path));
  StatusOr<std::string> out = Outcome(call);
  if (!out.ok()) return out.status().WithContext(fmt::format("gRPC {} on {}", method, socket_path));
  return out;
}

}  // namespace gpusched::agent
