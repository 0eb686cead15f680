// File: victims.cc
//
// The victim choice: the reprieve (budget violators given back first, then by priority and UID) and
// three ways to ask whether the pod still fits as candidates return: one-slice counting, a witness
// placement, or the planner at every step.
#include "gpusched/placement/victims.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <tuple>

#include "gpusched/placement/kinds/mgpu.h"
#include "gpusched/placement/what_if.h"

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
    totals_ = {usage->whole_used, usage->used_milli, usage->used_mib};
    AddPackedUse(node, i, usage, &slots_);
  }
  // The positions in usage->gpus of the slots the last Add changed (a GPU the pod uses twice
  // is listed twice).
  template <typename F>
  void ForEachTouched(F&& f) const {
    for (const auto& [position, slot] : slots_) f(position);
  }
  // Undoes the last Add. REQUIRES: `usage` is unchanged since.
  void Undo(NodeState* usage) const {
    for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) usage->gpus[it->first] = it->second;  // last change first
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

// Sets *out for `count` candidates, the i-th being at(i).
void SplitByBudget(size_t count, const VictimRules& rules, const std::function<const Allocation&(size_t)>& at, ReprieveOrder* out) {
  out->order.resize(count);
  out->violating = 0;
  for (size_t i = 0; i < count; ++i) out->order[i] = i;
  if (!rules.violates_pdb) return;
  // Stable: the violating ones first, each group in the order given.
  std::vector<char> violates(count);
  for (size_t i = 0; i < count; ++i) out->violating += violates[i] = rules.violates_pdb(at(i));
  std::stable_partition(out->order.begin(), out->order.end(), [&](size_t i) { return violates[i] != 0; });
}

// Offers each candidate back in `order`: `give_back(i)` returns true if the pod still fits with
// candidate i back (it stays back), false if not (undone: a victim). Sets `victims` to the
// victims' positions, ascending.
template <typename GiveBack>
void GiveBackInOrder(const ReprieveOrder& order, GiveBack&& give_back, std::vector<size_t>* victims, VictimChoice* out) {
  victims->clear();
  for (size_t k = 0; k < order.order.size(); ++k) {
    size_t i = order.order[k];
    if (give_back(i)) continue;
    victims->push_back(i);
    if (k < order.violating) ++out->pdb_violations;
  }
  std::sort(victims->begin(), victims->end());  // positions follow the order of importance
}

// True if node.allocations[i] uses none of `gpus`.
bool Avoids(const NodeState& node, size_t i, const std::vector<int>& gpus) {
  const PackedAllocation& p = node.packed[i];
  for (uint32_t k = p.first_use; k < p.first_use + p.uses; ++k) {
    if (std::find(gpus.begin(), gpus.end(), node.packed_uses[k].index) != gpus.end()) return false;
  }
  return true;
}

// True if the rules keep the pod of node.allocations[i] whatever it holds.
bool Kept(const NodeState& node, size_t i, const VictimRules& rules) {
  return rules.keeps && rules.keeps(node.allocations[i].pod_uid);
}

// True if the pod of node.allocations[i] leaves whatever the choice (VictimRules::leaving).
bool Leaving(const NodeState& node, size_t i, const VictimRules& rules) {
  return rules.leaving && rules.leaving(node.allocations[i].pod_uid);
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
  ReprieveOrder order;
  SplitByBudget(candidates.size(), rules, [&](size_t i) -> const Allocation& { return **candidates[i]; }, &order);
  std::vector<size_t> victims;
  GiveBackInOrder(order, [&](size_t i) { return give_back(**candidates[i]); }, &victims, out);
  for (size_t i : victims) out->victims.push_back(candidates[i]->get());
}

std::string NoRoomReason(size_t candidates) {
  return candidates == 0 ? "no pod of lower priority holds GPUs here"
                         : fmt::format("the pod does not fit even with all {} pods of lower priority evicted", candidates);
}

// The per-node search state: the node's use with only the pods that stay (every non-candidate,
// the holds that count, the candidates given back) and the reprieve's buffers.
struct VictimFinder::Search {
  NodeState kept;
  std::vector<uint32_t> candidates;  // positions into node.allocations, in the order of importance
  ReprieveOrder order;
  UndoableAdd add;
  Saved start;                  // kept before a shortcut, to start again from
  std::vector<size_t> victims;  // positions into candidates
  std::vector<int> witness;
  std::vector<char> takes;      // by position in kept.gpus: that GPU takes the slice
};

void PrefetchForVictims(const NodeState& node) {
  __builtin_prefetch(node.packed.data());
  __builtin_prefetch(node.by_importance.data());
  __builtin_prefetch(node.packed_uses.data());
  __builtin_prefetch(node.gpus.data());
  if (node.uses != nullptr) node.uses->Prefetch();
}

