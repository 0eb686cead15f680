#include "gpusched/placement/victims.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <tuple>

#include "gpusched/placement/nomination.h"

namespace gpusched::placement {
namespace {


// A usage view's GPU slots and totals, kept to start again from them.
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

// AddPackedUse that can be undone: it keeps what the allocation changes (the slots of its GPUs
// and the totals), not the whole view, since a try is repeated for dozens of pods per node.
class UndoableAdd {
 public:
  void Add(const NodeState& node, size_t i, NodeState* usage) {
    slots_.clear();
    const PackedAllocation& p = node.packed[i];
    for (uint32_t k = p.first_use; k < p.first_use + p.uses; ++k) {
      const GpuSlot* slot = usage->FindGpu(node.packed_uses[k].index);
      if (slot != nullptr) slots_.emplace_back(static_cast<size_t>(slot - usage->gpus.data()), *slot);
    }
    totals_ = {usage->whole_used, usage->used_milli, usage->used_mib};
    AddPackedUse(node, i, usage);
  }
  // The positions in usage->gpus of the slots the last Add changed (a GPU the pod uses twice
  // is listed twice).
  template <typename F>
  void ForEachTouched(F&& f) const {
    for (const auto& [position, slot] : slots_) f(position);
  }
  // Undoes the last Add. REQUIRES: `usage` is unchanged since.
  void Undo(NodeState* usage) const {
    for (const auto& [position, slot] : slots_) usage->gpus[position] = slot;
    std::tie(usage->whole_used, usage->used_milli, usage->used_mib) = totals_;
  }

 private:
  std::vector<std::pair<size_t, GpuSlot>> slots_;  // position in usage->gpus, value before
  std::tuple<int64_t, int64_t, int64_t> totals_;
};

// Higher priority first, then UID: the order in which candidates are given back.
bool MoreImportant(const AllocationPtr* a, const AllocationPtr* b) {
  const Allocation& x = **a;
  const Allocation& y = **b;
  return x.priority != y.priority ? x.priority > y.priority : x.pod_uid < y.pod_uid;
}

// Candidates in the order they are offered back: those whose eviction violates a budget first,
// each group in the order given (rules.violates_pdb is called once each, in that order).
struct ReprieveOrder {
  std::vector<size_t> order;  // positions in the candidates' list
  size_t violating = 0;       // the first `violating` of order
};

ReprieveOrder SplitByBudget(size_t count, const VictimRules& rules, const std::function<const Allocation&(size_t)>& at) {
  ReprieveOrder out;
  out.order.resize(count);
  for (size_t i = 0; i < count; ++i) out.order[i] = i;
  if (!rules.violates_pdb) return out;
  std::vector<size_t> violating, other;
  for (size_t i = 0; i < count; ++i) (rules.violates_pdb(at(i)) ? violating : other).push_back(i);
  out.violating = violating.size();
  violating.insert(violating.end(), other.begin(), other.end());
  out.order = std::move(violating);
  return out;
}

// Offers each candidate back in `order`: `give_back(i)` returns true if the pod still fits with
// candidate i back (it stays back), false if not (undone: a victim). Returns the victims' positions.
template <typename GiveBack>
std::vector<size_t> GiveBackInOrder(const ReprieveOrder& order, GiveBack&& give_back, VictimChoice* out) {
  std::vector<size_t> victims;
  for (size_t k = 0; k < order.order.size(); ++k) {
    size_t i = order.order[k];
    if (give_back(i)) continue;
    victims.push_back(i);
    if (k < order.violating) ++out->pdb_violations;
  }
  std::sort(victims.begin(), victims.end());  // positions follow the order of importance
  return victims;
}

// Candidate positions (into node.allocations), in decreasing priority then UID.
std::vector<uint32_t> Candidates(const NodeState& node, const VictimRules& rules) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < node.packed.size(); ++i) {
    if (IsCandidate(node.packed[i], rules)) out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    const PackedAllocation& x = node.packed[a];
    const PackedAllocation& y = node.packed[b];
    return x.priority != y.priority ? x.priority > y.priority : x.uid_rank < y.uid_rank;
  });
  return out;
}

// True if node.allocations[i] uses none of `gpus`.
bool Avoids(const NodeState& node, size_t i, const std::vector<int>& gpus) {
  const PackedAllocation& p = node.packed[i];
  for (uint32_t k = p.first_use; k < p.first_use + p.uses; ++k) {
    if (std::find(gpus.begin(), gpus.end(), node.packed_uses[k].index) != gpus.end()) return false;
  }
  return true;
}

