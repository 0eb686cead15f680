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
#include <set>
#include <string>
#include <vector>

namespace gpusched {

using Labels = std::map<std::string, std::string, std::less<>>;

// A pod's namespace, labels and controller, shared by the pods that have the same (a workload's
// replicas).
struct PodLabels {
  std::string namespace_name;
  Labels labels;
  std::string controller_uid;  // Pod::controller_uid: what recreates the pod, "" for nothing
  std::string controller_kind;  // Pod::controller_kind

  auto operator<=>(const PodLabels&) const = default;
};

// True for a pod whose replacement would come back to the same node: a DaemonSet's, or a static
// pod's mirror (owned by its Node). Moving it frees nothing.
inline bool RecreatedOnItsNode(const PodLabels& l) { return l.controller_kind == "DaemonSet" || l.controller_kind == "Node"; }

// metav1.LabelSelector: every matchLabels entry and every expression must hold.
struct LabelSelector {
  struct Requirement {
    std::string key;
    std::string op;  // In, NotIn, Exists, DoesNotExist
    std::vector<std::string> values;
    bool operator==(const Requirement&) const = default;
  };
  Labels match_labels;
  std::vector<Requirement> expressions;

  bool empty() const { return match_labels.empty() && expressions.empty(); }
  bool Matches(const Labels& labels) const;
  bool operator==(const LabelSelector&) const = default;
};

struct DisruptionBudget {
  std::string namespace_name;
  std::string name;
  LabelSelector selector;  // nil and empty alike: covers no pod (as preemption reads it)
  int32_t disruptions_allowed = 0;       // status.disruptionsAllowed
  std::set<std::string> disrupted_pods;  // status.disruptedPods: already counted, by pod name

  bool operator==(const DisruptionBudget&) const = default;
};

// Counts budget violations of evicting pods one after another, as kube-scheduler's
// filterPodsWithPDBViolation does: each covered pod (not already disrupted) uses one disruption
// of every budget of its namespace that covers it; a pod that takes a budget below zero violates.
class DisruptionCounter {
 public:
  explicit DisruptionCounter(std::shared_ptr<const std::vector<DisruptionBudget>> budgets);
  // Evicts the pod `name` with `labels` (null: no labels); returns true if that violates a budget.
  bool Evict(const std::string& name, const PodLabels* labels);
  // Returns true if some budget counts the eviction of that pod (it would use an allowance).
  bool Covers(const std::string& name, const PodLabels* labels) const;

 private:
  std::shared_ptr<const std::vector<DisruptionBudget>> budgets_;
  std::vector<int64_t> allowed_;  // left, aligned with *budgets_
};

}  // namespace gpusched
