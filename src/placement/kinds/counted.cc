// File: counted.cc
//
// Counted kinds: a pod fits while the node's free count covers its request; a refusal is
// resolvable when the node's total would.
#include "gpusched/placement/kinds/counted.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpusched/placement/node_state.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::placement {

void CountedKind::Analyze(const Pod& pod, PodRequest* out, Violations* invalid, Violations* unplaceable) const {
  out->whole_gpus = Requested(pod, invalid);
  out->largest_set = LargestSet(pod, out->whole_gpus);
  if (out->whole_gpus == 0 && invalid->empty()) out->kind = RequestKind::kNone;
}

PodRequest CountedKind::RequestHeldBy(const Allocation& a, std::string_view compute_policy) const {
  PodRequest out;
  out.kind = row().request;
  out.whole_gpus = a.placement.whole_gpus;
  return out;
}

void CountedKind::Record(const Pod& pod, const PodRequest& request, Placement* placement) const {
  placement->whole_gpus = request.whole_gpus;
}

void CountedKind::Evaluate(const PodRequest& request, const NodeState& node, const Judging& how, NodeVerdict* v) const {
  int64_t free = node.whole_total - node.whole_used;
  if (request.whole_gpus > free) {
    if (!how.explain) return;
    v->reject = Reject::kInsufficient;
    v->outcome = NodeVerdict::Refusal(request.whole_gpus <= node.whole_total);
    v->reason = fmt::format("insufficient {}: pod needs {}, node has {} of {} free", Resources(), request.whole_gpus,
                            std::max<int64_t>(0, free), node.whole_total);
    return;
  }
  v->outcome = Outcome::kFits;
  v->placement.kind = row().request;
  v->placement.whole_gpus = request.whole_gpus;
}

Status CountedKind::CheckFits(const NodeState& node, const Placement& placement) const {
  if (node.whole_used + placement.whole_gpus <= node.whole_total) return OkStatus();
  return FailedPreconditionError(fmt::format("insufficient {}: pod needs {}, node has {} of {} free", Resources(),
                                             placement.whole_gpus, node.whole_total - node.whole_used, node.whole_total));
}

}  // namespace gpusched::placement
