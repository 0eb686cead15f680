// File: verdict.cc
//
// The names of the refusal categories, as metrics label them.
#include "gpusched/placement/verdict.h"

namespace gpusched::placement {

std::string_view RejectName(Reject r) {
  switch (r) {
    case Reject::kNone:
      return "none";
    case Reject::kInvalidLabel:
      return "invalid_label";
    case Reject::kModeMismatch:
      return "mode_mismatch";
    case Reject::kSwitching:
      return "switching";
    case Reject::kInconsistent:
      return "inconsistent";
    case Reject::kComputePolicy:
      return "compute_policy";
    case Reject::kInsufficient:
      return "insufficient";
    case Reject::kInvalidRequest:
      return "invalid_request";
    case Reject::kNodeFit:
      return "node_fit";
    case Reject::kUnknownNode:
      return "unknown_node";
  }
  return "none";
}

}  // namespace gpusched::placement
