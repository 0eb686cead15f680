// File: node.h
//
// A Kubernetes Node reduced to what GPU placement needs. This is what the API says, unmodified;
// the GPU layout and the node's scheduling state are derived from it by placement/node_state.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/model/allocation.h"
#include "gpusched/model/gpu.h"
#include "gpusched/model/pod_constraints.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

struct NodeAllocatable {
  int64_t nvidia_gpus = 0;        // nvidia.com/gpu
  int64_t mgpu_core_percent = 0;  // vke.volcengine.com/mgpu-core (100 per GPU)
  int64_t mgpu_memory_mib = 0;    // vke.volcengine.com/mgpu-memory (total MiB)

  bool operator==(const NodeAllocatable&) const = default;
};

// A placement that a gpusched replica booked on a node (in the node annotation
// gpusched.io/bookings, written with the node's resourceVersion as precondition) before it bound
// the pod. Every replica counts a booking until it sees the pod bound, finished or deleted, or
// until the booking is older than the booking TTL.
struct NodeBooking {
  Allocation allocation;     // origin kBooked
  int64_t booked_at_ms = 0;  // Unix time of the booking, in milliseconds

  bool operator==(const NodeBooking&) const = default;
};

// Returns true while a booking made at `booked_at_ms` still counts at `now_ms`: younger than
// `ttl`, measured either way, so that a writer whose clock runs ahead cannot make it live longer.
inline bool BookingFresh(int64_t booked_at_ms, int64_t now_ms, std::chrono::seconds ttl) {
  int64_t age = now_ms - booked_at_ms;
  int64_t limit = std::chrono::duration_cast<std::chrono::milliseconds>(ttl).count();
  return age < limit && -age < limit;
}

// GPUs a defrag move holds on a node (in the node annotation gpusched.io/holds, written by the
// replica that applied the plan, with the node's resourceVersion as precondition), so that every
// replica keeps them for the pod they are for. `hold` is as Inventory::HoldFor keeps it (origin
// kHeld; pod_uid the holder: a pending pod's UID, or placement::ControllerHoldKey of the moved
// pod's controller; namespace and name the pod it is about). The hold counts while it is younger
// than `ttl_s` (measured either way, as BookingFresh) and its pod has not been seen bound: the
// pending pod anywhere; for a controller, one of its pods bound on this node that is not among
// `present` (its pods bound here when the hold was made) nor the moved pod.
struct NodeHold {
  std::string about_uid;  // the pending pod's UID, or the moved pod's
  Allocation hold;
  int64_t at_ms = 0;      // Unix time the hold was made, in milliseconds
  int64_t ttl_s = 0;
  std::vector<std::string> present;  // sorted

  // When the hold stops counting (Unix ms): BookingFresh's end for a hold stamped at at_ms.
  int64_t end_ms() const { return at_ms + ttl_s * 1000; }
  bool operator==(const NodeHold&) const = default;
};

struct Node {
  std::string name;
  std::string uid;
  std::string resource_version;
  std::optional<std::string> mode_label;            // vke.node.gpu.schedule; nullopt = absent
  std::optional<std::string> compute_policy_label;  // vke.volcengine.com/mgpu-compute-policy
  std::string gpu_product;                          // label nvidia.com/gpu.product, informational
  std::map<std::string, std::string, std::less<>> labels;  // every label (DRA node selectors)
  NodeAllocatable allocatable;
  // spec.unschedulable, spec.taints and the Ready condition (placement/node_fit.h).
  NodeSchedulability schedulability;
  // status.allocatable but the three GPU resources (resource_list.h units; "pods" is the pod
  // count): what kube-scheduler's NodeResourcesFit checks besides GPUs, for preemption.
  ResourceList other_allocatable;
  // Per-GPU description from the annotation gpusched.io/gpu-devices, when published.
  std::optional<std::vector<GpuDevice>> published_gpus;
  // The annotation gpusched.io/bookings: pods being bound here by some gpusched replica.
  std::vector<NodeBooking> bookings;
  // The annotation gpusched.io/holds: GPUs defrag moves hold here, by about_uid.
  std::vector<NodeHold> holds;
  // Non-empty when the node's GPU description could not be read (a malformed allocatable value or
  // annotation). Such a node takes no GPU pods; the text says which field and value.
  std::string spec_error;

  bool operator==(const Node&) const = default;
};

}  // namespace gpusched
