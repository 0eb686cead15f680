// File: dra_victims.h
//
// Which pods must leave a node for a pod with ResourceClaims to get its devices there: the DRA
// side of victims.h, behind the preempt verb and explain for claim pods.
//
// Evicting a pod frees the devices of each allocated claim reserved for it and for no pod that
// stays: the resourceclaim controller deletes a claim generated for the pod along with it and
// deallocates a claim that nothing reserves any more; a claim shared with a pod that stays keeps
// its devices. Candidates are the pods bound to the node that reserve a claim holding devices the
// node can use (its pools and pools pinned to no node), of lower priority, not terminating and
// allowed by the rules; the choice is victims.h's (all candidates gone must make room, then each
// is given back in the same order if the pod still fits). Each what-if is judged by the planner
// on a view of the node with the freed claims' devices free (what_if.h): devices, counters,
// constraints and the node's mode decide exactly as in filter.
//
// kube-scheduler cannot do this itself: its DynamicResources plugin has no PreFilterExtensions
// (no RemovePod; pkg/scheduler/framework/plugins/dynamicresources), so in its own what-if a
// victim's devices stay held and a pod short of devices never preempts. Without that plugin (owner
// mode, DRA placed by gpusched) the candidates reach the preempt verb, and this choice decides.
//
// Pure: the result depends only on the arguments.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "gpusched/dra/cluster_state.h"
#include "gpusched/placement/dra_planner.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/victims.h"

namespace gpusched::placement {

// The allocated claims holding devices a node can use (its pools and pools pinned to no node),
// and the pods bound to the node that reserve them: what the departure of some of those pods
// frees. REQUIRES: `state` and `node` outlive it.
class NodeReservations {
 public:
  NodeReservations(const dra::ClusterState& state, const NodeState& node);

  // The pods on the node reserving those claims, by UID: their allocations, or made from the
  // node's pod list (a pod holding no GPU) with UID, namespace, name, priority and terminating.
  const std::vector<AllocationPtr>& pods() const { return pods_; }

  // The devices those claims hold once the pods `gone` (UIDs) have left: all but those of claims
  // reserved by gone pods only (a claim reserved by nothing stays, as it is now). Right for the
  // devices the node can use; others are not listed.
  dra::AllocatedDevices HeldWithout(const std::set<std::string, std::less<>>& gone) const;

 private:
  std::vector<const dra::ResourceClaim*> claims_;
  std::vector<AllocationPtr> pods_;
};

// Chooses the pods to evict from `node` so that the planner's pod gets its devices there.
// `state` is the planner's. A victim gpusched records only through the node's pod list (a pod
// holding no GPU) comes as an Allocation with its UID, namespace, name and priority.
VictimChoice ChooseDraVictims(const DraPlanner& planner, const dra::ClusterState& state, const NodeState& node,
                              const VictimRules& rules);

}  // namespace gpusched::placement
