// File: router.h
//
// Maps HTTP requests to the extender's handlers. Pure: no sockets, so every route is testable
// without a server.
//
// Every route is one row of the route table in router.cc: its name (metrics and logs), path,
// methods, whether the admission listener serves it, how it answers while the inventory is not
// in sync, and its handler. The routes:
//
//   POST <prefix>/filter, <prefix>/prioritize, <prefix>/bind   the extender verbs (always 200)
//   POST <prefix>/preempt                                      the preempt verb (400 for a body it cannot read)
//   POST /validate/node                                        the mode-switch admission webhook
//   GET  /healthz                                              200 while the process serves
//   GET  /readyz                                               200 once the inventory is synced, else 503
//   GET  /metrics                                              Prometheus text format
//   GET  /debug/inventory[?node=NAME]                          the inventory as JSON
//   POST /explain, GET /explain?pod=NS/NAME [&format=text]     why a pod fits where it does (explain.h)
//   POST /debug/defrag (a Pod, or ?targetFrag=PCT) [&maxMoves=N][&format=text][&apply=true]
//                                                              a plan of pod moves (extender/defrag.h)
//   GET  /ui                                                   the GPU map page (ui_page.h)
//
// A known path with the wrong method answers 405; anything else 404. Each request is timed,
// counted and logged with a request id.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpusched/extender/service.h"
#include "gpusched/http/handler.h"
#include "gpusched/extender/telemetry.h"

namespace gpusched::http {

// What a router answers: everything, or (on a listener exposed beyond the pod, such as the
// admission webhook's) only POST /validate/node and GET /healthz, /readyz and /metrics, so that
// nothing outside the pod can filter, prioritize or bind; the rest is 404.
enum class RouterScope { kAll, kAdmissionOnly };

// What a route's handler reads. REQUIRES: every pointer but `telemetry` is non-null.
struct RouteContext {
  const extender::Service* service;
  const inventory::Inventory* inventory;
  const std::atomic<bool>* ready;
  extender::Telemetry* telemetry;
};

class Router : public Handler {
 public:
  // REQUIRES: `service`, `inventory`, `ready` and `telemetry` (if not null) outlive the router.
  // `prefix` is "" or starts with "/".
  Router(const extender::Service* service, const inventory::Inventory* inventory, const std::atomic<bool>* ready,
         std::string prefix, extender::Telemetry* telemetry = nullptr, RouterScope scope = RouterScope::kAll)
      : context_{service, inventory, ready, telemetry}, prefix_(std::move(prefix)), scope_(scope) {}

  // Returns the response to `request`. Takes the body by value: filter parses it in place.
  // While *ready is false, filter and bind answer Error, prioritize and validate_node 503.
  Response Handle(Request request) const override;
  // True for requests whose handling waits on the API server (bind, when the service binds
  // through it: writes and their retries): the server runs them off its I/O threads.
  bool Blocks(const Request& request) const override;

  extender::Telemetry* telemetry() const override { return context_.telemetry; }

 private:
  const RouteContext context_;
  const std::string prefix_;
  const RouterScope scope_;
  mutable std::atomic<uint64_t> next_id_{1};
};

// Returns the value of query parameter `key` in `target` (percent-decoded), or "".
std::string QueryParam(std::string_view target, std::string_view key);

}  // namespace gpusched::http
