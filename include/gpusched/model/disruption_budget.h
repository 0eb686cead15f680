// File: disruption_budget.h
//
// A PodDisruptionBudget (policy/v1) reduced to what preemption weighs: which pods of its namespace
// it covers and how many of them may be disrupted now. Evicting a covered pod beyond that
// allowance violates the budget; kube-scheduler prefers candidates with fewer violations.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpusched/model/labels.h"
#include "gpusched/model/pod_constraints.h"
#include "gpusched/model/pod_group.h"

namespace gpusched {

// A pod's namespace, labels, controller and scheduling constraints, shared by the pods that have
// the same (a workload's replicas).
struct PodLabels {
  std::string namespace_name;
  Labels labels;
  std::string controller_uid;  // Pod::controller_uid: what recreates the pod, "" for nothing
  std::string controller_kind;  // Pod::controller_kind
  PodConstraints constraints;   // Pod::constraints
  std::optional<PodGroupRef> group;  // Pod::group: the pod group it is a member of

  auto operator<=>(const PodLabels&) const = default;
};

// True for a pod whose replacement would come back to the same node: a DaemonSet's, or a static
// pod's mirror (owned by its Node). Moving it frees nothing.
inline bool RecreatedOnItsNode(const PodLabels& l) { return l.controller_kind == "DaemonSet" || l.controller_kind == "Node"; }

struct DisruptionBudget {
  std::string namespace_name;
  std::string name;
  LabelSelector selector;
  bool selector_set = false;  // spec.selector is present (not nil), if maybe empty
  int32_t disruptions_allowed = 0;       // status.disruptionsAllowed
  std::set<std::string> disrupted_pods;  // status.disruptedPods: already counted, by pod name

  bool operator==(const DisruptionBudget&) const = default;
};

// Which pods a budget of their namespace covers. kube-scheduler's preemption
// (filterPodsWithPDBViolation) skips a budget whose selector is nil or empty, and pods without
// labels; the Eviction API (policy/v1) covers no pod with a nil selector and every pod, labelled
// or not, with an empty one.
enum class BudgetReading { kPreemption, kEviction };

// True if `b` covers a pod with `labels` (its namespace, its labels) as `reading` reads it.
bool Covers(const DisruptionBudget& b, const PodLabels& labels, BudgetReading reading);

// Counts budget violations of evicting pods one after another, as kube-scheduler's
// filterPodsWithPDBViolation does: each covered pod (not already disrupted) uses one disruption
// of every budget of its namespace that covers it; a pod that takes a budget below zero violates.
class DisruptionCounter {
 public:
  explicit DisruptionCounter(std::shared_ptr<const std::vector<DisruptionBudget>> budgets,
                             BudgetReading reading = BudgetReading::kPreemption);
  // Evicts the pod `name` with `labels` (null: no labels); returns true if that violates a budget.
  bool Evict(const std::string& name, const PodLabels* labels);
  // Returns true if some budget counts the eviction of that pod (it would use an allowance).
  bool Covers(const std::string& name, const PodLabels* labels) const;
  // Returns how many budgets cover that pod (the Eviction API refuses a pod covered by two).
  size_t Covering(const PodLabels* labels) const;

 private:
  std::shared_ptr<const std::vector<DisruptionBudget>> budgets_;
  BudgetReading reading_;
  std::vector<int64_t> allowed_;  // left, aligned with *budgets_
};

}  // namespace gpusched
