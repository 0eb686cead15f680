// File: dra_defrag.h
//
// Defragmentation for a pod whose GPUs come from ResourceClaims (nvidia-dra nodes): the DRA side
// of defrag_planner.h's MakeRoom, with the same rules and the same plan.
//
// On every ready nvidia-dra node the pods that must leave are chosen as preempt chooses them for
// a claim pod (dra_victims.h), every priority a candidate. A plan for that node holds when the
// pending pod's claims get devices there with those pods' claims deallocated (the resourceclaim
// controller deletes a claim generated for the pod along with it), and
// each moved pod's replacement then gets its claims allocated on another ready nvidia-dra node,
// the devices the earlier moves and the pending pod took counted as held. A replacement asks what
// its pod's claims ask (its claims are made again from the same templates); it lands on the
// node the planner ranks best for it. Nodes are tried by fewest moves, then fewer moves that use
// a PodDisruptionBudget's allowance, then lower top priority, then name.
//
// Never moved: a pod move_rules.h never moves, a pod whose eviction would violate a
// PodDisruptionBudget (counted over the plan, as the Eviction API counts them), and a pod holding
// a claim that was not generated for it from a template or that another pod shares. A named
// claim outlives its pod: it stays allocated until the pod object is gone, so the replacement,
// which names the same claim, would be sent back to the same node. Moves land, and the pending
// pod stays, only where move_rules.h's LandingProblem allows.
//
// Pure: the plan depends only on the arguments.
#pragma once

#include <string>

#include "gpusched/dra/cel.h"
#include "gpusched/dra/cluster_state.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/defrag_planner.h"
#include "gpusched/placement/dra_planner.h"

namespace gpusched::placement {

// What a DRA plan reads besides the nodes: the cluster's claims, slices and classes, the compiled
// selectors and the DRA options. All must outlive the call.
struct DraDefragInput {
  DefragInput cluster;
  const dra::ClusterState* state = nullptr;
  dra::cel::ProgramCache* programs = nullptr;
  DraOptions dra;
  // The pending pod's special claim (KEP 5004, dra/extended_resources.h) when its extended
  // resources are what it asks of DRA: then only the nodes where DRA serves them are weighed.
  const dra::ResourceClaim* special = nullptr;
};

// The plan that makes room for `pod`'s claims with the fewest moves, at most options.max_moves.
// The plan's placement and each move's are of the claims kind (ClaimsKind()) with the devices
// ("driver/pool/device") their claims get. REQUIRES: the pod has ResourceClaims, or
// input.special is its special claim.
DefragPlan MakeRoomForClaims(const Pod& pod, const DraDefragInput& input, const DefragOptions& options);

}  // namespace gpusched::placement
