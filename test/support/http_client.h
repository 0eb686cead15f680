// File: http_client.h
//
// A blocking HTTP/1.1 client for tests and benchmarks: one keep-alive connection to 127.0.0.1.
// Beast stays in http_client.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace gpusched::testing {

struct HttpReply {
  int status = 0;  // 0 when the request failed at the transport level
  std::string body;
  std::string content_type;
  std::string request_id;  // the X-Request-Id response header
  std::string error;  // transport error, if any
};

class HttpClient {
 public:
  explicit HttpClient(uint16_t port);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  HttpReply Post(std::string_view target, std::string body);
  HttpReply Get(std::string_view target);
  HttpReply Send(std::string_view method, std::string_view target, std::string body,
                 std::string_view request_id = {});
  // Writes raw bytes and reads one response (for malformed HTTP).
  HttpReply Raw(std::string_view bytes);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched::testing
