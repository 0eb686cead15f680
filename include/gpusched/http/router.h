// File: router.h
//
// Maps HTTP requests to the extender's handlers. Pure: no sockets, so every route is testable
// without a server.
//
//   POST <prefix>/filter, <prefix>/prioritize, <prefix>/bind   the extender verbs (always 200)
//   GET  /healthz                                              200 while the process serves
//   GET  /readyz                                               200 once the inventory is synced, else 503
//   GET  /debug/inventory[?node=NAME]                          the inventory as JSON
//
// A known path with the wrong method answers 405; anything else 404.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <string_view>

#include "gpusched/extender/service.h"

namespace gpusched::http {

struct Request {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query, e.g. "/debug/inventory?node=a"
  std::string body;
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string allow;  // Allow header for 405
};

class Router {
 public:
  // REQUIRES: `service` and `ready` outlive the router. `prefix` is "" or starts with "/".
  Router(const extender::Service* service, const std::atomic<bool>* ready, std::string prefix)
      : service_(service), ready_(ready), prefix_(std::move(prefix)) {}

  // Returns the response to `request`. Takes the body by value: filter parses it in place.
  Response Handle(Request request) const;

 private:
  const extender::Service* const service_;
  const std::atomic<bool>* const ready_;
  const std::string prefix_;
};

// Returns the value of query parameter `key` in `target` (percent-decoded), or "".
std::string QueryParam(std::string_view target, std::string_view key);

}  // namespace gpusched::http
