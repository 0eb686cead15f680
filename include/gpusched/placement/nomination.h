// File: nomination.h
//
// GPUs (and DRA devices) held for preemptors. After a preemption, kube-scheduler nominates the preemptor to the
// node (status.nominatedNodeName) and waits for the victims to leave; but its nomination is per
// node, not per GPU, and kube-scheduler does not tell an extender about it. gpusched learns it from
// the pod and holds, on the nominated node, the GPUs the preemptor will get once the pods being
// deleted there are gone: another pod arriving in between is refused them.
//
// Holds are planned in decreasing priority (then UID), each on the node's use without its
// terminating pods and with the holds planned before it; a pod that does not fit even so holds
// nothing. As kube-scheduler counts nominated pods only against pods of equal or lower priority,
// a hold binds only those: the holder itself, and pods of higher priority, are judged against
// the node without it.
//
// A pod with ResourceClaims holds the devices its claims would get there (the DRA planner's
// ranked choice, as owner mode's bind writes it), freed of the claims that only pods being
// deleted reserve (dra_victims.h); the DRA planner takes them for the pods the hold binds. So
// does a pod whose extended resources DRA serves on an nvidia-dra node (KEP 5004): the devices
// its special claim would get there (dra/extended_resources.h).
//
// Pure: results depend only on the arguments, and for NominationHolds on the DRA options it was
// made with (it keeps buffers and compiled selectors, no state).
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "gpusched/dra/cel.h"
#include "gpusched/dra/cluster_state.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/dra_planner.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/what_if.h"

namespace gpusched::placement {

// Adds to `state` a hold for each of `nominated` that fits (see above).
// REQUIRES: `state` was built by BuildNodeState* and has no holds yet.
void HoldNominated(Planner& planner, std::span<const Pod* const> nominated, NodeState* state);

// Adds to `state` a hold for each of `nominated` that asks for devices through claims alone, or
// through a special claim on this node, and fits (see above), after the holds `state` has. `dra`, `programs` and `options`: the DRA
// planner's inputs.
void HoldNominatedClaims(const dra::ClusterState& dra, dra::cel::ProgramCache* programs, const DraOptions& options,
                         std::span<const Pod* const> nominated, NodeState* state);

// The holds of the pods nominated to a node, planned as above (HoldNominated, then
// HoldNominatedClaims), with the buffers and compiled selectors kept from one node to the next.
// The inventory owns one and asks it at each rebuild of a node: the judgement is this one's, the
// inventory books what it returns. Not thread-safe: its owner serializes calls.
class NominationHolds {
 public:
  explicit NominationHolds(DraOptions dra) : dra_(std::move(dra)) {}

  // Adds to `state` the holds of `nominated` against the DRA objects `dra`.
  // REQUIRES: as HoldNominated.
  void Add(const dra::ClusterState& dra, std::span<const Pod* const> nominated, NodeState* state);

 private:
  Planner planner_{PlacementOptions{}};
  dra::cel::ProgramCache programs_;
  const DraOptions dra_;
};

// Returns the hold of pod `uid` on `state`, or nullptr.
const Allocation* FindHold(const NodeState& state, std::string_view uid);

}  // namespace gpusched::placement
