// File: agent_metrics.cc
//
// The node agent's metrics: each round's GPU, health and drift gauges rendered once and kept as
// text, counters of publishes and failed rounds, and the small handler that serves /metrics and
// /healthz from them.
#include "cli/agent_metrics.h"

#include <fmt/format.h>

#include <set>

#include "gpusched/common/metrics.h"

namespace gpusched::cli {

void AgentMetrics::Round(const std::vector<agent::PhysicalGpu>& gpus, const std::vector<agent::GpuDrift>& drift, bool published) {
  std::string out;
  metrics::AppendHeader(&out, "gpusched_agent_gpus", "GPUs nvidia-smi reports on this node.", "gauge");
  out += "gpusched_agent_gpus";
  metrics::AppendLabels(&out, {"node"}, {node_});
  out += fmt::format(" {}\n", gpus.size());
  metrics::AppendHeader(&out, "gpusched_agent_gpu_healthy", "1 if the GPU is healthy (ECC, row remapping, retired pages).", "gauge");
  for (const agent::PhysicalGpu& g : gpus) {
    out += "gpusched_agent_gpu_healthy";
    metrics::AppendLabels(&out, {"node", "gpu", "uuid"}, {node_, std::to_string(g.index), g.uuid});
    out += g.healthy ? " 1\n" : " 0\n";
  }
  std::set<int> drifting;
  for (const agent::GpuDrift& d : drift) drifting.insert(d.index);
  metrics::AppendHeader(&out, "gpusched_agent_gpu_drift",
                        "1 if what runs on the GPU drifts from what gpusched booked there (GPUAccountingDrift).", "gauge");
  for (const agent::PhysicalGpu& g : gpus) {
    out += "gpusched_agent_gpu_drift";
    metrics::AppendLabels(&out, {"node", "gpu"}, {node_, std::to_string(g.index)});
    out += drifting.contains(g.index) ? " 1\n" : " 0\n";
  }
  out += "gpusched_agent_gpu_drift";
  metrics::AppendLabels(&out, {"node", "gpu"}, {node_, "all"});
  out += drifting.contains(-1) ? " 1\n" : " 0\n";
  MutexLock lock(&mu_);
  gauges_ = std::move(out);
  publishes_ += published ? 1 : 0;
}

void AgentMetrics::Failed() {
  MutexLock lock(&mu_);
  ++errors_;
}

http::Response AgentMetrics::Handle(http::Request request) const {
  std::string path = request.target.substr(0, request.target.find('?'));
  if (path == "/healthz") return http::Response{.status = 200, .content_type = "text/plain; charset=utf-8", .body = "ok\n"};
  if (path != "/metrics") return http::Response{.status = 404, .content_type = "text/plain; charset=utf-8", .body = "not found\n"};
  std::string out;
  MutexLock lock(&mu_);
  out = gauges_;
  for (const auto& [name, help, value] : {std::tuple{"gpusched_agent_publishes_total", "Writes of the gpu-devices annotation.", publishes_},
                                          std::tuple{"gpusched_agent_errors_total", "Rounds that failed.", errors_}}) {
    metrics::AppendHeader(&out, name, help, "counter");
    out += name;
    metrics::AppendLabels(&out, {"node"}, {node_});
    out += fmt::format(" {}\n", value);
  }
  return http::Response{.status = 200, .content_type = "text/plain; version=0.0.4; charset=utf-8", .body = std::move(out)};
}

}  // namespace gpusched::cli
