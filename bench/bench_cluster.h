// File: bench_cluster.h
//
// Synthetic clusters for the benchmarks: N nodes of 8 GPUs each, filled to about 60% by random
// pods (fixed seed), either whole-GPU nodes or mGPU nodes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/inventory/cluster_objects.h"

namespace gpusched::bench {

enum class Kind { kWhole, kMgpu };

// Returns `nodes` nodes of `kind` with 8 GPUs each and pods bound to about `fill` of their capacity.
ClusterObjects MakeCluster(Kind kind, int nodes, double fill = 0.6, uint32_t seed = 42);

// Returns `cluster` as Kubernetes List JSON (what gpusched serve --snapshot reads).
std::string ClusterListJson(const ClusterObjects& cluster);

// A synthetic gang: its group object and its pending members, as the API server writes them.
struct GangJson {
  std::string group;                 // a scheduling.k8s.io/v1beta1 PodGroup, or Coscheduling's
  std::vector<std::string> members;  // pending Pods naming it
};

// `count` gangs of `min_members` to `max_members` members each, all of `kind` (mGPU: 30-70% core
// and 4 GiB; whole: 1 or 2 GPUs), every member needed (minCount = members), fixed seed. With
// `coscheduling`, scheduler-plugins' PodGroups and label; else 1.37's PodGroup and
// spec.schedulingGroup.
std::vector<GangJson> MakeGangs(Kind kind, int count, int min_members, int max_members, bool coscheduling,
                                uint32_t seed = 5);

// Returns `cluster` and the `gangs` as Kubernetes List JSON.
std::string ClusterListJson(const ClusterObjects& cluster, const std::vector<GangJson>& gangs);

// Returns the node names of `cluster`.
std::vector<std::string> NodeNames(const ClusterObjects& cluster);

// Returns a pending pod's JSON: whole-GPU asks for 1 GPU; mGPU for 30% core and 8 GiB.
std::string PendingPodJson(Kind kind, const std::string& uid);

}  // namespace gpusched::bench
