// File: api_client.cc
//
// The API client over Beast and OpenSSL: connections that run their own io_context on the calling
// thread under deadlines, a pool of idle keep-alive ones, bearer tokens re-read from file and after
// a 401, the rate limit, and cancellable watch streams.
#include "gpusched/kubeapi/api_client.h"

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/common/token_bucket.h"
#include "gpusched/json/json.h"

namespace gpusched::kubeapi {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

// Largest response body Send accepts: an unpaged PodList of a big cluster is some 100 MB.
constexpr uint64_t kMaxResponseBody = uint64_t{1} << 30;
// Largest error body Stream reads back from a non-200 watch response.
constexpr size_t kMaxErrorBody = 1 << 20;

bool IsIpAddress(const std::string& host) {
  beast::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

// A bearer token: fixed, or read from a file that the kubelet rotates.
class TokenSource {
 public:
  TokenSource(std::string token, std::string file, std::chrono::seconds refresh)
      : token_(std::move(token)), file_(std::move(file)), refresh_(refresh) {}

  std::string Get() GPUSCHED_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    if (file_.empty()) return token_;
    SteadyClock::time_point now = SteadyClock::now();
    if (!read_ || now - read_at_ >= refresh_) {
      std::ifstream in(file_, std::ios::binary);
      if (in) {
        std::ostringstream s;
        s << in.rdbuf();
        token_ = s.str();
        while (!token_.empty() && std::isspace(static_cast<unsigned char>(token_.back()))) token_.pop_back();
      }
      read_ = true;
      read_at_ = now;
    }
    return token_;
  }
  bool from_file() const { return !file_.empty(); }
  void Invalidate() GPUSCHED_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    read_ = false;
  }

 private:
  Mutex mu_;
  std::string token_ GPUSCHED_GUARDED_BY(mu_);
  const std::string file_;
  const std::chrono::seconds refresh_;
  bool read_ GPUSCHED_GUARDED_BY(mu_) = false;
  SteadyClock::time_point read_at_ GPUSCHED_GUARDED_BY(mu_);
};

// One connection with its own io_context: every operation runs the context on the calling
// thread until the operation completes or the stream's timer closes the socket.
class Conn {
 public:
  Conn(const ApiConfig& config, ssl::context* tls) : config_(config), tls_ctx_(tls) {}

