#include "gpusched/placement/victims.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "gpusched/placement/nomination.h"

namespace gpusched::placement {
namespace {


// What AddUse changes of a usage view, kept to undo it (assigning into kept vectors, so that a
// try costs no allocation once the first is made).
class Saved {
 public:
  void Save(const NodeState& usage) {
    gpus_ = usage.gpus;
    totals_ = {usage.whole_used, usage.used_milli, usage.used_mib, usage.unassigned_milli, usage.unassigned_mib};
  }
  void Restore(NodeState* usage) const {
    usage->gpus = gpus_;
    std::tie(usage->whole_used, usage->used_milli, usage->used_mib, usage->unassigned_milli, usage->unassigned_mib) = totals_;
  }

 private:
  std::vector<GpuSlot> gpus_;
  std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t> totals_;
};

// Higher priority first, then UID: the order in which candidates are given back.
bool MoreImportant(const AllocationPtr* a, const AllocationPtr* b) {
  const Allocation& x = **a;
  const Allocation& y = **b;
  return x.priority != y.priority ? x.priority > y.priority : x.pod_uid < y.pod_uid;
}

}  // namespace

void Reprieve(std::vector<const AllocationPtr*> candidates, const VictimRules& rules,
              const std::function<bool(const Allocation&)>& give_back, VictimChoice* out) {
  // Budgets are used up by the candidates in this order, as upstream's filterPodsWithPDBViolation.
  std::sort(candidates.begin(), candidates.end(), MoreImportant);
  std::vector<const AllocationPtr*> violating, other, victims;
  for (const AllocationPtr* a : candidates) (rules.violates_pdb && rules.violates_pdb(**a) ? violating : other).push_back(a);
  for (std::vector<const AllocationPtr*>* group : {&violating, &other}) {
    for (const AllocationPtr* a : *group) {
      if (give_back(**a)) continue;
      victims.push_back(a);
      if (group == &violating) ++out->pdb_violations;
    }
  }
  std::sort(victims.begin(), victims.end(), MoreImportant);
  for (const AllocationPtr* a : victims) out->victims.push_back(*a);
}

std::string NoRoomReason(size_t candidates) {
  return candidates == 0 ? "no pod of lower priority holds GPUs here"
                         : fmt::format("the pod does not fit even with all {} pods of lower priority evicted", candidates);
}

VictimChoice ChooseVictims(Planner& planner, const PodRequest& request, const NodeState& node, const VictimRules& rules) {
  VictimChoice out;
  if (!node.ready()) {
    out.reason = fmt::format("node is {}: {}", ConditionName(node.condition), node.condition_reason);
    return out;
  }
  // The node's use with only the pods that stay: every non-candidate, and those given back.
  NodeState kept = EmptyUsage(node);
  for (const Allocation& h : node.holds) {
    if (HoldCounts(h, rules.pod_uid, rules.priority)) AddUse(h, &kept);  // never freed
  }
  // Pointers into node.allocations (no reference counting on this path).
  std::vector<const AllocationPtr*> candidates;
  for (const AllocationPtr& a : node.allocations.shared()) {
    if (IsCandidate(*a, rules)) {
      candidates.push_back(&a);
    } else {
      AddUse(*a, &kept);
    }
  }
  if (!planner.Fits(request, kept)) {
    out.reason = NoRoomReason(candidates.size());
    return out;
  }
  out.helps = true;
  Saved saved;
  Reprieve(std::move(candidates), rules, [&](const Allocation& a) {
    saved.Save(kept);
    AddUse(a, &kept);
    if (planner.Fits(request, kept)) return true;
    saved.Restore(&kept);
    return false;
  }, &out);
  return out;
}

}  // namespace gpusched::placement
