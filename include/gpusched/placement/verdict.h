// File: verdict.h
//
// A judgement of one pod on one node, as every kind (kind.h), the planner and the DRA planner return
// it: an outcome in kube-scheduler's status codes (fits, unschedulable, unresolvable, error), and
// for a refusal a category and a reason.
#pragma once

#include <cstddef>
#include <cstdint>
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

// What one judgement comes to, in kube-scheduler's status codes for a filter on one node
// (framework.Code) and the extender answer each one becomes.
enum class Outcome : uint8_t {
  kFits,           // Success: the node passes
  kUnschedulable,  // Unschedulable: freeing GPUs on this node could help (FailedNodes)
  kUnresolvable,   // UnschedulableAndUnresolvable: nothing short of relabelling or repairing the
                   // node helps (FailedAndUnresolvableNodes)
  kError,          // Error: the pod's own request is at fault (a DRA claim missing, a selector
                   // that does not compile); it stops the pod's scheduling attempt, as upstream
};

struct NodeVerdict {
  Outcome outcome = Outcome::kUnresolvable;
  Reject reject = Reject::kNone;  // unless it fits
  std::string reason;             // unless it fits
  Placement placement;            // when it fits and a placement was asked for

  bool fits() const { return outcome == Outcome::kFits; }
  bool resolvable() const { return outcome == Outcome::kUnschedulable; }
  // The refusal's outcome from whether freeing GPUs could help.
  static Outcome Refusal(bool resolvable) { return resolvable ? Outcome::kUnschedulable : Outcome::kUnresolvable; }
};

}  // namespace gpusched::placement
