// File: verdict.h
//
// A judgement of one pod on one node, as every kind (kind.h) and the planner return it: fits, or
// refused with a category, a reason, and whether room could be made there (kube-scheduler's
// FailedNodes against FailedAndUnresolvableNodes).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gpusched/model/allocation.h"

namespace gpusched::placement {

// Why a node was refused, as a category (metrics); NodeVerdict::reason has the details.
enum class Reject {
  kNone,
  kInvalidLabel,   // the node's mode label is not a mode
  kModeMismatch,   // the node's mode does not serve the pod's kind of GPU
  kSwitching,      // pods of the node's old mode still run
  kInconsistent,   // the node's GPU inventory cannot be trusted
  kComputePolicy,  // mGPU compute policies differ
  kInsufficient,   // not enough free GPU (or the search budget ran out)
  kInvalidRequest, // the pod's own request is at fault (a DRA selector that does not compile, ...)
  kNodeFit,        // kube-scheduler's other filters refuse the pod there (node_fit.h); explain only
  kUnknownNode,    // not in the inventory; keep last
};
inline constexpr size_t kRejectKinds = static_cast<size_t>(Reject::kUnknownNode) + 1;

// Returns a short snake_case name for `r` ("insufficient", ...).
std::string_view RejectName(Reject r);

struct NodeVerdict {
  bool fits = false;
  Reject reject = Reject::kNone;  // when !fits
  // When !fits: false if no change on this node short of relabelling or repairing it can help
  // (kube-scheduler's FailedAndUnresolvableNodes), true if freeing GPUs could (FailedNodes).
  bool resolvable = false;
  std::string reason;    // when !fits
  Placement placement;   // when fits and a placement was asked for
};

}  // namespace gpusched::placement
