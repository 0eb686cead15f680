// File: planner.cc
//
// The planner's decision: the checks every kind shares in order (label, mode, condition), then the
// judgement of the pod's kind (kinds.h) on the node.
#include "gpusched/placement/planner.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpusched/placement/kinds.h"
#include "gpusched/placement/kinds/mgpu.h"

namespace gpusched::placement {

KindScratch* Planner::ScratchFor(const Kind& kind) {
  size_t i = static_cast<size_t>(kind.row().request);
  if (scratch_.size() <= i) scratch_.resize(i + 1);
  if (!scratch_[i].made) scratch_[i] = Scratch{.made = true, .buffers = kind.NewScratch()};
  return scratch_[i].buffers.get();
}

NodeVerdict Planner::Evaluate(const PodRequest& request, const NodeState& node, bool want_placement) {
  NodeVerdict v;
  if (node.condition == NodeCondition::kInvalid) {
    v.reject = Reject::kInvalidLabel;
    v.reason = node.condition_reason;
    return v;
  }
  UseKind(request.kind);
  NodeMode wanted = ModeServing(request.kind);
  if (node.mode != wanted) {
    // A pod of the mode the node is leaving: the switch is the fact that refuses it.
    bool leaving = node.condition == NodeCondition::kSwitching &&
                   std::any_of(node.blockers.begin(), node.blockers.end(), [&](const Blocker& b) { return b.mode == wanted; });
    v.reject = leaving ? Reject::kSwitching : Reject::kModeMismatch;
    v.reason = leaving ? node.condition_reason
                       : fmt::format("node mode {}; pod requests {}", ModeName(node.mode), RequestKindName(request.kind));
    return v;
  }
  if (!node.ready()) {
    v.reject = node.condition == NodeCondition::kSwitching ? Reject::kSwitching : Reject::kInconsistent;
    v.reason = node.condition_reason;
    return v;
  }
  Judging how{.options = &options_, .want_placement = want_placement, .explain = explain_, .witness = witness_,
               .scratch = kind_scratch_};
  kind_->Evaluate(request, node, how, &v);
  // More than the node could ever give: show how the pod spelled the number ("1Gi" of MiB).
  if (v.reject == Reject::kInsufficient && !v.resolvable() && !request.quantity_note.empty()) {
    v.reason = fmt::format("{} ({})", v.reason, request.quantity_note);
  }
  return v;
}

bool Planner::Fits(const PodRequest& request, const NodeState& node) {
  explain_ = false;
  bool fits = Evaluate(request, node, /*want_placement=*/false).fits();
  explain_ = true;
  return fits;
}

bool Planner::Witness(const PodRequest& request, const NodeState& node, std::vector<int>* gpus) {
  gpus->clear();
  bool one_slice = IsOneSlice(request);
  explain_ = false;
  witness_ = one_slice ? gpus : nullptr;
  NodeVerdict v = Evaluate(request, node, /*want_placement=*/!one_slice);
  witness_ = nullptr;
  explain_ = true;
  if (!v.fits()) return false;
  for (const ContainerAssignment& c : v.placement.containers) gpus->insert(gpus->end(), c.gpu_indices.begin(), c.gpu_indices.end());
  return true;
}

}  // namespace gpusched::placement
