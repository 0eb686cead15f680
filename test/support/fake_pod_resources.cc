// File: fake_pod_resources.cc
//
// fake_pod_resources.h: an accept loop on a unix socket and one libnghttp2 server session per
// connection, answering each request stream with headers, the framed message and trailers.
#include "fake_pod_resources.h"

#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>

namespace gpusched::testing {
namespace {

struct Stream {
  std::string path;
  std::string out;  // the framed response
  size_t sent = 0;
  FakePodResources::Answer answer;
  std::string code_text;
};

struct Connection {
  int fd = -1;
  FakePodResources* server = nullptr;
  nghttp2_session* session = nullptr;
  std::map<int32_t, Stream> streams;
};

nghttp2_nv Nv(const std::string& name, const std::string& value) {
  return nghttp2_nv{reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
                    reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
                    NGHTTP2_NV_FLAG_NONE};
}

ssize_t SendBytes(nghttp2_session*, const uint8_t* data, size_t length, int, void* user) {
  ssize_t n = ::send(static_cast<Connection*>(user)->fd, data, length, MSG_NOSIGNAL);
  return n < 0 ? static_cast<ssize_t>(NGHTTP2_ERR_CALLBACK_FAILURE) : n;
}

int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name, size_t namelen, const uint8_t* value,
             size_t valuelen, uint8_t, void* user) {
  if (std::string_view(reinterpret_cast<const char*>(name), namelen) == ":path") {
    static_cast<Connection*>(user)->streams[frame->hd.stream_id].path.assign(reinterpret_cast<const char*>(value), valuelen);
  }
  return 0;
}

ssize_t ReadBody(nghttp2_session* session, int32_t stream_id, uint8_t* buf, size_t length, uint32_t* flags,
                 nghttp2_data_source*, void* user) {
  Stream& s = static_cast<Connection*>(user)->streams[stream_id];
  size_t n = std::min(length, s.out.size() - s.sent);
  std::memcpy(buf, s.out.data() + s.sent, n);
  s.sent += n;
  if (s.sent == s.out.size()) {
    *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    std::vector<nghttp2_nv> trailers = {Nv("grpc-status", s.code_text), Nv("grpc-message", s.answer.message)};
    nghttp2_submit_trailer(session, stream_id, trailers.data(), trailers.size());
  }
  return static_cast<ssize_t>(n);
}

// A request stream ended: answer it.
int OnFrame(nghttp2_session* session, const nghttp2_frame* frame, void* user) {
  Connection* c = static_cast<Connection*>(user);
  bool request_done = (frame->hd.type == NGHTTP2_HEADERS || frame->hd.type == NGHTTP2_DATA) &&
                      (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) != 0;
  if (!request_done) return 0;
  Stream& s = c->streams[frame->hd.stream_id];
  s.answer = c->server->Respond(s.path);
  s.code_text = std::to_string(s.answer.code);
  if (s.answer.code == 0) {
    uint32_t n = static_cast<uint32_t>(s.answer.body.size());
    s.out = {0, static_cast<char>(n >> 24), static_cast<char>(n >> 16), static_cast<char>(n >> 8), static_cast<char>(n)};
    s.out += s.answer.body;
  }
  std::string status = ":status", ok = "200", type = "content-type", grpc = "application/grpc";
  std::vector<nghttp2_nv> headers = {Nv(status, ok), Nv(type, grpc)};
  nghttp2_data_provider body{.source = {}, .read_callback = ReadBody};
  nghttp2_submit_response(session, frame->hd.stream_id, headers.data(), headers.size(), &body);
  return 0;
}

void Handle(int fd, FakePodResources* server, int stop_fd) {
  Connection c{.fd = fd, .server = server};
  nghttp2_session_callbacks* callbacks = nullptr;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_send_callback(callbacks, SendBytes);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, OnHeader);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, OnFrame);
  nghttp2_session_server_new(&c.session, callbacks, &c);
  nghttp2_session_callbacks_del(callbacks);
  nghttp2_submit_settings(c.session, NGHTTP2_FLAG_NONE, nullptr, 0);
  uint8_t buf[16384];
  while (nghttp2_session_want_read(c.session) || nghttp2_session_want_write(c.session)) {
    if (nghttp2_session_send(c.session) != 0) break;
    pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = stop_fd, .events = POLLIN}};
    if (::poll(p, 2, 5000) <= 0 || p[1].revents != 0) break;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0 || nghttp2_session_mem_recv(c.session, buf, static_cast<size_t>(n)) < 0) break;
  }
  nghttp2_session_del(c.session);
  ::close(fd);
}

}  // namespace

FakePodResources::~FakePodResources() {
  if (thread_.joinable()) {
    char x = 1;
    (void)!::write(stop_pipe_[1], &x, 1);
    thread_.join();
  }
  for (int fd : {listen_fd_, stop_pipe_[0], stop_pipe_[1]}) {
    if (fd >= 0) ::close(fd);
  }
  ::unlink(path_.c_str());
}

Status FakePodResources::Start() {
  ::unlink(path_.c_str());
  sockaddr_un addr{};
  if (path_.size() >= sizeof(addr.sun_path)) return InvalidArgumentError("socket path too long");
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 8) != 0 || ::pipe(stop_pipe_) != 0) {
    return UnavailableError(fmt::format("listen on {}: {}", path_, std::strerror(errno)));
  }
  thread_ = std::thread([this] { Serve(); });
  return OkStatus();
}

void FakePodResources::Serve() {
  while (true) {
    pollfd p[2] = {{.fd = listen_fd_, .events = POLLIN}, {.fd = stop_pipe_[0], .events = POLLIN}};
    if (::poll(p, 2, -1) < 0 || p[1].revents != 0) return;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) Handle(fd, this, stop_pipe_[0]);
  }
}

void FakePodResources::Set(std::vector<agent::ContainerDevices> devices) {
  MutexLock lock(&mu_);
  devices_ = std::move(devices);
}

void FakePodResources::Fail(int code, std::string message) {
  MutexLock lock(&mu_);
  fail_code_ = code;
  fail_message_ = std::move(message);
}

FakePodResources::Answer FakePodResources::Respond(const std::string& path) {
  ++calls_;
  if (path != agent::kPodResourcesList) return Answer{.code = 12, .message = "unknown method " + path};
  MutexLock lock(&mu_);
  if (fail_code_ != 0) return Answer{.code = fail_code_, .message = fail_message_};
  return Answer{.body = agent::EncodeListPodResources(devices_)};
}

}  // namespace gpusched::testing
