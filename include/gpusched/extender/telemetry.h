// File: telemetry.h
//
// gpusched's metrics, in one place: the HTTP layer's (requests, latency, refusals), the
// extender's (decisions by reason, binds) and the inventory's, computed at scrape time (nodes by
// mode and state, ledger size, per node and GPU allocated compute and memory). Served on /metrics.
//
// Thread-safe. The inventory must outlive the telemetry.
#pragma once

#include <string>

#include "gpusched/common/metrics.h"
#include "gpusched/inventory/inventory.h"

namespace gpusched::extender {

class Telemetry {
 public:
  // Registers the families; the inventory collector reads `inventory` at each scrape.
  explicit Telemetry(const inventory::Inventory* inventory);

  std::string Render() const { return registry_.Render(); }

  metrics::Registry registry_;
  metrics::CounterFamily& http_requests;       // {verb, code}
  metrics::HistogramFamily& http_duration;     // {verb}
  metrics::CounterFamily& http_refused;        // {reason}
  metrics::CounterFamily& http_connections;    // accepted connections
  metrics::CounterFamily& decisions;           // filter verdicts per node {result}
  metrics::CounterFamily& extender_errors;     // request-level Error replies {verb}
  metrics::CounterFamily& binds;               // {result}
};

}  // namespace gpusched::extender
