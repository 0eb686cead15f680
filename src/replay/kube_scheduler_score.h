// File: kube_scheduler_score.h (private to replay)
//
// What kube-scheduler's default profile scores a node for a pod by its resources, for the pods
// gpusched gives no score (prioritize answers [] for CPU-only pods; the "upstream" baselines rank
// every pod so). Two plugins of weight 1 each over cpu and memory (their default resources), each
// an integer 0-100 with the pod counted in, as Kubernetes 1.24-1.32 compute them:
// NodeResourcesFit (LeastAllocated: each resource's free share x 100 / capacity; MostAllocated:
// its used share), an integer per resource, then their integer mean, over the non-zero requests
// (a pod asking no CPU counts 100m, no memory 200 MiB); and NodeResourcesBalancedAllocation:
// (1 - the standard deviation of the used fractions, each at most 1) x 100, truncated, over the
// requests as they are. A resource the node does not list is left out of both. From
// kubernetes#130260 (the fix of #129138, merged in 2025: 1.33 on), BalancedAllocation skips a
// pod that requests neither; this does not, and no pod of the shipped traces asks neither. The
// defaults apply per container upstream; a trace row is one container, so per pod here.
#pragma once

#include <array>
#include <cstdint>

#include "gpusched/scoring/node_view.h"

namespace gpusched::replay {

// One scoring resource of a node: what it has (0: not listed) and what is requested of it with
// the pod counted in: as NodeResourcesFit counts it (each pod's non-zero request) and as it is.
struct ScoredResource {
  int64_t capacity = 0;
  int64_t nonzero_requested = 0;
  int64_t requested = 0;
};

// NodeResourcesFit plus NodeResourcesBalancedAllocation over `resources` (cpu, memory): 0-200.
int64_t DefaultResourceScore(const std::array<ScoredResource, 2>& resources, bool most_allocated = false);

// The same for `pod` on `node` of the churn replay, LeastAllocated (a resource the node does not
// track, kUntracked, is not listed).
int64_t KubeSchedulerScore(const scoring::PodShape& pod, const scoring::NodeView& node);

}  // namespace gpusched::replay
