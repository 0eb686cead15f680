// File: cluster_replay.h
//
// A recorded cluster replayed through the extender itself: the cluster (Kubernetes List JSON, as
// `gpusched serve --snapshot` reads it) is loaded into an Inventory, and each pod to place goes
// through extender::Service's filter, prioritize and bind with real request bodies, in order. The
// node is picked as kube-scheduler would: the kept node if filter kept one, else the highest
// prioritize score, ties broken at random (seeded). What this measures is what production does,
// for all three node modes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/cluster_objects.h"

namespace gpusched::replay {

struct ClusterReplayOptions {
  extender::ServiceOptions service;  // node policy, score mapping, filter top-K, ...
  uint64_t seed = 42;                // kube-scheduler's tie-break
};

struct Placed {
  std::string pod;    // namespace/name
  std::string node;   // "" when the pod fitted nowhere or bind failed
  std::string error;  // why not placed: the filter reasons, or bind's Error
};

struct ClusterReplayResult {
  std::string policy;
  uint64_t seed = 0;
  int pods = 0;
  int placed = 0;
  int failed = 0;
  double whole_gpu_used_pct = 0;   // nvidia.com/gpu booked / offered, over ready whole-GPU nodes
  double mgpu_core_used_pct = 0;   // mGPU compute booked / capacity
  double mgpu_memory_used_pct = 0;
  std::vector<Placed> placements;
  double wall_s = 0;
};

// Replays `pods_json` (one Pod object each, compact JSON) on `cluster`.
ClusterReplayResult RunClusterReplay(const ClusterObjects& cluster, const std::vector<std::string>& pods_json,
                                     const ClusterReplayOptions& options);

std::string ClusterSummaryCsv(const std::vector<ClusterReplayResult>& results);
std::string PlacementsCsv(const std::vector<ClusterReplayResult>& results);

}  // namespace gpusched::replay
