// File: server.cc
//
// The Beast server: plain TCP and TLS sessions sharing one read-answer-repeat loop, header and body
// limits, idle and read timeouts, a connection limit, ALPN offering http/1.1 only, TLS files
// reloaded when they change, and graceful shutdown.
#include "gpusched/http/server.h"

#include <openssl/ssl.h>
#include <sys/stat.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <fmt/format.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "gpusched/common/log.h"
#include "gpusched/common/mutex.h"

namespace gpusched::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;

// Beast reads at most the buffer's free capacity per call; the default 512 bytes turns an 85 KB
// filter body into 170 reads. 64 KiB reads it in two.
constexpr std::size_t kReadChunk = 64 * 1024;

// State every session shares with the server. Outlives the sessions (they die with io_context).
struct Shared {
  const ServerOptions* options = nullptr;
  const Handler* router = nullptr;
  net::thread_pool* blocking = nullptr;  // where Router::Blocks requests are handled
  std::atomic<size_t> connections{0};
  std::atomic<size_t> in_flight{0};
  std::atomic<bool> draining{false};

  void Count(std::string_view reason) {
    if (router->telemetry() != nullptr) router->telemetry()->http_refused.With({std::string(reason)}).Inc();
  }
};

// ALPN: offer http/1.1 only. Go's client then never tries HTTP/2, which Beast does not speak.
int SelectAlpn(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen,
               void*) {
  for (unsigned int i = 0; i < inlen;) {
    unsigned int len = in[i];
    if (i + 1 + len > inlen) break;
    if (len == 8 && std::memcmp(in + i + 1, "http/1.1", 8) == 0) {
      *out = in + i + 1;
      *outlen = static_cast<unsigned char>(len);
      return SSL_TLSEXT_ERR_OK;
    }
    i += 1 + len;
  }
  return SSL_TLSEXT_ERR_NOACK;
}

StatusOr<std::shared_ptr<ssl::context>> MakeTlsContext(const ServerOptions& o) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                   ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  beast::error_code ec;
  ctx->use_certificate_chain_file(o.tls_cert_file, ec);
  if (ec) return InvalidArgumentError(fmt::format("--tls-cert {}: {}", o.tls_cert_file, ec.message()));
  ctx->use_private_key_file(o.tls_key_file, ssl::context::pem, ec);
  if (ec) return InvalidArgumentError(fmt::format("--tls-key {}: {}", o.tls_key_file, ec.message()));
  if (!o.client_ca_file.empty()) {
    ctx->load_verify_file(o.client_ca_file, ec);
    if (ec) return InvalidArgumentError(fmt::format("--client-ca {}: {}", o.client_ca_file, ec.message()));
    ctx->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  }
  SSL_CTX_set_alpn_select_cb(ctx->native_handle(), SelectAlpn, nullptr);
  return ctx;
}

