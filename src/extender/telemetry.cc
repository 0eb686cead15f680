// File: telemetry.cc
//
// gpusched's metric families (HTTP requests, latency, refusals, connections, filter decisions,
// errors, binds) and the scrape-time collector of inventory gauges: build info, ledger and pod
// counts, nodes by mode and state, whole-GPU and per-GPU mGPU usage.
#include "gpusched/extender/telemetry.h"

#include <fmt/format.h>

#include <map>
#include <tuple>

#include "gpusched/model/units.h"

namespace gpusched::extender {
namespace {

void Gauge(std::string* out, std::string_view name, const std::vector<std::string>& labels,
           const std::vector<std::string>& values, double v) {
  out->append(name);
  metrics::AppendLabels(out, labels, values);
  fmt::format_to(std::back_inserter(*out), " {}\n", v);
}

void CollectInventory(const inventory::Inventory& inventory, std::string* out) {
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory.Snapshot();
  inventory::InventoryStats stats = inventory.Stats();

  metrics::AppendHeader(out, "gpusched_build_info", "gpusched build; the value is 1", "gauge");
  Gauge(out, "gpusched_build_info", {"version"}, {GPUSCHED_VERSION}, 1);
  metrics::AppendHeader(out, "gpusched_ledger_allocations", "allocations booked in the ledger", "gauge");
  Gauge(out, "gpusched_ledger_allocations", {}, {}, static_cast<double>(stats.ledger_size));
  metrics::AppendHeader(out, "gpusched_pods_known", "pods known (bound and pending)", "gauge");
  Gauge(out, "gpusched_pods_known", {}, {}, static_cast<double>(stats.pods_known));
  metrics::AppendHeader(out, "gpusched_pods_pending", "pods seen in filter and not bound", "gauge");
  Gauge(out, "gpusched_pods_pending", {}, {}, static_cast<double>(stats.pending_pods));
  metrics::AppendHeader(out, "gpusched_unreadable_objects",
                        "nodes, pods and snapshot items with a field that could not be read (/debug/inventory errors)",
                        "gauge");
  Gauge(out, "gpusched_unreadable_objects", {}, {}, static_cast<double>(stats.unreadable));
  metrics::AppendHeader(out, "gpusched_inventory_version", "version of the published inventory snapshot", "gauge");
  Gauge(out, "gpusched_inventory_version", {}, {}, static_cast<double>(snapshot->version()));

  std::map<std::pair<std::string, std::string>, int> by_state;
  for (const inventory::NodeStatePtr& n : snapshot->nodes()) {
    ++by_state[{std::string(ModeName(n->mode)), std::string(placement::ConditionName(n->condition))}];
  }
  metrics::AppendHeader(out, "gpusched_nodes", "nodes by GPU mode and state", "gauge");
  for (const auto& [key, count] : by_state) Gauge(out, "gpusched_nodes", {"mode", "state"}, {key.first, key.second}, count);

  metrics::AppendHeader(out, "gpusched_node_whole_gpus", "whole GPUs a node offers and has booked", "gauge");
  for (const inventory::NodeStatePtr& n : snapshot->nodes()) {
    if (!HasPayload(n->mode, Payload::kCount)) continue;
    Gauge(out, "gpusched_node_whole_gpus", {"node", "kind"}, {n->node.name, "total"}, static_cast<double>(n->whole_total));
    Gauge(out, "gpusched_node_whole_gpus", {"node", "kind"}, {n->node.name, "used"}, static_cast<double>(n->whole_used));
  }
  metrics::AppendHeader(out, "gpusched_gpu_allocated_core_percent", "mGPU compute booked on each GPU", "gauge");
  for (const inventory::NodeStatePtr& n : snapshot->nodes()) {
    for (const placement::GpuSlot& g : n->gpus) {
      if (!HasPayload(n->mode, Payload::kShares)) break;
      Gauge(out, "gpusched_gpu_allocated_core_percent", {"node", "gpu"}, {n->node.name, std::to_string(g.index)},
            static_cast<double>(CorePercentFromMilli(g.used_milli)));
    }
  }
  metrics::AppendHeader(out, "gpusched_gpu_allocated_memory_mib", "mGPU memory booked on each GPU", "gauge");
  for (const inventory::NodeStatePtr& n : snapshot->nodes()) {
    for (const placement::GpuSlot& g : n->gpus) {
      if (!HasPayload(n->mode, Payload::kShares)) break;
      Gauge(out, "gpusched_gpu_allocated_memory_mib", {"node", "gpu"}, {n->node.name, std::to_string(g.index)},
            static_cast<double>(g.used_mib));
    }
  }
}

}  // namespace

Telemetry::Telemetry(const inventory::Inventory* inventory)
    : http_requests(registry_.AddCounter("gpusched_http_requests_total", "HTTP requests by route and status code",
                                         {"verb", "code"})),
      http_duration(registry_.AddHistogram("gpusched_http_request_duration_seconds",
                                           "time from a request's last byte to its response", {"verb"})),
      http_refused(registry_.AddCounter("gpusched_http_refused_total",
                                        "requests or connections refused by a limit", {"reason"})),
      http_connections(registry_.AddCounter("gpusched_http_connections_total", "connections accepted", {})),
      decisions(registry_.AddCounter("gpusched_filter_decisions_total", "filter verdicts per node", {"result"})),
      extender_errors(registry_.AddCounter("gpusched_extender_errors_total",
                                           "extender replies with Error set (malformed requests)", {"verb"})),
      binds(registry_.AddCounter("gpusched_binds_total", "bind outcomes", {"result"})) {
  if (inventory != nullptr) registry_.AddCollector([inventory](std::string* out) { CollectInventory(*inventory, out); });
}

}  // namespace gpusched::extender
