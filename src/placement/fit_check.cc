// File: fit_check.cc
//
// The commit-time guard: the node ready and of the placement's mode, then its kind's check
// (Kind::CheckFits: counts within the node's total; every mGPU GPU present, healthy, not held
// whole, under the instance limit, with what the pod's peak phase needs).
#include "gpusched/placement/fit_check.h"

#include <fmt/format.h>

#include "gpusched/placement/kinds.h"

namespace gpusched::placement {

Status CheckFits(const NodeState& node, const Placement& placement) {
  if (!node.ready()) return FailedPreconditionError(node.condition_reason);
  NodeMode wanted = ModeServing(placement.kind);
  if (node.mode != wanted) {
    return FailedPreconditionError(
        fmt::format("node mode {}; pod requests {}", ModeName(node.mode), RequestKindName(placement.kind)));
  }
  return KindFor(placement.kind)->CheckFits(node, placement);
}

}  // namespace gpusched::placement
