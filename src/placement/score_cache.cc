// File: score_cache.cc
//
// The key of a pod's request shape for the score cache, including what refusal reasons show
// (container names, how quantities were spelled), so that a cached refusal reads as the pod's own.
#include "gpusched/placement/score_cache.h"

#include <fmt/format.h>

namespace gpusched::placement {

std::string ShapeKey(const PodRequest& request) {
  // Refusal reasons may name containers and show how the pod spelled its quantities: both are
  // part of the key, so that a cached refusal reads as the pod's own.
  std::string key = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}", static_cast<int>(request.kind), request.whole_gpus,
                                request.total_milli, request.total_mib, request.compute_policy,
                                request.any_compute_policy, request.node_policy.value_or("-"),
                                request.gpu_policy ? static_cast<int>(*request.gpu_policy) : -1, request.quantity_note);
  for (const MgpuContainerRequest& c : request.containers) {
    fmt::format_to(std::back_inserter(key), "|{},{},{},{},{},{},{},{},{}", c.container, c.core_percent, c.memory_mib,
                   c.cards, c.whole_card, c.milli_per_card, c.mib_per_card, c.init_position, c.sidecar);
  }
  return key;
}

}  // namespace gpusched::placement