int64_t ModTime(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return 0;
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// One connection: read a request, answer it, repeat while the client keeps the connection alive.
// Derived supplies stream(), Start() and DoClose() for plain TCP or TLS.
template <class Derived>
class Session {
 public:
  ~Session() {
    shared_.connections.fetch_sub(1);
    if (in_request_) shared_.in_flight.fetch_sub(1);
  }

 protected:
  Session(Shared& shared, bool refuse) : shared_(shared), refuse_(refuse) { buffer_.reserve(kReadChunk); }

  Derived& self() { return static_cast<Derived&>(*this); }
  auto& lowest() { return beast::get_lowest_layer(self().stream()); }

  void DoRead() {
    if (shared_.draining.load()) return self().DoClose();
    parser_.emplace();
    parser_->body_limit(shared_.options->body_limit);
    parser_->header_limit(static_cast<uint32_t>(shared_.options->header_limit));
    lowest().expires_after(shared_.options->idle_timeout);
    bhttp::async_read_header(self().stream(), buffer_, *parser_,
                             beast::bind_front_handler(&Session::OnHeader, self().shared_from_this()));
  }

  void OnHeader(beast::error_code ec, std::size_t) {
    if (ec) return OnError(ec);
    in_request_ = true;
    shared_.in_flight.fetch_add(1);
    if (refuse_) {
      shared_.Count("too_many_connections");
      return Refuse(bhttp::status::service_unavailable, "too many connections\n");
    }
    lowest().expires_after(shared_.options->read_timeout);
    if (parser_->get()[bhttp::field::expect] == "100-continue") {
      auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, 11);
      return bhttp::async_write(self().stream(), *cont,
                                [self = self().shared_from_this(), cont](beast::error_code ec, std::size_t) {
                                  if (ec) return self->DoClose();
                                  self->ReadBody();
                                });
    }
    ReadBody();
  }

  void ReadBody() {
    bhttp::async_read(self().stream(), buffer_, *parser_,
                      beast::bind_front_handler(&Session::OnRead, self().shared_from_this()));
  }

  void OnRead(beast::error_code ec, std::size_t) {
    if (ec) return OnError(ec);
    bhttp::request<bhttp::string_body> req = parser_->release();
    Reply reply{.version = req.version(), .keep_alive = req.keep_alive(), .head = req.method() == bhttp::verb::head};
    Request request{.method = std::string(req.method_string()),
                    .target = std::string(req.target()),
                    .body = std::move(req.body()),
                    .request_id = std::string(req["X-Request-Id"])};
    if (!shared_.router->Blocks(request)) return Answer(reply, shared_.router->Handle(std::move(request)));
    // Bind writes to the API server and may back off between attempts: off the I/O threads, so
    // that filter and prioritize never wait behind it. The answer is written from the I/O side.
    net::post(*shared_.blocking, [self = self().shared_from_this(), reply, request = std::move(request)]() mutable {
      Response r = self->shared_.router->Handle(std::move(request));
      net::post(self->stream().get_executor(),
                [self, reply, r = std::move(r)]() mutable { self->Answer(reply, std::move(r)); });
    });
  }

  // What a response needs of its request once the request is gone.
  struct Reply {
    unsigned version = 11;
    bool keep_alive = true;
    bool head = false;
  };

  void Answer(const Reply& reply, Response r) {
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>(static_cast<bhttp::status>(r.status), reply.version);
    res->set(bhttp::field::server, "gpusched");
    res->set(bhttp::field::content_type, r.content_type);
    if (!r.allow.empty()) res->set(bhttp::field::allow, r.allow);
    res->set("X-Request-Id", r.request_id);
    res->keep_alive(reply.keep_alive && !shared_.draining.load());
    if (reply.head) {
      res->content_length(r.body.size());
    } else {
      res->body() = std::move(r.body);
      res->prepare_payload();
    }
    Write(std::move(res));
  }

  void OnError(beast::error_code ec) {
    if (ec == beast::error::timeout) {
      // The protocol has no answer once the stream timed out: count it and let go.
      if (in_request_) shared_.Count("read_timeout");
      return self().DoClose();
    }
    if (ec == bhttp::error::end_of_stream || ec == net::error::operation_aborted || ec == net::error::connection_reset ||
        ec == net::error::eof || ec == ssl::error::stream_truncated) {
      return self().DoClose();
    }
    if (ec == bhttp::error::body_limit) {
      shared_.Count("body_too_large");
      return Refuse(bhttp::status::payload_too_large,
                    fmt::format("request body over the {} byte limit\n", shared_.options->body_limit));
    }
    if (ec == bhttp::error::header_limit) {
      shared_.Count("header_too_large");
      return Refuse(bhttp::status::request_header_fields_too_large,
                    fmt::format("request header over the {} byte limit\n", shared_.options->header_limit));
    }
    shared_.Count("bad_request");
    Refuse(bhttp::status::bad_request, fmt::format("bad request: {}\n", ec.message()));
  }

  void Refuse(bhttp::status status, std::string text) {
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>(status, 11);
    res->set(bhttp::field::server, "gpusched");
    res->set(bhttp::field::content_type, "text/plain; charset=utf-8");
    res->keep_alive(false);
    res->body() = std::move(text);
    res->prepare_payload();
    Write(std::move(res));
  }

  void Write(std::shared_ptr<bhttp::response<bhttp::string_body>> res) {
    bool close = !res->keep_alive();
    lowest().expires_after(shared_.options->read_timeout);
    bhttp::async_write(self().stream(), *res,
                       [self = self().shared_from_this(), res, close](beast::error_code ec, std::size_t) {
                         self->Done();
                         if (ec || close) return self->DoClose();
                         self->DoRead();
                       });
  }

  void Done() {
    if (!in_request_) return;
    in_request_ = false;
    shared_.in_flight.fetch_sub(1);
  }

  Shared& shared_;
  const bool refuse_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  bool in_request_ = false;
};