  Status Connect(SteadyClock::time_point deadline) {
    tcp::resolver resolver(ioc_);
    tcp::resolver::results_type endpoints;
    // The resolver has no deadline of its own: a timer cancels it.
    net::steady_timer timer(ioc_);
    bool timer_done = false;
    timer.expires_at(deadline);
    timer.async_wait([&](beast::error_code e) {
      timer_done = true;
      if (!e) resolver.cancel();
    });
    beast::error_code ec = Run([&](auto handler) {
      resolver.async_resolve(config_.host, config_.port,
                             [&, handler](beast::error_code e, tcp::resolver::results_type r) mutable {
                               endpoints = std::move(r);
                               handler(e);
                             });
    }, nullptr);
    timer.cancel();
    while (!timer_done && ioc_.run_one() > 0) {
    }
    if (ec == net::error::operation_aborted && SteadyClock::now() >= deadline) ec = beast::error::timeout;
    if (ec) return Fail("resolve", ec);
    if (close_requested_) return CancelledError("stream cancelled");
    if (tls_ctx_ != nullptr) {
      tls_.emplace(ioc_, *tls_ctx_);
    } else {
      plain_.emplace(ioc_);
    }
    lowest().expires_at(deadline);
    ec = Run([&](auto handler) { lowest().async_connect(endpoints, [handler](beast::error_code e, auto&&) mutable { handler(e); }); },
             nullptr);
    if (ec) return Fail("connect", ec);
    lowest().socket().set_option(tcp::no_delay(true), ec);
    if (tls_) {
      SSL* ssl = tls_->native_handle();
      std::string name = config_.server_name.empty() ? config_.host : config_.server_name;
      if (!IsIpAddress(name)) SSL_set_tlsext_host_name(ssl, name.c_str());
      if (!config_.insecure_skip_verify) {
        if (IsIpAddress(name)) {
          X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str());
        } else {
          SSL_set1_host(ssl, name.c_str());
        }
      }
      lowest().expires_at(deadline);
      ec = Run([&](auto handler) { tls_->async_handshake(ssl::stream_base::client, handler); }, nullptr);
      if (ec) return Fail("TLS handshake", ec);
    }
    connected_ = true;
    return OkStatus();
  }

  bool connected() const { return connected_; }

  // Runs async operation `start(handler)` to completion; returns its error. The operation's
  // timeout is the stream's expiry, set by the caller.
  template <typename Start>
  beast::error_code Run(Start&& start, size_t* transferred) {
    beast::error_code result = net::error::would_block;
    bool done = false;
    start([&](beast::error_code ec, auto&&... rest) {
      result = ec;
      done = true;
      if constexpr (sizeof...(rest) == 1) {
        if (transferred != nullptr) *transferred = static_cast<size_t>((rest, ...));
      }
    });
    ioc_.restart();
    while (!done && ioc_.run_one() > 0) {
    }
    return result;
  }

  template <typename Message>
  beast::error_code Write(Message& m, SteadyClock::time_point deadline) {
    lowest().expires_at(deadline);
    return Run([&](auto handler) {
      if (tls_) {
        http::async_write(*tls_, m, handler);
      } else {
        http::async_write(*plain_, m, handler);
      }
    }, nullptr);
  }

  template <typename Parser>
  beast::error_code ReadHeader(Parser& p, SteadyClock::time_point deadline) {
    lowest().expires_at(deadline);
    return Run([&](auto handler) {
      if (tls_) {
        http::async_read_header(*tls_, buffer_, p, handler);
      } else {
        http::async_read_header(*plain_, buffer_, p, handler);
      }
    }, nullptr);
  }

  template <typename Parser>
  beast::error_code Read(Parser& p, SteadyClock::time_point deadline) {
    lowest().expires_at(deadline);
    return Run([&](auto handler) {
      if (tls_) {
        http::async_read(*tls_, buffer_, p, handler);
      } else {
        http::async_read(*plain_, buffer_, p, handler);
      }
    }, nullptr);
  }

  // Returns false if the server closed this idle connection (or sent something unasked): an
  // idle HTTP/1.1 connection has nothing to read.
  bool LooksAlive() {
    if (!plain_ && !tls_) return false;
    pollfd p{.fd = lowest().socket().native_handle(), .events = POLLIN, .revents = 0};
    return ::poll(&p, 1, 0) == 0;
  }

  // Reads what has arrived (at least one byte of the message) into the parser.
  template <typename Parser>
  beast::error_code ReadSome(Parser& p, SteadyClock::time_point deadline) {
    lowest().expires_at(deadline);
    return Run([&](auto handler) {
      if (tls_) {
        http::async_read_some(*tls_, buffer_, p, handler);
      } else {
        http::async_read_some(*plain_, buffer_, p, handler);
      }
    }, nullptr);
  }

  // Closes the socket from any thread: the operation in progress (or the next) fails. Before the
  // socket exists (while resolving), Connect sees the request and gives up.
  void CloseFromAnyThread() {
    net::post(ioc_, [this] {
      close_requested_ = true;
      if (!plain_ && !tls_) return;
      beast::error_code ec;
      lowest().socket().close(ec);
    });
  }

  beast::tcp_stream& lowest() { return tls_ ? beast::get_lowest_layer(*tls_) : *plain_; }

  Status Fail(std::string_view step, const beast::error_code& ec) const {
    return UnavailableError(fmt::format("{} {}: {}", step, config_.Url(), ec.message()));
  }

 private:
  const ApiConfig& config_;
  ssl::context* tls_ctx_;
  net::io_context ioc_;
  std::optional<beast::tcp_stream> plain_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls_;
  beast::flat_buffer buffer_;
  bool connected_ = false;
  bool close_requested_ = false;  // touched only by handlers run on the calling thread
};

std::chrono::seconds RetryAfter(std::string_view value) {
  int seconds = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (ec != std::errc() || seconds < 0) return std::chrono::seconds(0);
  return std::chrono::seconds(std::min(seconds, 600));
}

}  // namespace

void StreamCancel::Cancel() {
  cancelled_.store(true);
  MutexLock lock(&mu_);
  if (hook_) hook_();
}

void StreamCancel::Reset() {
  cancelled_.store(false);
  SetHook(nullptr);
}

void StreamCancel::SetHook(std::function<void()> hook) {
  MutexLock lock(&mu_);
  hook_ = std::move(hook);
}

class ApiClient::Impl {
 public:
  Impl(ApiConfig config, ApiClientOptions options)
      : config_(std::move(config)),
        options_(std::move(options)),
        tokens_(config_.token, config_.token_file, options_.token_refresh),
        limiter_(options_.qps, options_.burst) {}

