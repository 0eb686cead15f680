#include "gpusched/model/disruption_budget.h"

#include <algorithm>

namespace gpusched {

bool LabelSelector::Matches(const Labels& labels) const {
  for (const auto& [key, value] : match_labels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  for (const Requirement& r : expressions) {
    auto it = labels.find(r.key);
    bool in = it != labels.end() && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
    if (r.op == "In" && !in) return false;
    if (r.op == "NotIn" && in) return false;
    if (r.op == "Exists" && it == labels.end()) return false;
    if (r.op == "DoesNotExist" && it != labels.end()) return false;
  }
  return true;
}

DisruptionCounter::DisruptionCounter(std::shared_ptr<const std::vector<DisruptionBudget>> budgets)
    : budgets_(std::move(budgets)) {
  if (budgets_ == nullptr) return;
  for (const DisruptionBudget& b : *budgets_) allowed_.push_back(b.disruptions_allowed);
}

bool DisruptionCounter::Evict(const std::string& name, const PodLabels* labels) {
  if (budgets_ == nullptr || labels == nullptr) return false;
  bool violates = false;
  for (size_t i = 0; i < budgets_->size(); ++i) {
    const DisruptionBudget& b = (*budgets_)[i];
    if (b.namespace_name != labels->namespace_name || b.selector.empty() || !b.selector.Matches(labels->labels)) continue;
    if (b.disrupted_pods.contains(name)) continue;  // its disruption is already counted
    if (--allowed_[i] < 0) violates = true;
  }
  return violates;
}

bool DisruptionCounter::Covers(const std::string& name, const PodLabels* labels) const {
  if (budgets_ == nullptr || labels == nullptr) return false;
  return std::any_of(budgets_->begin(), budgets_->end(), [&](const DisruptionBudget& b) {
    return b.namespace_name == labels->namespace_name && !b.selector.empty() && b.selector.Matches(labels->labels) &&
           !b.disrupted_pods.contains(name);
  });
}

}  // namespace gpusched