// The reprieve on `kept` for an mGPU pod, with a witness: the GPUs of a placement of the pod on
// `kept` as it stands. A candidate on none of them leaves that placement valid, so it is given back
// without asking the planner; otherwise the planner is asked, and its placement is the next
// witness. Returns nullopt (`kept` and `out` then undefined) if the planner does not confirm the
// final state (its search missed what a witness showed); the caller then asks it at every step.
std::optional<std::vector<size_t>> GiveBackWithWitness(Planner& planner, const PodRequest& request, const NodeState& node,
                                                       const std::vector<uint32_t>& candidates, const ReprieveOrder& order,
                                                       NodeState* kept, VictimChoice* out) {
  std::vector<int> witness;
  if (!planner.Witness(request, *kept, &witness)) return std::nullopt;
  UndoableAdd add;
  std::vector<size_t> victims = GiveBackInOrder(order, [&](size_t c) {
    size_t i = candidates[c];
    if (Avoids(node, i, witness)) {
      AddPackedUse(node, i, kept);
      return true;
    }
    add.Add(node, i, kept);
    if (planner.Witness(request, *kept, &witness)) return true;
    add.Undo(kept);
    return false;
  }, out);
  if (!planner.Fits(request, *kept)) return std::nullopt;
  return victims;
}

// The reprieve on `kept` for a one-slice mGPU pod (Planner::IsOneSlice): the pod fits while the
// node's totals do and some GPU takes the slice (the compute policy, fixed for the node, held
// when the caller found that the pod fits `kept`), so a candidate given back rechecks only the
// GPUs it uses, and a count of the GPUs that take the slice says whether one still does.
// Returns nullopt (`kept` and `out` then undefined) if the planner does not confirm the final
// state. REQUIRES: the pod fits `kept`.
std::optional<std::vector<size_t>> GiveBackOneSlice(Planner& planner, const PodRequest& request, const NodeState& node,
                                                    const std::vector<uint32_t>& candidates, const ReprieveOrder& order,
                                                    NodeState* kept, VictimChoice* out) {
  std::vector<char> takes(kept->gpus.size());
  size_t taking = 0;
  for (size_t p = 0; p < takes.size(); ++p) taking += takes[p] = Planner::GpuTakesSlice(request, kept->gpus[p]);
  UndoableAdd add;
  std::vector<size_t> victims = GiveBackInOrder(order, [&](size_t c) {
    add.Add(node, candidates[c], kept);
    size_t lost = 0;
    add.ForEachTouched([&](size_t p) {
      if (takes[p] && !Planner::GpuTakesSlice(request, kept->gpus[p])) {
        takes[p] = false;  // set back by the undo below if the candidate stays a victim
        ++lost;
      }
    });
    if (lost < taking && Planner::TotalsFit(request, *kept)) {
      taking -= lost;
      return true;
    }
    add.Undo(kept);
    add.ForEachTouched([&](size_t p) { takes[p] = Planner::GpuTakesSlice(request, kept->gpus[p]); });
    return false;
  }, out);
  if (!planner.Fits(request, *kept)) return std::nullopt;
  return victims;
}

}  // namespace

bool IsCandidate(const PackedAllocation& a, const VictimRules& rules) {
  bool known = a.origin == AllocationOrigin::kObserved || a.origin == AllocationOrigin::kCommitted;
  return a.priority < rules.priority && !a.terminating && (!rules.known_only || known);
}

bool IsCandidate(const Allocation& a, const VictimRules& rules) {
  return IsCandidate(PackedAllocation{.priority = a.priority, .terminating = a.terminating, .origin = a.origin}, rules);
}

void Reprieve(std::vector<const AllocationPtr*> candidates, const VictimRules& rules,
              const std::function<bool(const Allocation&)>& give_back, VictimChoice* out) {
  std::sort(candidates.begin(), candidates.end(), MoreImportant);
  ReprieveOrder order = SplitByBudget(candidates.size(), rules, [&](size_t i) -> const Allocation& { return **candidates[i]; });
  for (size_t i : GiveBackInOrder(order, [&](size_t i) { return give_back(**candidates[i]); }, out)) {
    out->victims.push_back(*candidates[i]);
  }
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
  std::vector<uint32_t> candidates = Candidates(node, rules);
  for (size_t i = 0; i < node.packed.size(); ++i) {
    if (!IsCandidate(node.packed[i], rules)) AddPackedUse(node, i, &kept);
  }
  if (!planner.Fits(request, kept)) {
    out.reason = NoRoomReason(candidates.size());
    return out;
  }
  out.helps = true;
  const std::vector<AllocationPtr>& all = node.allocations.shared();
  ReprieveOrder order = SplitByBudget(candidates.size(), rules, [&](size_t c) -> const Allocation& { return *all[candidates[c]]; });
  std::optional<std::vector<size_t>> victims;
  if (request.kind == RequestKind::kMgpu) {
    Saved start;
    start.Save(kept);
    victims = Planner::IsOneSlice(request) ? GiveBackOneSlice(planner, request, node, candidates, order, &kept, &out)
                                           : GiveBackWithWitness(planner, request, node, candidates, order, &kept, &out);
    if (!victims) {
      start.Restore(&kept);
      out.pdb_violations = 0;
    }
  }
  if (!victims) {
    UndoableAdd add;
    victims = GiveBackInOrder(order, [&](size_t c) {
      add.Add(node, candidates[c], &kept);
      if (planner.Fits(request, kept)) return true;
      add.Undo(&kept);
      return false;
    }, &out);
  }
  out.victims.reserve(victims->size());
  for (size_t c : *victims) out.victims.push_back(all[candidates[c]]);
  return out;
}

}  // namespace gpusched::placement
