// File: labels.h
//
// Kubernetes labels and metav1.LabelSelector, as PodDisruptionBudgets, pod affinity terms and
// topology spread constraints select pods by them.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gpusched {

using Labels = std::map<std::string, std::string, std::less<>>;

// metav1.LabelSelector: every matchLabels entry and every expression must hold.
struct LabelSelector {
  struct Requirement {
    std::string key;
    std::string op;  // In, NotIn, Exists, DoesNotExist
    std::vector<std::string> values;
    auto operator<=>(const Requirement&) const = default;
  };
  Labels match_labels;
  std::vector<Requirement> expressions;

  bool empty() const { return match_labels.empty() && expressions.empty(); }
  bool Matches(const Labels& labels) const;
  auto operator<=>(const LabelSelector&) const = default;
};

}  // namespace gpusched
