// File: cluster_replay.h
//
// A recorded cluster replayed through the extender itself: the cluster (Kubernetes List JSON, as
// `gpusched serve --snapshot` reads it) is loaded into an Inventory, and each pod to place goes
// through extender::Service's filter, prioritize and bind with real request bodies, in order. The
// node is picked as kube-scheduler would: the kept node if filter kept one, else the highest
// prioritize score, ties broken at random (seeded). What this measures is what production does,
// for all three node modes. DRA claims are allocated as in owner mode (bind writes them to the
// in-memory claims), so that each pod sees the devices the ones before it took.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/cluster_objects.h"
#include "gpusched/model/resource_list.h"
#include "gpusched/placement/node_state.h"

namespace gpusched::replay {

// NodeResourcesFit's scoring strategy: LeastAllocated is kube-scheduler's default;
// MostAllocated is its documented bin-packing configuration.
enum class FitStrategy { kLeastAllocated, kMostAllocated };

struct ClusterReplayOptions {
  extender::ServiceOptions service;  // node policy, score mapping, filter top-K, ...
  uint64_t seed = 42;                // kube-scheduler's tie-break
  // kube-scheduler without gpusched's ranking, the baseline (policies "upstream" and
  // "upstream-packing"): the node with the best UpstreamScore among those filter keeps, DRA
  // devices in the order upstream's allocator picks them (published order).
  std::optional<FitStrategy> upstream;
};

// kube-scheduler's score of a node for a pod that gpusched does not rank: NodeResourcesFit with
// `strategy` plus NodeResourcesBalancedAllocation, each 0-100 over cpu and memory (weights 1), on
// the node's allocatable and the requests of its bound pods and of `pod` (a pod asking no CPU
// counts 100m, no memory 200 MiB: NodeResourcesFit's non-zero defaults, which upstream applies
// per container; the pod's total is what the inventory keeps, so a pod of two containers asking
// nothing counts once here, twice upstream). Integer arithmetic as
// upstream's. The other default plugins score every node of a replayed cluster alike. Extended
// resources served by DRA are not scored: the scoring resources are cpu and memory.
int64_t UpstreamScore(const placement::NodeState& node, const ResourceList& pod, FitStrategy strategy = FitStrategy::kLeastAllocated);

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
  // Ready nvidia and mgpu nodes, what tells policies apart that place every pod: GPUs left idle,
  // FGD's fragmentation F(M) for the replayed pods (M built from their shapes), in % of those
  // GPUs, and the largest pod of each kind that still fits on one node: whole GPUs free on one
  // nvidia node, and the most compute (% of a GPU) and memory (MiB) free on one mGPU GPU.
  int idle_gpus = 0;
  double gpu_fragmented_pct = 0;
  int largest_whole_fit = 0;
  int largest_mgpu_core_pct = 0;
  int64_t largest_mgpu_mib = 0;
  // Ready nvidia-dra nodes: their GPU devices (DRA's GPU drivers), the share allocated, and FGD's
  // fragmentation for the pods replayed (the free GPUs of a node that a pod drawn from their
  // GPU counts could not use there: all of them when fewer than it asks), in % of the devices.
  int64_t dra_gpus = 0;
  double dra_gpu_used_pct = 0;
  double dra_fragmented_pct = 0;
  int dra_idle_nodes = 0;      // nodes with every GPU free
  int largest_free = 0;        // the most GPUs free on one node: the largest pod that still fits
  int64_t dra_pod_gpus = 0;    // DRA GPUs the placed pods hold, summed over pods: the devices
                               // allocated, unless one were held twice
  int multi_gpu_pods = 0;      // placed pods holding 2+ DRA GPUs
  int split_pods = 0;          // of those, the ones whose GPUs span more PCIe roots than they need
  std::vector<Placed> placements;
  double wall_s = 0;
};

// Replays `pods_json` (one Pod object each, compact JSON) on `cluster`.
ClusterReplayResult RunClusterReplay(const ClusterObjects& cluster, const std::vector<std::string>& pods_json,
                                     const ClusterReplayOptions& options);

std::string ClusterSummaryCsv(const std::vector<ClusterReplayResult>& results);
std::string PlacementsCsv(const std::vector<ClusterReplayResult>& results);

}  // namespace gpusched::replay
