// File: allocation.h
//
// What a pod holds on a node: the ledger's unit. A Placement is the decision (which GPUs each
// container gets); an Allocation is a Placement booked for one pod UID on one node.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/model/node_mode.h"

namespace gpusched {

// The GPUs one mGPU container holds. A container on n cards holds milli_per_gpu and mib_per_gpu on
// each of them; a whole-card container holds its GPUs exclusively (all compute, all memory,
// whatever the card's size), with milli_per_gpu = 1000 and mib_per_gpu = 0.
struct ContainerAssignment {
  std::string container;
  std::vector<int> gpu_indices;  // distinct device indices, in the order written to the annotation
  int64_t milli_per_gpu = 0;     // compute on each GPU (1000 = whole GPU)
  int64_t mib_per_gpu = 0;       // memory on each GPU; 0 for exclusive cards
  bool exclusive = false;        // whole-card: no other container may share these GPUs
  // When the container runs, in Kubernetes' order: 0 for an app container, 1 + its index in
  // spec.initContainers for an init container. App containers and sidecars (init containers with
  // restartPolicy Always) run together for the pod's life; a regular init container runs before
  // them, beside the sidecars declared before it, so the pod holds on each GPU the most that any
  // of these phases uses there (pod_gpu_use.h).
  int init_position = 0;
  bool sidecar = false;

  // Returns true for a regular init container: one that has exited before the app containers start.
  bool transient() const { return init_position > 0 && !sidecar; }
  bool operator==(const ContainerAssignment&) const = default;
};

struct Placement {
  RequestKind kind = RequestKind::kNone;
  int64_t whole_gpus = 0;                      // kWholeGpu: count; the device plugin picks devices
  std::vector<ContainerAssignment> containers;  // kMgpu: one entry per mGPU container
  std::vector<std::string> devices;             // kDra: "driver/pool/device" held through claims

  // Returns true for a placement of no kind (kNone): the pod holds nothing gpusched books (a pod
  // bound without GPUs, or one whose claims kube-scheduler allocated).
  bool empty() const { return kind == RequestKind::kNone; }

  bool operator==(const Placement&) const = default;
};

// Where the ledger learned about an allocation.
enum class AllocationOrigin {
  kObserved,   // rebuilt from a pod bound in the cluster (annotations, requests)
  kCommitted,  // booked by gpusched's own bind and not yet seen bound in the cluster
  kBooked,     // listed in the node's bookings annotation by a gpusched replica (this one or
               // another) that is binding the pod, and not yet seen bound
  kHeld,       // held by gpusched for a pending pod or a controller's next pod (a defrag move, a
               // gang's slot: NodeState::holds); never in the ledger
  kNominated,  // kept for a pending pod nominated to the node (status.nominatedNodeName,
               // placement/nomination.h; NodeState::holds); never in the ledger
};

struct Allocation {
  std::string pod_uid;
  std::string pod_namespace;
  std::string pod_name;
  std::string node_name;
  NodeMode mode = NodeMode::kNvidia;  // the mode the pod was placed under
  Placement placement;
  AllocationOrigin origin = AllocationOrigin::kObserved;
  // What preemption weighs of the pod holding it: its priority, and whether it is already being
  // deleted (then it is never a victim: its GPUs free up on their own).
  int32_t priority = 0;
  bool terminating = false;
  // Non-empty when what the pod holds cannot be booked exactly (a bound pod whose request breaks
  // the contract); its node then takes no GPU pods and says why.
  std::string problem;
  // Non-empty when something about the pod was ignored (an unknown policy annotation on a pod
  // already bound: it steers placement, which is done). Shown in /debug/inventory.
  std::string warning;

  bool operator==(const Allocation&) const = default;
};

}  // namespace gpusched
