// File: victim_chooser.h
//
// Which pods must leave a node for a pod to fit there, chosen by the pod's judge
// (placement/pod_judge.h: by the GPUs or devices it would get there) under preempt's victim rules
// (lower priority, pods kube-scheduler knows, budgets counted). Preempt, explain and the filter's
// Event all choose victims here.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/placement/pod_judge.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/resource_fit.h"
#include "gpusched/placement/victims.h"

namespace gpusched::extender {

// The victim rules preempt applies for `pod` (victims.h): lower priority only, pods
// kube-scheduler knows only (never a hold or another replica's booking), and budget violations
// counted through `counter` (null: none) with the labels `fit` knows.
placement::VictimRules PreemptionRules(const Pod& pod, const placement::ResourceFit& fit, DisruptionCounter* counter);

// Returns the PodDisruptionBudget violations of evicting the pods `uids` in this order, as
// kube-scheduler counts them; their names and labels from `fit`'s node (pods it does not see there
// violate nothing).
int64_t CountViolations(std::span<const std::string_view> uids, const placement::ResourceFit& fit,
                        const std::shared_ptr<const std::vector<DisruptionBudget>>& budgets);

// The victim choice for one pod, node by node, by its judge. Not thread-safe: one per request
// (or thread).
class VictimChooser {
 public:
  // REQUIRES: pod, request and what `inputs` points to outlive the chooser; `request` is
  // AnalyzePod(pod).
  VictimChooser(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& inputs);
  // OK, or why the pod cannot be placed anywhere yet (its claims do not exist): as
  // PodEvaluation::Problem.
  Status Problem() const { return judge_->Problem(); }
  placement::VictimChoice Choose(const placement::NodeState& node, const placement::VictimRules& rules) {
    return judge_->ChooseVictims(node, rules);
  }
  // The mode of the GPUs the pod gets on `node`: nvidia-dra for claims and for extended resources
  // DRA serves there, else the device plugin's (ModeServing of its request).
  NodeMode ModeOn(const placement::NodeState& node) { return judge_->ModeOn(node); }

 private:
  std::unique_ptr<placement::PodJudge> judge_;
};

}  // namespace gpusched::extender
