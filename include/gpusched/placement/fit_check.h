// File: fit_check.h
//
// The ledger's guard: whether a concrete placement still fits a node as it is now. The planner
// proposes; this check decides at commit time, so a stale proposal can never double-book a GPU.
//
// Pure.
#pragma once

#include "gpusched/common/status.h"
#include "gpusched/model/allocation.h"
#include "gpusched/placement/node_state.h"

namespace gpusched::placement {

// Returns OK if `placement` can be booked on `node` now, else FailedPrecondition naming the GPU
// and the shortfall.
Status CheckFits(const NodeState& node, const Placement& placement);

}  // namespace gpusched::placement
