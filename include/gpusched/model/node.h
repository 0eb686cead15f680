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

struct Node {
  std::string name;
  std::string uid;
  std::string resource_version;
  std::optional<std::string> mode_label;            // vke.node.gpu.schedule; nullopt = absent
  std::optional<std::string> compute_policy_label;  // vke.volcengine.com/mgpu-compute-policy
  std::string gpu_product;                          // label nvidia.com/gpu.product, informational
  std::map<std::string, std::string, std::less<>> labels;  // every label (DRA node selectors)
  NodeAllocatable allocatable;
  // status.allocatable but the three GPU resources (resource_list.h units; "pods" is the pod
  // count): what kube-scheduler's NodeResourcesFit checks besides GPUs, for preemption.
  ResourceList other_allocatable;
  // Per-GPU description from the annotation gpusched.io/gpu-devices, when published.
  std::optional<std::vector<GpuDevice>> published_gpus;
  // The annotation gpusched.io/bookings: pods being bound here by some gpusched replica.
  std::vector<NodeBooking> bookings;
  // Non-empty when the node's GPU description could not be read (a malformed allocatable value or
  // annotation). Such a node takes no GPU pods; the text says which field and value.
  std::string spec_error;

  bool operator==(const Node&) const = default;
};

}  // namespace gpusched
