// File: use_table.h
//
// Every bound, non-terminal pod's use of its node besides GPUs (NodeState::uses), by node, with
// the pods' namespaces and labels interned (one shared copy per distinct set), and the
// PodDisruptionBudgets as snapshots show them: what preemption and defrag weigh besides the
// ledger. A node's uses are changed in place and copied once for the node states built after a
// change, then shared until the next.
//
// Thread-compatible: one component of the inventory, guarded by its mutex.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/node_uses.h"
#include "gpusched/model/pod.h"

namespace gpusched::inventory {

class UseTable {
 public:
  // `scheduler`: the kube-scheduler profile gpusched serves; pods that name another get
  // PodUse::kOtherScheduler ("": none does).
  explicit UseTable(std::string scheduler = "") : scheduler_(std::move(scheduler)) {}

  // Records what `pod` asks of its node if it is bound and not finished, else drops it from its
  // node. Returns true if the node's uses changed.
  bool Track(const Pod& pod);
  // Drops pod `uid` from `node`. Returns true if it was there.
  bool Drop(std::string_view uid, std::string_view node);
  // Returns the uses of `node` as node states share them (copied after a change), or null.
  std::shared_ptr<const NodeUses> Shared(std::string_view node);
  // Returns the pods using `node`, or an empty list.
  const std::vector<PodUse>& PodsOn(std::string_view node) const;

  // Replaces the budgets with `budgets` (by "namespace/name"). Returns true if they changed.
  bool SetBudgets(std::map<std::string, DisruptionBudget> budgets);
  const std::map<std::string, DisruptionBudget>& budgets() const { return budgets_; }
  // The budgets as snapshots show them; null when there are none.
  const std::shared_ptr<const std::vector<DisruptionBudget>>& budget_list() const { return budget_list_; }

  // The number of distinct label sets kept (for tests of the interning).
  size_t label_sets() const { return label_sets_.size(); }

 private:
  struct Slot {
    NodeUses uses;
    std::shared_ptr<const NodeUses> shared;  // null after a change
  };
  // Orders shared label sets by value, and finds one by a PodLabels.
  struct LabelsByValue {
    using is_transparent = void;
    static const PodLabels& Of(const PodLabels& l) { return l; }
    static const PodLabels& Of(const std::shared_ptr<const PodLabels>& l) { return *l; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const { return Of(a) < Of(b); }
  };

  // The shared copy of `pod`'s namespace and labels; prunes unused sets as their number doubles.
  std::shared_ptr<const PodLabels> Intern(const Pod& pod);

  const std::string scheduler_;
  std::map<std::string, Slot, std::less<>> slots_;
  std::set<std::shared_ptr<const PodLabels>, LabelsByValue> label_sets_;
  size_t label_sets_pruned_at_ = 0;
  std::map<std::string, DisruptionBudget> budgets_;
  std::shared_ptr<const std::vector<DisruptionBudget>> budget_list_;
};

}  // namespace gpusched::inventory
