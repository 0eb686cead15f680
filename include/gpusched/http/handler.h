// File: handler.h
//
// What the HTTP server (server.h) asks of whatever answers its requests: the extender's Router
// (router.h), or a smaller handler such as the node agent's /metrics.
#pragma once

#include <string>

#include "gpusched/extender/telemetry.h"

namespace gpusched::http {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, e.g. "/debug/inventory?node=a"
  std::string body;
  std::string request_id;  // from X-Request-Id when the client sent one; else the router makes one
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string allow;  // Allow header for 405
  std::string request_id;  // X-Request-Id: the caller's, or the one the router generated
};
class Handler {
 public:
  virtual ~Handler() = default;
  // Returns the response to `request`. Takes the body by value.
  virtual Response Handle(Request request) const = 0;
  // True for requests that wait on something slow: the server runs them off its I/O threads.
  virtual bool Blocks(const Request& request) const { return false; }
  // Where the server counts refused requests and connections; null: nowhere.
  virtual extender::Telemetry* telemetry() const { return nullptr; }
};

}  // namespace gpusched::http
