// File: preemption.h
//
// The preempt verb's decision: for each candidate node kube-scheduler offers, the victims that
// must leave for the preemptor to fit there by gpusched's rules (placement/victims.h), or the node
// dropped when no eviction makes room.
//
// Per candidate:
// - Device-plugin pods (nvidia.com/gpu, mGPU): victims are chosen among the pods holding GPUs on
//   the node whose priority is below the preemptor's, that are not terminating, and that
//   kube-scheduler already knows (an allocation observed bound in the cluster, or booked by this
//   gpusched's bind, which kube-scheduler assumed first). Never a hold for a nominated pod, never a
//   booking of another replica: kube-scheduler resolves every UID answered against its own cache
//   and fails the whole preemption on one it cannot find.
// - kube-scheduler's own victims that hold no GPU on the node (chosen for CPU, memory or pod count)
//   stay in the answer, so that its own checks still pass on the node; those that hold GPUs there
//   and that gpusched did not choose are dropped (they free no GPU the pod can use).
// - A node where the pod fits without evicting anything is answered with kube-scheduler's victims
//   when it offered some, and dropped when it offered none (a placeholder candidate: an answer
//   with no victims is an error to kube-scheduler).
// - Pods whose GPUs come from ResourceClaims: kube-scheduler's victims pass through unchanged
//   (DRA victim choice is not gpusched's yet); placeholders are dropped.
// Victims are listed by decreasing priority, then UID; a victim whose priority is not known
// (a pod gpusched does not record) comes last, in kube-scheduler's order.
//
// Pure: the answer depends only on the arguments.
#pragma once

#include <vector>

#include "gpusched/extender/preemption_wire.h"
#include "gpusched/inventory/snapshot.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::extender {

// Returns the nodes kept, with their victims. `request` is AnalyzePod(args.pod).
std::vector<MetaVictims> DecidePreemption(const PreemptionArgs& args, const placement::PodRequest& request,
                                          const inventory::InventorySnapshot& snapshot,
                                          const placement::PlacementOptions& options);

}  // namespace gpusched::extender