  Status Init() {
    if (!config_.tls) return OkStatus();
    tls_ctx_.emplace(ssl::context::tls_client);
    tls_ctx_->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                          ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
    beast::error_code ec;
    if (config_.insecure_skip_verify) {
      tls_ctx_->set_verify_mode(ssl::verify_none);
    } else {
      tls_ctx_->set_verify_mode(ssl::verify_peer);
      if (config_.ca_pem.empty()) {
        tls_ctx_->set_default_verify_paths(ec);
      } else {
        tls_ctx_->add_certificate_authority(net::buffer(config_.ca_pem), ec);
      }
      if (ec) return InvalidArgumentError(fmt::format("API server CA: {}", ec.message()));
    }
    if (!config_.client_cert_pem.empty()) {
      tls_ctx_->use_certificate_chain(net::buffer(config_.client_cert_pem), ec);
      if (ec) return InvalidArgumentError(fmt::format("client certificate: {}", ec.message()));
      tls_ctx_->use_private_key(net::buffer(config_.client_key_pem), ssl::context::pem, ec);
      if (ec) return InvalidArgumentError(fmt::format("client key: {}", ec.message()));
    }
    // ALPN: HTTP/1.1 only; the API server would otherwise pick h2, which Beast does not speak.
    static const unsigned char kAlpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
    SSL_CTX_set_alpn_protos(tls_ctx_->native_handle(), kAlpn, sizeof(kAlpn));
    return OkStatus();
  }

  StatusOr<ApiResponse> Send(std::string_view method, std::string_view target, std::string_view body,
                             std::string_view content_type, std::chrono::milliseconds timeout) {
    http::verb verb = http::string_to_verb(method);
    if (verb == http::verb::unknown) return InvalidArgumentError(fmt::format("HTTP method \"{}\"", method));
    // Only a read may be sent twice; a write is retried only if it never left.
    bool idempotent = verb == http::verb::get || verb == http::verb::head;
    limiter_.Take();
    SteadyClock::time_point deadline = SteadyClock::now() + (timeout.count() > 0 ? timeout : options_.request_timeout);
    bool retried_auth = false;
    for (int attempt = 0; attempt < 3; ++attempt) {
      std::unique_ptr<Conn> conn = TakeIdle();
      if (conn && !conn->LooksAlive()) conn.reset();  // closed by the server while idle
      bool reused = conn != nullptr;
      if (!conn) {
        conn = std::make_unique<Conn>(config_, tls_ctx_ ? &*tls_ctx_ : nullptr);
        GPUSCHED_RETURN_IF_ERROR(conn->Connect(deadline).WithContext(fmt::format("{} {}", method, target)));
      }
      http::request<http::string_body> req(verb, std::string(target), 11);
      Prepare(req);
      if (!body.empty() || verb == http::verb::post || verb == http::verb::put || verb == http::verb::patch) {
        req.set(http::field::content_type, content_type);
        req.body() = std::string(body);
      }
      req.prepare_payload();
      beast::error_code ec = conn->Write(req, deadline);
      bool written = !ec;
      http::response_parser<http::string_body> parser;
      parser.body_limit(kMaxResponseBody);
      if (!ec) ec = conn->Read(parser, deadline);
      if (ec) {
        if (reused && ec != beast::error::timeout && (!written || idempotent)) {
          // The kept-alive connection was dead: so are its idle siblings, most likely.
          DropIdle();
          continue;
        }
        return conn->Fail(fmt::format("{} {}", method, target), ec);
      }
      http::response<http::string_body> res = parser.release();
      ApiResponse out{.status = static_cast<int>(res.result_int()), .body = std::move(res.body())};
      out.retry_after = RetryAfter(res[http::field::retry_after]);
      if (res.keep_alive()) ReturnIdle(std::move(conn));
      if (out.status == 401 && tokens_.from_file() && !retried_auth) {
        retried_auth = true;
        tokens_.Invalidate();
        continue;
      }
      return out;
    }
    return UnavailableError(fmt::format("{} {}: {}: no usable connection", method, target, config_.Url()));
  }

