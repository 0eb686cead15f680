#include "gpusched/placement/victims.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

namespace gpusched::placement {
namespace {

// True if `request` fits `node` with only `kept` of its allocations.
bool FitsWith(Planner& planner, const PodRequest& request, const NodeState& node, const std::vector<AllocationPtr>& kept) {
  NodeState trial = BuildNodeStateSharing(node.node, kept);
  return planner.Evaluate(request, trial, /*want_placement=*/false).fits;
}

// Higher priority first, then UID: the order in which candidates are given back.
bool MoreImportant(const AllocationPtr& a, const AllocationPtr& b) {
  return std::tie(b->priority, a->pod_uid) < std::tie(a->priority, b->pod_uid);
}

}  // namespace

VictimChoice ChooseVictims(Planner& planner, const PodRequest& request, const NodeState& node, const VictimRules& rules) {
  VictimChoice out;
  if (!node.ready()) {
    out.reason = fmt::format("node is {}: {}", ConditionName(node.condition), node.condition_reason);
    return out;
  }
  std::vector<AllocationPtr> kept, violating, other;
  for (const AllocationPtr& a : node.allocations.shared()) {
    bool candidate = a->priority < rules.priority && !a->terminating && (!rules.may_evict || rules.may_evict(*a));
    if (!candidate) {
      kept.push_back(a);
    } else if (rules.violates_pdb && rules.violates_pdb(*a)) {
      violating.push_back(a);
    } else {
      other.push_back(a);
    }
  }
  if (!FitsWith(planner, request, node, kept)) {
    out.reason = violating.empty() && other.empty()
                     ? "no pod of lower priority holds GPUs here"
                     : fmt::format("the pod does not fit even with all {} pods of lower priority evicted", violating.size() + other.size());
    return out;
  }
  out.helps = true;
  for (std::vector<AllocationPtr>* group : {&violating, &other}) {
    std::sort(group->begin(), group->end(), MoreImportant);
    for (const AllocationPtr& a : *group) {
      kept.push_back(a);
      if (FitsWith(planner, request, node, kept)) continue;  // given back
      kept.pop_back();
      out.victims.push_back(a);
      if (group == &violating) ++out.pdb_violations;
    }
  }
  std::sort(out.victims.begin(), out.victims.end(), MoreImportant);
  return out;
}

}  // namespace gpusched::placement
