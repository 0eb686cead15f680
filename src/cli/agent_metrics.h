// File: agent_metrics.h (cli)
//
// The node agent's GET /metrics (and /healthz), Prometheus text format, from its last round:
//   gpusched_agent_gpus{node}                  GPUs nvidia-smi reports
//   gpusched_agent_gpu_healthy{node,gpu,uuid}  1 healthy, 0 not (agent/nvidia_smi.h)
//   gpusched_agent_gpu_drift{node,gpu}         1 if what runs there drifts from what gpusched
//                                              booked (agent/drift.h); gpu="all" for GPUs in use
//                                              beyond the node's whole-GPU pods
//   gpusched_agent_publishes_total{node}       annotation writes
//   gpusched_agent_errors_total{node}          rounds that failed (nvidia-smi or the API server)
//
// Thread-safe: rounds update it while the server reads it.
#pragma once

#include <string>
#include <vector>

#include "gpusched/agent/drift.h"
#include "gpusched/agent/nvidia_smi.h"
#include "gpusched/common/mutex.h"
#include "gpusched/http/handler.h"

namespace gpusched::cli {

class AgentMetrics : public http::Handler {
 public:
  explicit AgentMetrics(std::string node) : node_(std::move(node)) {}

  // Records a round that read `gpus`, found `drift`, and wrote the annotation if `published`.
  void Round(const std::vector<agent::PhysicalGpu>& gpus, const std::vector<agent::GpuDrift>& drift, bool published)
      GPUSCHED_EXCLUDES(mu_);
  // Records a round that failed.
  void Failed() GPUSCHED_EXCLUDES(mu_);

  http::Response Handle(http::Request request) const override GPUSCHED_EXCLUDES(mu_);

 private:
  const std::string node_;
  mutable Mutex mu_;
  std::string gauges_ GPUSCHED_GUARDED_BY(mu_);  // the last round's gauges, rendered
  uint64_t publishes_ GPUSCHED_GUARDED_BY(mu_) = 0;
  uint64_t errors_ GPUSCHED_GUARDED_BY(mu_) = 0;
};

}  // namespace gpusched::cli