class PlainSession : public Session<PlainSession>, public std::enable_shared_from_this<PlainSession> {
 public:
  PlainSession(tcp::socket&& socket, Shared& shared, bool refuse) : Session(shared, refuse), stream_(std::move(socket)) {}

  void Start() { net::dispatch(stream_.get_executor(), beast::bind_front_handler(&PlainSession::DoRead, shared_from_this())); }
  beast::tcp_stream& stream() { return stream_; }
  void DoClose() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

 private:
  friend class Session<PlainSession>;
  beast::tcp_stream stream_;
};

class TlsSession : public Session<TlsSession>, public std::enable_shared_from_this<TlsSession> {
 public:
  TlsSession(tcp::socket&& socket, std::shared_ptr<ssl::context> ctx, Shared& shared, bool refuse)
      : Session(shared, refuse), ctx_(std::move(ctx)), stream_(std::move(socket), *ctx_) {}

  void Start() {
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      beast::get_lowest_layer(self->stream_).expires_after(self->shared_.options->read_timeout);
      self->stream_.async_handshake(ssl::stream_base::server,
                                    beast::bind_front_handler(&TlsSession::OnHandshake, self));
    });
  }
  beast::ssl_stream<beast::tcp_stream>& stream() { return stream_; }
  void DoClose() {
    beast::get_lowest_layer(stream_).expires_after(std::chrono::seconds(5));
    stream_.async_shutdown([self = shared_from_this()](beast::error_code) {
      beast::error_code ec;
      beast::get_lowest_layer(self->stream_).socket().close(ec);
    });
  }

 private:
  friend class Session<TlsSession>;

  void OnHandshake(beast::error_code ec) {
    if (ec) {
      // No certificate, an untrusted one, or not TLS at all: refused before any HTTP.
      shared_.Count("tls_handshake");
      log::Write(log::Level::kWarning, "TLS handshake refused", {{"error", ec.message()}});
      beast::error_code ignored;
      beast::get_lowest_layer(stream_).socket().close(ignored);
      return;
    }
    DoRead();
  }

  std::shared_ptr<ssl::context> ctx_;  // the context this connection was made with
  beast::ssl_stream<beast::tcp_stream> stream_;
};

}  // namespace

class Server::Impl {
 public:
  Impl(ServerOptions options, const Handler* router)
      : options_(std::move(options)),
        ioc_(std::max(1, options_.threads)),
        blocking_(static_cast<size_t>(std::max(1, options_.blocking_threads))),
        acceptor_(ioc_),
        reload_timer_(ioc_) {
    shared_.options = &options_;
    shared_.router = router;
    shared_.blocking = &blocking_;
  }

  Status Start() {
    if (tls()) {
      GPUSCHED_ASSIGN_OR_RETURN(std::shared_ptr<ssl::context> ctx, MakeTlsContext(options_));
      SetContext(std::move(ctx));
      tls_mtimes_ = TlsModTimes();
    }
    beast::error_code ec;
    net::ip::address address = net::ip::make_address(options_.host, ec);
    if (ec) return InvalidArgumentError(fmt::format("--listen host \"{}\": {}", options_.host, ec.message()));
    tcp::endpoint endpoint(address, options_.port);
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
    if (ec) {
      return UnavailableError(fmt::format("cannot listen on {}:{}: {}", options_.host, options_.port, ec.message()));
    }
    port_ = acceptor_.local_endpoint().port();
    DoAccept();
    if (tls()) ScheduleReload();
    for (int i = 0; i < std::max(1, options_.threads); ++i) {
      threads_.emplace_back([this] { ioc_.run(); });
    }
    return OkStatus();
  }

  uint16_t port() const { return port_; }

