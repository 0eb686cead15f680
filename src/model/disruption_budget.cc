// File: disruption_budget.cc
//
// Budget coverage under the two readings that differ (kube-scheduler's preemption: labelled pods
// only, an empty selector selects none; the Eviction API: only a missing selector selects none),
// and the allowance left as victims are counted.
#include "gpusched/model/disruption_budget.h"

#include <algorithm>

namespace gpusched {

bool Covers(const DisruptionBudget& b, const PodLabels& labels, BudgetReading reading) {
  if (b.namespace_name != labels.namespace_name) return false;
  // kube-scheduler's filterPodsWithPDBViolation looks at budgets only for pods with labels.
  if (reading == BudgetReading::kPreemption && labels.labels.empty()) return false;
  bool selects_none = reading == BudgetReading::kPreemption ? b.selector.empty() : !b.selector_set;
  return !selects_none && b.selector.Matches(labels.labels);
}

DisruptionCounter::DisruptionCounter(std::shared_ptr<const std::vector<DisruptionBudget>> budgets, BudgetReading reading)
    : budgets_(std::move(budgets)), reading_(reading) {
  if (budgets_ == nullptr) return;
  for (const DisruptionBudget& b : *budgets_) allowed_.push_back(b.disruptions_allowed);
}

bool DisruptionCounter::Evict(const std::string& name, const PodLabels* labels) {
  if (budgets_ == nullptr || labels == nullptr) return false;
  bool violates = false;
  for (size_t i = 0; i < budgets_->size(); ++i) {
    const DisruptionBudget& b = (*budgets_)[i];
    if (!gpusched::Covers(b, *labels, reading_)) continue;
    if (b.disrupted_pods.contains(name)) continue;  // its disruption is already counted
    if (--allowed_[i] < 0) violates = true;
  }
  return violates;
}

bool DisruptionCounter::Covers(const std::string& name, const PodLabels* labels) const {
  if (budgets_ == nullptr || labels == nullptr) return false;
  return std::any_of(budgets_->begin(), budgets_->end(), [&](const DisruptionBudget& b) {
    return gpusched::Covers(b, *labels, reading_) && !b.disrupted_pods.contains(name);
  });
}

size_t DisruptionCounter::Covering(const PodLabels* labels) const {
  if (budgets_ == nullptr || labels == nullptr) return 0;
  return static_cast<size_t>(
      std::count_if(budgets_->begin(), budgets_->end(), [&](const DisruptionBudget& b) { return gpusched::Covers(b, *labels, reading_); }));
}

}  // namespace gpusched
