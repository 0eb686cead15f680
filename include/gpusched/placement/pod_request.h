// File: pod_request.h
//
// What a pod asks for: the kind whose resources it sets, and what that kind's rules make of them
// (each kind reads its own, kinds/: VKE mGPU's units, minima, whole cards, multi-card spreading,
// compute policy). A pod that breaks a rule is rejected on every node with one reason that lists
// each violated rule and its numbers.
//
// Pure: no I/O, no state.
#pragma once

#include <cstdint>
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/allocation.h"
#include "gpusched/model/node_mode.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/policy.h"
#include "gpusched/placement/violations.h"

namespace gpusched::placement {

// One container's mGPU request after the contract rules were applied.
struct MgpuContainerRequest {
  std::string container;
  int64_t core_percent = 0;   // total over its cards
  int64_t memory_mib = 0;     // total over its cards; 0 for whole cards
  int cards = 1;              // distinct GPUs the container spans
  bool whole_card = false;    // takes `cards` idle GPUs exclusively
  int64_t milli_per_card = 0;
  int64_t mib_per_card = 0;   // 0 for whole cards (they take the card's memory)
  // When it runs (ContainerAssignment::init_position): 0 for app containers, 1 + the index in
  // spec.initContainers for init containers; sidecar for those with restartPolicy Always.
  int init_position = 0;
  bool sidecar = false;

  // Returns true for a regular init container, which has exited before the app containers start.
  bool transient() const { return init_position > 0 && !sidecar; }
  bool operator==(const MgpuContainerRequest&) const = default;
};

struct PodRequest {
  RequestKind kind = RequestKind::kNone;
  int64_t whole_gpus = 0;                         // kWholeGpu: effective nvidia.com/gpu
  // kWholeGpu: the most GPUs one container asks, the set the device plugin allocates at once (the
  // NVLink rule of whole_gpu_sets.h is about one such set).
  int64_t largest_set = 0;
  std::vector<MgpuContainerRequest> containers;   // kMgpu: in spec order, init containers first
  // kMgpu: compute and memory over all containers and cards, aggregated as Kubernetes does
  // (the larger of the app phase and any init container's phase).
  int64_t total_milli = 0;
  int64_t total_mib = 0;
  std::string compute_policy;                     // kMgpu: pod's policy (default fixed-share)
  // kMgpu: whole cards only and no container-multiple-gpu: the pod takes idle GPUs on a node of
  // any compute policy (VKE isFullCardGPUPod).
  bool any_compute_policy = false;
  std::optional<std::string> node_policy;         // per-pod overrides: a scoring policy name
  std::optional<Policy> gpu_policy;
  // Non-empty when the pod breaks a rule of its contract, or cannot be read: no node can host it,
  // and a bound pod of this kind makes its node inconsistent.
  std::string invalid_reason;
  // Non-empty when the pod's request is valid but gpusched cannot place it: an annotation that
  // only steers placement is wrong (gpusched.io/node-policy, gpusched.io/gpu-policy, the compute
  // policy), or a result annotation key would break the API server's 63-character limit. A
  // pending pod is refused with it; for a pod already bound it is a warning, since what the pod
  // holds does not depend on it.
  std::string unplaceable_reason;
  // How the pod spelled GPU quantities in a form the API server would not make of a plain number
  // ("1Gi", "1e3"), with their values and units; reasons for a pod that fits no node show it.
  std::string quantity_note;
  // The pod carries spec.resourceClaims: devices come from DRA, beside `kind`'s or (kDra) alone.
  // Whether a claim asks for a GPU at all (a claim may be a NIC) is the DRA planner's to say.
  bool claims = false;

  // Returns true if gpusched judges the pod: it asks for GPUs of a kind, or carries claims.
  // Every verb passes other pods through untouched (filter keeps every node, and so on).
  bool asks_gpu() const { return IsGpuKind(kind); }
  // Returns true if the pod's devices come from its ResourceClaims alone (kDra).
  bool claims_only() const { return HasPayload(kind, Payload::kDevices); }
  // Returns true if the pod asks a device plugin for GPUs: whole GPUs or mGPU shares (which DRA
  // may serve instead on an nvidia-dra node, KEP 5004).
  bool device_plugin() const { return HasDevicePlugin(kind); }

  bool valid() const { return invalid_reason.empty(); }
  // Returns true if a pending pod with this request may be placed at all.
  bool schedulable() const { return valid() && unplaceable_reason.empty(); }
  // Returns why a pending pod cannot be placed anywhere; "" when schedulable().
  std::string RefusalReason() const;
};

// Returns the pod's GPU request. Never fails: rule violations land in invalid_reason.
PodRequest AnalyzePod(const Pod& pod);

// Returns the request that `a` answers, for placing the same pod again elsewhere (a defrag move),
// as its kind says (Kind::RequestHeldBy): its whole GPUs, or one mGPU container request per
// assignment (same cards, shares and phase) under `compute_policy` (the node's, where the pod was
// admitted). kNone for a DRA allocation.
PodRequest RequestHeldBy(const Allocation& a, std::string_view compute_policy);

// --- For kinds reading a pod's resources ---

// Returns a container's value of one resource: limits when set, else requests; nullopt when
// unset or zero. Records a violation when both are set and differ, or when the value is negative.
std::optional<int64_t> EffectiveResource(const Container& c, std::optional<int64_t> GpuResources::*field,
                                         std::string_view resource, Violations* v);
// Returns true if any container sets `field` to more than zero ("0" asks for nothing).
bool SetsPositive(const Pod& pod, std::optional<int64_t> GpuResources::*field);

// Returns a pod's effective request of one resource as Kubernetes computes it
// (k8s.io/component-helpers/resource PodRequests): the app containers plus every sidecar run
// together; a regular init container runs with the sidecars declared before it; the pod needs
// the larger of the two phases. `value(c)` is one container's request.
template <typename Value>
int64_t AggregateLikeKubernetes(const Pod& pod, Value value) {
  int64_t running = 0;
  for (const Container& c : pod.containers) running += value(c);
  int64_t sidecars = 0;
  int64_t init_peak = 0;
  for (const Container& c : pod.init_containers) {
    int64_t n = value(c);
    if (c.sidecar) {
      running += n;
      sidecars += n;
      init_peak = std::max(init_peak, sidecars);
    } else {
      init_peak = std::max(init_peak, n + sidecars);
    }
  }
  return std::max(running, init_peak);
}

}  // namespace gpusched::placement
