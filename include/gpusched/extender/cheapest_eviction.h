// File: cheapest_eviction.h
//
// What evicting would make room for a pod: per node, the pods preempt would choose as victims
// (victim_chooser.h) with the budget violations they cost, and the cheapest such node in
// kube-scheduler's order of preemption candidates. Explain shows it per node; filter words its
// FailedGPUPlacement Event with it. Nothing is evicted here.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/extender/victim_chooser.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::extender {

struct Eviction {
  std::string pod;  // namespace/name
  std::string uid;
  int32_t priority = 0;
};

// The pods whose eviction makes room on one node, and the PodDisruptionBudget violations it costs.
struct Evictions {
  std::vector<Eviction> pods;
  int64_t pdb_violations = 0;
};

// The evictions on `node` that make room for `pod`, as preempt would choose them under `budgets`
// (null: none); nullopt when none does (or none is needed).
std::optional<Evictions> EvictionsOn(const Pod& pod, const placement::NodeState& node,
                                     const std::shared_ptr<const std::vector<DisruptionBudget>>& budgets,
                                     VictimChooser& chooser);

// The evictions on `node` that end a shortage of what `pod` asks besides GPUs (`requests`,
// EffectiveRequests; NodeResourcesFit), for a node whose GPUs already have room: as kube-scheduler's
// SelectVictimsOnNode, every pod of lower priority that is not terminating is removed, and if the
// pod then fits, they are put back highest priority first while it still does. Unlike upstream,
// pods whose eviction would violate a PodDisruptionBudget are not put back first; the violations
// are counted. Nullopt when removing them all does not make room.
std::optional<Evictions> ResourceEvictionsOn(const Pod& pod, const ResourceList& requests, const placement::NodeState& node,
                                             const std::shared_ptr<const std::vector<DisruptionBudget>>& budgets);

// kube-scheduler's order of preemption candidates: fewest budget violations, lowest highest
// priority, least total priority, fewest victims; then the node name. True if `a` on `a_node`
// comes before `b` on `b_node`.
bool Cheaper(const Evictions& a, std::string_view a_node, const Evictions& b, std::string_view b_node);

// The cheapest eviction among `nodes` that makes room for `pod` (GPUs or claimed devices; in
// kube-scheduler's order of preemption candidates), in words: "evicting 1 pod on n3 (ml/z,
// priority 0) makes room"; "" if there is none. For the FailedGPUPlacement Event. Of `inputs`,
// the snapshot (its budgets and DRA objects), options and programs are read.
std::string CheapestFix(const Pod& pod, const placement::PodRequest& request, std::span<const placement::NodeState* const> nodes,
                        const EvaluationInputs& inputs);

}  // namespace gpusched::extender