  size_t Shutdown() {
    shared_.draining.store(true);
    net::post(acceptor_.get_executor(), [this] {
      beast::error_code ec;
      acceptor_.close(ec);
    });
    auto deadline = std::chrono::steady_clock::now() + options_.shutdown_grace;
    while (shared_.in_flight.load() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    size_t left = shared_.in_flight.load();
    Stop();
    return left;
  }

  void Stop() GPUSCHED_EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      if (stopped_) return;
      stopped_ = true;
    }
    net::post(acceptor_.get_executor(), [this] {
      beast::error_code ec;
      acceptor_.close(ec);
      reload_timer_.cancel();
    });
    ioc_.stop();
    for (std::thread& t : threads_) {
      if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
    }
    blocking_.stop();
    blocking_.join();
    cv_.SignalAll();
  }

  void Wait() GPUSCHED_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    while (!stopped_) cv_.Wait();
  }

 private:
  bool tls() const { return !options_.tls_cert_file.empty() || !options_.tls_key_file.empty(); }

  std::array<int64_t, 3> TlsModTimes() const {
    return {ModTime(options_.tls_cert_file), ModTime(options_.tls_key_file), ModTime(options_.client_ca_file)};
  }

  std::shared_ptr<ssl::context> Context() GPUSCHED_EXCLUDES(ctx_mu_) {
    MutexLock lock(&ctx_mu_);
    return ctx_;
  }
  void SetContext(std::shared_ptr<ssl::context> ctx) GPUSCHED_EXCLUDES(ctx_mu_) {
    MutexLock lock(&ctx_mu_);
    ctx_ = std::move(ctx);
  }

  // Re-reads the TLS files when they change (certificate rotation); a bad new set is logged and
  // the old one kept.
  void ScheduleReload() {
    reload_timer_.expires_after(options_.tls_reload_interval);
    reload_timer_.async_wait([this](beast::error_code ec) {
      if (ec) return;
      std::array<int64_t, 3> now = TlsModTimes();
      if (now != tls_mtimes_) {
        StatusOr<std::shared_ptr<ssl::context>> ctx = MakeTlsContext(options_);
        if (ctx.ok()) {
          SetContext(std::move(ctx).value());
          tls_mtimes_ = now;
          log::Info("TLS files changed: new connections use the new certificate");
        } else {
          log::Error("TLS files changed but cannot be loaded, keeping the previous ones: {}", ctx.status().message());
        }
      }
      ScheduleReload();
    });
  }

  void DoAccept() {
    acceptor_.async_accept(net::make_strand(ioc_), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
      if (!ec) {
        socket.set_option(tcp::no_delay(true), ec);
        bool refuse = shared_.connections.fetch_add(1) >= options_.max_connections;
        if (shared_.router->telemetry() != nullptr) shared_.router->telemetry()->http_connections.With({}).Inc();
        if (tls()) {
          std::make_shared<TlsSession>(std::move(socket), Context(), shared_, refuse)->Start();
        } else {
          std::make_shared<PlainSession>(std::move(socket), shared_, refuse)->Start();
        }
      }
      DoAccept();
    });
  }

  const ServerOptions options_;
  Shared shared_;
  net::io_context ioc_;
  net::thread_pool blocking_;
  tcp::acceptor acceptor_;
  net::steady_timer reload_timer_;
  std::array<int64_t, 3> tls_mtimes_{};
  Mutex ctx_mu_;
  std::shared_ptr<ssl::context> ctx_ GPUSCHED_GUARDED_BY(ctx_mu_);
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  Mutex mu_;
  CondVar cv_{&mu_};
  bool stopped_ GPUSCHED_GUARDED_BY(mu_) = false;
};

Server::Server(ServerOptions options, const Handler* router)
    : impl_(std::make_unique<Impl>(std::move(options), router)) {}

Server::~Server() { impl_->Stop(); }

Status Server::Start() { return impl_->Start(); }
uint16_t Server::port() const { return impl_->port(); }
size_t Server::Shutdown() { return impl_->Shutdown(); }
void Server::Stop() { impl_->Stop(); }
void Server::Wait() { impl_->Wait(); }

}  // namespace gpusched::http