  StatusOr<ApiResponse> Stream(std::string_view target, std::chrono::seconds idle_timeout,
                               const std::function<bool(std::string_view)>& on_data, StreamCancel* cancel,
                               const std::function<void(int)>& on_header) {
    auto conn = std::make_unique<Conn>(config_, tls_ctx_ ? &*tls_ctx_ : nullptr);
    if (cancel != nullptr) cancel->SetHook([c = conn.get()] { c->CloseFromAnyThread(); });
    struct Unhook {
      StreamCancel* c;
      ~Unhook() {
        if (c != nullptr) c->SetHook(nullptr);
      }
    } unhook{cancel};
    auto cancelled = [&] { return cancel != nullptr && cancel->cancelled(); };
    if (cancelled()) return CancelledError("stream cancelled");
    GPUSCHED_RETURN_IF_ERROR(conn->Connect(SteadyClock::now() + options_.request_timeout).WithContext(std::string(target)));
    http::request<http::empty_body> req(http::verb::get, std::string(target), 11);
    Prepare(req);
    beast::error_code ec = conn->Write(req, SteadyClock::now() + options_.request_timeout);
    if (ec) return cancelled() ? CancelledError("stream cancelled") : conn->Fail(fmt::format("GET {}", target), ec);

    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    ec = conn->ReadHeader(parser, SteadyClock::now() + options_.request_timeout);
    if (ec) return cancelled() ? CancelledError("stream cancelled") : conn->Fail(fmt::format("GET {}", target), ec);
    ApiResponse out{.status = static_cast<int>(parser.get().result_int())};
    out.retry_after = RetryAfter(parser.get()[http::field::retry_after]);
    if (out.status == 401 && tokens_.from_file()) tokens_.Invalidate();
    if (on_header) on_header(out.status);

    std::vector<char> piece(64 * 1024);
    while (!parser.is_done()) {
      if (cancelled()) return CancelledError("stream cancelled");
      parser.get().body().data = piece.data();
      parser.get().body().size = piece.size();
      ec = conn->ReadSome(parser, SteadyClock::now() + idle_timeout);
      if (ec == http::error::need_buffer) ec = {};
      size_t n = piece.size() - parser.get().body().size;
      if (n > 0) {
        if (out.status != 200) {
          out.body.append(piece.data(), std::min(n, kMaxErrorBody - std::min(kMaxErrorBody, out.body.size())));
        } else if (!on_data(std::string_view(piece.data(), n))) {
          return out;
        }
      }
      if (ec) {
        if (cancelled()) return CancelledError("stream cancelled");
        if (ec == beast::error::timeout) {
          return DeadlineExceededError(fmt::format("GET {}: no data for {} s", target, idle_timeout.count()));
        }
        return conn->Fail(fmt::format("GET {}", target), ec);
      }
    }
    return out;
  }

  const ApiConfig& config() const { return config_; }

 private:
  template <typename Request>
  void Prepare(Request& req) {
    bool v6 = config_.host.find(':') != std::string::npos;
    req.set(http::field::host, fmt::format("{}{}{}:{}", v6 ? "[" : "", config_.host, v6 ? "]" : "", config_.port));
    req.set(http::field::user_agent, options_.user_agent);
    req.set(http::field::accept, "application/json");
    std::string token = tokens_.Get();
    if (!token.empty()) req.set(http::field::authorization, "Bearer " + token);
    req.keep_alive(true);
  }

  std::unique_ptr<Conn> TakeIdle() GPUSCHED_EXCLUDES(pool_mu_) {
    MutexLock lock(&pool_mu_);
    if (idle_.empty()) return nullptr;
    std::unique_ptr<Conn> c = std::move(idle_.back());
    idle_.pop_back();
    return c;
  }

  void DropIdle() GPUSCHED_EXCLUDES(pool_mu_) {
    MutexLock lock(&pool_mu_);
    idle_.clear();
  }

  void ReturnIdle(std::unique_ptr<Conn> c) GPUSCHED_EXCLUDES(pool_mu_) {
    MutexLock lock(&pool_mu_);
    if (idle_.size() < options_.max_idle_connections) idle_.push_back(std::move(c));
  }

  const ApiConfig config_;
  const ApiClientOptions options_;
  std::optional<ssl::context> tls_ctx_;
  TokenSource tokens_;
  TokenBucket limiter_;
  Mutex pool_mu_;
  std::vector<std::unique_ptr<Conn>> idle_ GPUSCHED_GUARDED_BY(pool_mu_);
};

StatusOr<std::unique_ptr<ApiClient>> ApiClient::Create(ApiConfig config, ApiClientOptions options) {
  auto impl = std::make_unique<Impl>(std::move(config), std::move(options));
  GPUSCHED_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<ApiClient>(new ApiClient(std::move(impl)));
}

ApiClient::ApiClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ApiClient::~ApiClient() = default;

StatusOr<ApiResponse> ApiClient::Send(std::string_view method, std::string_view target, std::string_view body,
                                      std::string_view content_type, std::chrono::milliseconds timeout) {
  return impl_->Send(method, target, body, content_type, timeout);
}

StatusOr<ApiResponse> ApiClient::Stream(std::string_view target, std::chrono::seconds idle_timeout,
                                        const std::function<bool(std::string_view)>& on_data, StreamCancel* cancel,
                                        const std::function<void(int)>& on_header) {
  return impl_->Stream(target, idle_timeout, on_data, cancel, on_header);
}

const ApiConfig& ApiClient::config() const { return impl_->config(); }

std::string StatusMessage(const ApiResponse& r) {
  rapidjson::Document d;
  if (json::Parse(r.body, &d).ok() && d.IsObject()) {
    std::string message;
    if (json::ReadString(d, "message", "Status", &message).ok() && !message.empty()) return message;
  }
  return r.body.substr(0, 200);
}

}  // namespace gpusched::kubeapi