void VictimFinder::ListCandidates(const NodeState& node, const VictimRules& rules) {
  s_->candidates.clear();
  for (uint32_t i : node.by_importance) {
    if (IsCandidate(node.packed[i], rules) && !Kept(node, i, rules) && !Leaving(node, i, rules)) s_->candidates.push_back(i);
  }
}

bool VictimFinder::GiveBackWithWitness(const PodRequest& request, const NodeState& node, VictimChoice* out) {
  if (!planner_.Witness(request, s_->kept, &s_->witness)) return false;
  GiveBackInOrder(s_->order, [&](size_t c) {
    size_t i = s_->candidates[c];
    if (Avoids(node, i, s_->witness)) {
      AddPackedUse(node, i, &s_->kept);
      return true;
    }
    s_->add.Add(node, i, &s_->kept);
    if (planner_.Witness(request, s_->kept, &s_->witness)) return true;
    s_->add.Undo(&s_->kept);
    return false;
  }, &s_->victims, out);
  return planner_.Fits(request, s_->kept);
}

bool VictimFinder::GiveBackOneSlice(const PodRequest& request, const NodeState& node, VictimChoice* out) {
  s_->takes.assign(s_->kept.gpus.size(), 0);
  size_t taking = 0;
  for (size_t p = 0; p < s_->takes.size(); ++p) taking += s_->takes[p] = GpuTakesSlice(request, s_->kept.gpus[p]);
  GiveBackInOrder(s_->order, [&](size_t c) {
    s_->add.Add(node, s_->candidates[c], &s_->kept);
    size_t lost = 0;
    s_->add.ForEachTouched([&](size_t p) {
      if (s_->takes[p] && !GpuTakesSlice(request, s_->kept.gpus[p])) {
        s_->takes[p] = false;  // set back by the undo below if the candidate stays a victim
        ++lost;
      }
    });
    if (lost < taking && TotalsFit(request, s_->kept)) {
      taking -= lost;
      return true;
    }
    s_->add.Undo(&s_->kept);
    s_->add.ForEachTouched([&](size_t p) { s_->takes[p] = GpuTakesSlice(request, s_->kept.gpus[p]); });
    return false;
  }, &s_->victims, out);
  return planner_.Fits(request, s_->kept);
}

void VictimFinder::GiveBackAskingEachTime(const PodRequest& request, const NodeState& node, VictimChoice* out) {
  GiveBackInOrder(s_->order, [&](size_t c) {
    s_->add.Add(node, s_->candidates[c], &s_->kept);
    if (planner_.Fits(request, s_->kept)) return true;
    s_->add.Undo(&s_->kept);
    return false;
  }, &s_->victims, out);
}

VictimFinder::VictimFinder(PlacementOptions options) : planner_(options), s_(std::make_unique<Search>()) {}

VictimFinder::~VictimFinder() = default;

VictimChoice VictimFinder::Choose(const PodRequest& request, const NodeState& node, const VictimRules& rules) {
  VictimChoice out;
  if (!node.ready()) {
    out.reason = fmt::format("node is {}: {}", ConditionName(node.condition), node.condition_reason);
    return out;
  }
  // The node's use with only the pods that stay: every non-candidate, and those given back.
  ResetUsage(node, &s_->kept);
  for (const Allocation& h : node.holds) {
    if (HoldBinds(h, rules.viewer)) AddUse(h, &s_->kept);  // never freed
  }
  ListCandidates(node, rules);
  for (size_t i = 0; i < node.packed.size(); ++i) {
    if (Leaving(node, i, rules) && IsCandidate(node.packed[i], rules)) continue;
    if (!IsCandidate(node.packed[i], rules) || Kept(node, i, rules)) AddPackedUse(node, i, &s_->kept);
  }
  if (!planner_.Fits(request, s_->kept)) {
    out.reason = NoRoomReason(s_->candidates.size());
    return out;
  }
  out.helps = true;
  const std::vector<AllocationPtr>& all = node.allocations.shared();
  SplitByBudget(s_->candidates.size(), rules, [&](size_t c) -> const Allocation& { return *all[s_->candidates[c]]; }, &s_->order);
  bool done = false;
  if (HasPayload(request.kind, Payload::kShares)) {
    s_->start.Save(s_->kept);
    done = IsOneSlice(request) ? GiveBackOneSlice(request, node, &out) : GiveBackWithWitness(request, node, &out);
    if (!done) {  // the planner did not confirm the shortcut: ask it at every step
      s_->start.Restore(&s_->kept);
      out.pdb_violations = 0;
    }
  }
  if (!done) GiveBackAskingEachTime(request, node, &out);
  out.victims.reserve(s_->victims.size());
  for (size_t c : s_->victims) out.victims.push_back(all[s_->candidates[c]].get());
  return out;
}

}  // namespace gpusched::placement
