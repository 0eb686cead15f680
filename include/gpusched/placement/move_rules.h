// File: move_rules.h
//
// Which running pods a defrag plan may move, and where a moved pod or the pending pod may land:
// the rules every defrag planner shares (defrag_planner.h for device-plugin GPUs, dra_defrag.h
// for claims), so that a plan is valid before its first eviction.
//
// A pod never moves when (WhyNotMovable):
// - it is terminating, its allocation names a problem, or kube-scheduler does not know it (a
//   booking of another replica, a hold);
// - nothing would recreate it: no controller (ownerReferences with controller: true), or one
//   that recreates it on the same node (a DaemonSet, a static pod's mirror);
// - it is a member of a pod group (a gang, pod_group.h): a group moves whole or not at all (a
//   gang is useless in part; a PodGroup's disruptionMode may say so), and no planner moves a
//   group yet;
// - it has required pod affinity or anti-affinity, DoNotSchedule topology spread constraints or
//   volumes a volume filter reads (node_fit.h's UnjudgedBesidesHostPorts): gpusched cannot judge
//   where its replacement may go (host ports it judges, below);
// - more than one PodDisruptionBudget covers it, as the Eviction API counts them (policy/v1: a
//   budget of its namespace whose selector matches its labels; an empty selector matches every
//   pod, a missing one none): the API server refuses to evict such a pod.
// Budget allowances over the whole plan are counted by each planner with
// DisruptionCounter(BudgetReading::kEviction).
//
// A pod lands on a node only where (LandingProblem) the node reports Ready (a node that reports
// no Ready condition at all is taken as ready; gpusched's own policy, stricter than
// kube-scheduler, which has no filter on Ready: its taints carry it), its node selection holds
// (node_fit.h), and its CPU, memory, pod count and other resources fit beside the pods there as
// the plan's moves leave them (resource_fit.h, with the pods nominated there of equal or higher
// priority), and none of those pods uses a host port it asks (kube-scheduler's NodePorts,
// node_fit.h's HostPortProblem: a pod evicted for a pending pod that kube-scheduler then refuses
// for a port would be evicted for nothing).
//
// Pure; MovedUses is a value.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/allocation.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/node_state.h"

namespace gpusched::placement {

// The pods a plan found it may never move, by reason, for the plan's reason.
class RefusedPods {
 public:
  void Add(const std::string& reason, const std::string& uid) { by_reason_[reason].insert(uid); }
  // "; not moved: 2 pods (no controller would recreate it), 1 pod (terminating)", or "".
  std::string Text() const;

 private:
  std::map<std::string, std::set<std::string>> by_reason_;
};

// Why the pod of `a` on `node` may never move (see above), or "" if it may. `budgets` may be null.
std::string WhyNotMovable(const NodeState& node, const Allocation& a, const std::vector<DisruptionBudget>* budgets);

// What a plan's moves do to nodes' resources besides GPUs: the pods that left each node and the
// pods that arrived, by node name.
class MovedUses {
 public:
  // `use` (null: not known, nothing to count) leaves node `from` and arrives on node `to`.
  void Move(const std::string& from, const std::string& to, const PodUse* use);

  // Why a pod (`labels`: its namespace, labels and constraints; null: none known) asking
  // `requests` besides GPUs, of UID `uid` and `priority`, may not land on `node` as the moves
  // leave it (see above), or "". `node` is the inventory's state (its uses and nominated pods).
  std::string LandingProblem(const NodeState& node, const PodLabels* labels, const ResourceList& requests, std::string_view uid,
                             int32_t priority) const;

 private:
  // The first pod on `node` as the moves leave it (its uses, arrivals, and the pods nominated
  // there of `priority` or higher), but pod `uid`, that uses one of `ports`: why, or "".
  std::string PortsProblem(const NodeState& node, const std::vector<HostPort>& ports, std::string_view uid,
                           int32_t priority) const;

  std::map<std::string, std::vector<const PodUse*>, std::less<>> left_;
  std::map<std::string, std::vector<const PodUse*>, std::less<>> arrived_;
};

}  // namespace gpusched::placement
