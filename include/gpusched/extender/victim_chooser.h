// File: victim_chooser.h
//
// Which pods must leave a node for a pod to fit there, by the kind of devices it gets on that
// node: its GPUs (placement/victims.h), the devices its claims would get (placement/
// dra_victims.h), or its extended resources where DRA serves them (extended_planners.h); under
// preempt's victim rules (lower priority, pods kube-scheduler knows, budgets counted). Preempt,
// explain and the filter's Event all choose victims here.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/extender/extended_planners.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/placement/dra_victims.h"
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

// The victim choice for one pod, node by node: by the GPUs it would get (victims.h), or for
// a pod with claims and no device-plugin GPUs, by the devices its claims would get
// (dra_victims.h), as for a pod's extended resources on nodes where DRA serves them
// (extended_planners.h). Not thread-safe: one per request (or thread).
class VictimChooser {
 public:
  // REQUIRES: pod, request and inputs outlive the chooser; `request` is AnalyzePod(pod).
  VictimChooser(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& inputs);
  // OK, or why the pod cannot be placed anywhere yet (its claims do not exist): as
  // PodEvaluation::Problem.
  Status Problem() const { return dra_ ? ClaimsProblem(dra_->problem()) : OkStatus(); }
  placement::VictimChoice Choose(const placement::NodeState& node, const placement::VictimRules& rules);
  // The mode of the GPUs the pod gets on `node`: nvidia-dra for claims and for extended resources
  // DRA serves there, else the device plugin's (ModeServing of its request).
  NodeMode ModeOn(const placement::NodeState& node);

 private:
  const placement::PodRequest& request_;
  const EvaluationInputs& in_;
  placement::VictimFinder finder_;
  std::optional<placement::DraPlanner> dra_;
  ExtendedPlanners extended_;  // nodes where DRA serves the pod's extended resources
};

}  // namespace gpusched::extender
