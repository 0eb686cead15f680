#include "gpusched/http/server.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace gpusched::http {
namespace {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

constexpr std::size_t kReadChunk = 64 * 1024;

// One connection: read a request, answer it, repeat while the client keeps the connection alive.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, const ServerOptions& options, const Router* router)
      : stream_(std::move(socket)), options_(options), router_(router) {
    // Beast reads at most the buffer's free capacity per call; the default 512 bytes turns an
    // 85 KB filter body into 170 reads. 64 KiB reads it in two.
    buffer_.reserve(kReadChunk);
  }

  void Start() { net::dispatch(stream_.get_executor(), beast::bind_front_handler(&Session::DoRead, shared_from_this())); }

 private:
  void DoRead() {
    parser_.emplace();
    parser_->body_limit(options_.body_limit);
    parser_->header_limit(64 * 1024);
    stream_.expires_after(options_.idle_timeout);
    bhttp::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, std::size_t) {
    if (ec == bhttp::error::end_of_stream || ec == beast::error::timeout || ec == net::error::operation_aborted ||
        ec == net::error::connection_reset || ec == net::error::eof) {
      return Close();
    }
    if (ec == bhttp::error::body_limit) return Refuse(bhttp::status::payload_too_large, "request body too large\n");
    if (ec == bhttp::error::header_limit) {
      return Refuse(bhttp::status::request_header_fields_too_large, "request header too large\n");
    }
    if (ec) return Refuse(bhttp::status::bad_request, fmt::format("bad request: {}\n", ec.message()));

    bhttp::request<bhttp::string_body> req = parser_->release();
    Request request{.method = std::string(req.method_string()),
                    .target = std::string(req.target()),
                    .body = std::move(req.body())};
    Response r = router_->Handle(std::move(request));
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>(static_cast<bhttp::status>(r.status),
                                                                      req.version());
    res->set(bhttp::field::server, "gpusched");
    res->set(bhttp::field::content_type, r.content_type);
    if (!r.allow.empty()) res->set(bhttp::field::allow, r.allow);
    res->keep_alive(req.keep_alive());
    if (req.method() == bhttp::verb::head) {
      res->content_length(r.body.size());
    } else {
      res->body() = std::move(r.body);
      res->prepare_payload();
    }
    Write(std::move(res));
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
    stream_.expires_after(options_.idle_timeout);
    bhttp::async_write(stream_, *res,
                       [self = shared_from_this(), res, close](beast::error_code ec, std::size_t) {
                         if (ec || close) return self->Close();
                         self->DoRead();
                       });
  }

  void Close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  const ServerOptions& options_;
  const Router* router_;
};

}  // namespace

class Server::Impl {
 public:
  Impl(ServerOptions options, const Router* router)
      : options_(std::move(options)), router_(router), ioc_(std::max(1, options_.threads)), acceptor_(ioc_) {}

  Status Start() {
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
    for (int i = 0; i < std::max(1, options_.threads); ++i) {
      threads_.emplace_back([this] { ioc_.run(); });
    }
    return OkStatus();
  }

  uint16_t port() const { return port_; }

  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopped_) return;
      stopped_ = true;
    }
    net::post(acceptor_.get_executor(), [this] {
      beast::error_code ec;
      acceptor_.close(ec);
    });
    ioc_.stop();
    for (std::thread& t : threads_) {
      if (t.joinable() && t.get_id() != std::this_thread::get_id()) t.join();
    }
    cv_.notify_all();
  }

  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return stopped_; });
  }

 private:
  void DoAccept() {
    acceptor_.async_accept(net::make_strand(ioc_), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
      if (!ec) {
        socket.set_option(tcp::no_delay(true), ec);
        std::make_shared<Session>(std::move(socket), options_, router_)->Start();
      }
      DoAccept();
    });
  }

  const ServerOptions options_;
  const Router* const router_;
  net::io_context ioc_;
  tcp::acceptor acceptor_;
  std::vector<std::thread> threads_;
  uint16_t port_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

Server::Server(ServerOptions options, const Router* router)
    : impl_(std::make_unique<Impl>(std::move(options), router)) {}

Server::~Server() { impl_->Stop(); }

Status Server::Start() { return impl_->Start(); }
uint16_t Server::port() const { return impl_->port(); }
void Server::Stop() { impl_->Stop(); }
void Server::Wait() { impl_->Wait(); }

}  // namespace gpusched::http
