// File: defrag_planner.h
//
// Defragmentation: a plan of pod moves (evict a pod from its node, let its replacement land on
// another) that makes room for a pending pod, or lowers the cluster's fragmentation to a target.
// Nothing is moved here: the plan is a dry run that `gpusched defrag` prints and
// `POST /debug/defrag` answers.
//
// Making room (MakeRoom): on every node the pod's victims are chosen as preempt chooses them
// (victims.h), with every pod of any priority a candidate (a move is not a preemption: the pod
// runs again elsewhere), then each victim must land on another node under the planner's own rules
// (Planner::Evaluate on the cluster as the earlier moves left it, the pending pod already booked
// where it goes). Nodes are tried by fewest moves, then least disruption: fewer moves that use a
// PodDisruptionBudget's allowance, then lower top priority, then fewer moves of one workload
// (pods sharing namespace and labels), then name. The first node whose victims all land wins;
// each victim lands on the fullest node that takes it (the move keeps other GPUs whole).
//
// Lowering fragmentation (Consolidate): while the cluster's FGD fragmentation (the share of GPU
// compute that the workload cannot use, fragmentation.h) is above the target, the single move
// that lowers it most is taken, from the most fragmented nodes to any node that takes the pod.
//
// Never moved: a pod move_rules.h never moves (terminating, unknown to kube-scheduler, no
// controller or one that recreates it on its node, pod relations gpusched cannot judge, covered
// by more than one PodDisruptionBudget), a pod whose eviction would violate a
// PodDisruptionBudget (counted over the whole plan, as the Eviction API counts them), a DRA
// allocation (dra_defrag.h plans those pods), a pod already moved. Never used: a node that is not
// ready (switching, invalid, inconsistent) or of another mode. Holds stay held; the pending pod
// sees each node as filter does (what_if.h): its own hold, one kept for its controller and holds
// of lower priority are room for it.
// Every move lands, and the pending pod stays, only where move_rules.h's LandingProblem allows
// (Ready, node selection, CPU, memory and other resources as the moves leave the nodes).
//
// Pure: the plan depends only on the arguments. Not thread-safe (one per request).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpusched/model/allocation.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/policy.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::placement {

struct DefragOptions {
  int max_moves = 8;
  PlacementOptions placement;
  // MakeRoom: how many candidate nodes (in order) may have their victims placed before giving up.
  size_t max_tries = 64;
  // Consolidate: the most fragmented nodes whose pods are tried at each step.
  size_t source_nodes = 16;
};

// One pod evicted from `from` and landing on `to` with `placement` there.
struct DefragMove {
  std::string pod;  // namespace/name
  std::string uid;
  int32_t priority = 0;
  std::string from;
  std::string to;
  Placement placement;
  bool uses_budget = false;  // a PodDisruptionBudget covers the pod (its eviction uses its allowance)
  std::string controller_uid;  // what recreates the pod (PodLabels::controller_uid); "" if unknown
};

struct DefragPlan {
  bool fits = false;             // the pod fits after the moves (Consolidate: the target is reached)
  std::string node;              // MakeRoom: where the pod lands
  Placement placement;           // MakeRoom: what it gets there
  std::vector<DefragMove> moves; // in the order to make them
  double frag_before_pct = 0;    // the cluster's FGD fragmentation before and after the moves
  double frag_after_pct = 0;
  std::string reason;            // why no plan (or a partial one) was found; "" when fits
  // The pending pod's constraints gpusched did not judge (node_fit.h's UnjudgedBesidesHostPorts):
  // kube-scheduler decides those when the pod is scheduled, and may refuse it on the node the
  // plan makes room on, so applying such a plan needs the caller's consent; "" when none.
  std::string not_judged;
};

// The GPU nodes a plan works on, with what it weighs of their pods. `nodes` must outlive the
// planner; budgets may be null (no PodDisruptionBudget).
struct DefragInput {
  std::vector<const NodeState*> nodes;
  std::shared_ptr<const std::vector<DisruptionBudget>> budgets;
  const scoring::TargetWorkload* workload = nullptr;  // for fragmentation; null: measured as 0
  // Nodes where room may be made for the pending pods but where no moved pod of priority
  // `no_landing_priority` or lower lands: the domain kept for a waiting gang, whose nodes filter
  // refuses such a pod's replacement (one of higher priority it lets in). Null: none.
  std::shared_ptr<const std::set<std::string, std::less<>>> no_landing;
  int32_t no_landing_priority = 0;
  // True if a moved pod of `priority` may not land on `node` (no_landing).
  bool ClosedToMoves(const NodeState& node, int32_t priority) const {
    return no_landing != nullptr && priority <= no_landing_priority && no_landing->contains(node.node.name);
  }
};

// The cluster's FGD fragmentation in percent of the GPU compute of its ready nvidia and mgpu
// nodes, for `workload` (0 for an empty workload or no such node).
double FragmentedPct(const std::vector<const NodeState*>& nodes, const scoring::TargetWorkload& workload);

// The plan that makes room for `request` (AnalyzePod of the pending `pod`, whose node selection
// and other requests are judged too: move_rules.h) with the fewest moves, at most
// options.max_moves. REQUIRES: request.kind is kWholeGpu or kMgpu and request.valid().
DefragPlan MakeRoom(const PodRequest& request, const Pod& pod, const DefragInput& input, const DefragOptions& options);

// The moves, at most options.max_moves, that bring the fragmentation to `target_pct` or as near as
// single moves that each lower it can.
DefragPlan Consolidate(double target_pct, const DefragInput& input, const DefragOptions& options);

}  // namespace gpusched::placement
