#include "http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <optional>

namespace gpusched::testing {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

class HttpClient::Impl {
 public:
  explicit Impl(uint16_t port) : port_(port) {}

  HttpReply Send(std::string_view method, std::string_view target, std::string body, std::string_view request_id) {
    http::request<http::string_body> req(http::string_to_verb(method), std::string(target), 11);
    req.set(http::field::host, "127.0.0.1");
    if (!request_id.empty()) req.set("X-Request-Id", request_id);
    req.set(http::field::content_type, "application/json");
    req.keep_alive(true);
    req.body() = std::move(body);
    req.prepare_payload();
    HttpReply reply;
    // One retry on a fresh connection if the kept-alive one was closed by the server.
    for (int attempt = 0; attempt < 2; ++attempt) {
      beast::error_code ec;
      if (!Connected(ec)) return Fail(ec);
      http::write(*socket_, req, ec);
      if (!ec) {
        beast::flat_buffer buffer;
        buffer.reserve(64 * 1024);
        http::response_parser<http::string_body> parser;
        parser.body_limit(1u << 30);
        http::read(*socket_, buffer, parser, ec);
        if (!ec) {
          auto res = parser.release();
          reply.status = res.result_int();
          reply.body = std::move(res.body());
          reply.content_type = std::string(res[http::field::content_type]);
          reply.request_id = std::string(res["X-Request-Id"]);
          if (!res.keep_alive()) socket_.reset();
          return reply;
        }
      }
      socket_.reset();
      if (attempt == 1) return Fail(ec);
    }
    return reply;
  }

  HttpReply Raw(std::string_view bytes) {
    beast::error_code ec;
    if (!Connected(ec)) return Fail(ec);
    net::write(*socket_, net::buffer(bytes.data(), bytes.size()), ec);
    if (ec) return Fail(ec);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(1u << 30);
    http::read(*socket_, buffer, parser, ec);
    socket_.reset();
    if (ec) return Fail(ec);
    auto res = parser.release();
    return HttpReply{.status = static_cast<int>(res.result_int()), .body = std::move(res.body())};
  }

 private:
  bool Connected(beast::error_code& ec) {
    if (socket_) return true;
    socket_.emplace(ioc_);
    socket_->connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_), ec);
    if (!ec) socket_->set_option(tcp::no_delay(true), ec);
    if (ec) {
      socket_.reset();
      return false;
    }
    return true;
  }

  static HttpReply Fail(const beast::error_code& ec) { return HttpReply{.error = ec ? ec.message() : "failed"}; }

  uint16_t port_;
  net::io_context ioc_;
  std::optional<tcp::socket> socket_;
};

HttpClient::HttpClient(uint16_t port) : impl_(std::make_unique<Impl>(port)) {}
HttpClient::~HttpClient() = default;
HttpReply HttpClient::Post(std::string_view target, std::string body) {
  return impl_->Send("POST", target, std::move(body), {});
}
HttpReply HttpClient::Get(std::string_view target) { return impl_->Send("GET", target, "", {}); }
HttpReply HttpClient::Send(std::string_view method, std::string_view target, std::string body,
                           std::string_view request_id) {
  return impl_->Send(method, target, std::move(body), request_id);
}
HttpReply HttpClient::Raw(std::string_view bytes) { return impl_->Raw(bytes); }

}  // namespace gpusched::testing
