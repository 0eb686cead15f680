// File: pod.h
//
// A Kubernetes Pod reduced to what GPU placement needs: identity, binding, phase, the GPU
// resources of each container, resource claims and the annotations of the GPU contracts.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/pod_constraints.h"
#include "gpusched/model/pod_group.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };

// GPU resources of one container in native units (GPUs, core percent, MiB); nullopt = not set.
struct GpuResources {
  std::optional<int64_t> nvidia_gpus;
  std::optional<int64_t> mgpu_core_percent;
  std::optional<int64_t> mgpu_memory_mib;
  // How the object spelled a value above when the API server would not have written it so for a
  // plain number ("1Gi", "1e3"; not "8k", the canonical form of 8000), by resource name: reasons
  // about the value show both.
  std::map<std::string, std::string, std::less<>> spelling;

  bool empty() const { return !nvidia_gpus && !mgpu_core_percent && !mgpu_memory_mib; }
  bool operator==(const GpuResources&) const = default;
};

struct Container {
  std::string name;
  GpuResources requests;
  GpuResources limits;
  bool sidecar = false;  // init container with restartPolicy: Always
  // Every other resource the container requests (resource_list.h units; not the three GPU
  // resources, whose per-GPU rules are stricter than node totals), a limit standing in for a
  // missing request as the API server defaults it. For NodeResourcesFit in preemption.
  ResourceList other_requests;

  bool operator==(const Container&) const = default;
};

using AnnotationMap = std::map<std::string, std::string, std::less<>>;

// One entry of pod.spec.resourceClaims with what pod.status.resourceClaimStatuses says of it.
struct PodClaimRef {
  std::string name;
  std::string claim_name;      // resourceClaimName
  std::string template_name;   // resourceClaimTemplateName
  std::optional<std::string> generated;  // status: name of the generated claim ("" = none needed)
  bool operator==(const PodClaimRef&) const = default;
};

struct Pod {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::string node_name;  // spec.nodeName; empty while pending
  std::string resource_version;
  PodPhase phase = PodPhase::kPending;
  int32_t priority = 0;      // spec.priority (the admission controller resolves the class); 0 if absent
  bool terminating = false;  // metadata.deletionTimestamp is set: it still holds what it holds
  int64_t created_ms = 0;    // metadata.creationTimestamp in Unix milliseconds; 0 when absent
  // spec.preemptionPolicy is Never: kube-scheduler evicts nothing for the pod (its PostFilter
  // skips preemption), so neither preempt, explain nor a filter's Event offers evictions.
  bool never_preempts = false;
  // spec.schedulingGates is not empty: kube-scheduler does not try the pod until they are removed
  // (Kueue's admission gate, a quota controller's).
  bool gated = false;
  std::string scheduler_name;  // spec.schedulerName; "" when absent (the API server sets it)
  // status.nominatedNodeName: the node kube-scheduler chose for this pending pod when it
  // preempted pods there; its GPUs are held for the pod (inventory.h). Empty when none.
  std::string nominated_node;
  // metadata.ownerReferences: the UID of the controller (controller: true; a ReplicaSet, a Job);
  // its next pod replaces this one when it is evicted. Empty for a pod nothing recreates.
  std::string controller_uid;
  std::string controller_kind;  // its kind: "ReplicaSet", "Job", "DaemonSet", "Node" (a mirror pod)
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  // spec.resourceClaims, with the generated claim names of status.resourceClaimStatuses.
  std::vector<PodClaimRef> resource_claims;
  // status.extendedResourceClaimStatus.resourceClaimName: the special claim kube-scheduler
  // created for the pod's extended resources served by DRA (KEP 5004); empty when none.
  std::string extended_resource_claim;
  ResourceList overhead;       // spec.overhead (RuntimeClass)
  ResourceList pod_requests;   // spec.resources.requests (pod-level resources): cpu and memory
  Labels labels;               // metadata.labels: PodDisruptionBudgets select by them
  // Where it may run and what it shares with its neighbours (node_fit.h, preemption.h).
  PodConstraints constraints;
  // Only the annotations gpusched reads or writes (vke.volcengine.com/*, gpusched.io/*).
  AnnotationMap annotations;
  // The pod group it belongs to (a gang's member, pod_group.h), if it names one.
  std::optional<PodGroupRef> group;
  // Non-empty when a field gpusched needs could not be read (a GPU quantity that is not a whole
  // number, a claim in a shape no supported Kubernetes writes); the text names the field and the
  // value. Such a pod is refused on every node, and while bound it makes its node inconsistent:
  // what it holds there is unknown, so it is never treated as holding nothing.
  std::string spec_error;

  // Returns true once the pod can no longer hold devices (Succeeded or Failed).
  bool terminal() const { return phase == PodPhase::kSucceeded || phase == PodPhase::kFailed; }
  bool bound() const { return !node_name.empty(); }

  bool operator==(const Pod&) const = default;
};

// Returns what the pod asks of its node as kube-scheduler counts it (resource.PodRequests): the
// sum of the app containers and sidecars, or the largest need of an init container's phase (it
// runs beside the sidecars declared before it) if higher; pod-level cpu and memory requests
// replace the containers'; the overhead is added.
ResourceList EffectiveRequests(const Pod& pod);

// Returns the pod's namespace, labels, controller and constraints, as the inventory keeps them
// for a bound pod (node_uses.h) and the planners weigh a pending one.
PodLabels LabelsOf(const Pod& pod);

// Returns true if gpusched keeps annotation `key` on its pod records.
bool IsTrackedAnnotation(std::string_view key);

}  // namespace gpusched
