// File: kueue.h
//
// Kueue's objects (kueue.x-k8s.io, v1beta2 and v1beta1; Kueue 0.19's apis/kueue/*/
// workload_types.go, admissioncheck_types.go, resourceflavor_types.go, clusterqueue_types.go)
// reduced to what gpusched's admission check reads (docs/kueue.md): a Workload's pod sets and
// their admission, the flavors' node labels and tolerations, and which ClusterQueues name which
// check. The pod set's template is kept as the Pod it would make (its ordinal's name and UID
// filled in by the check), so that every kind of GPU request is judged as for a real pod.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/model/pod.h"
#include "gpusched/model/pod_constraints.h"

namespace gpusched::kueue {

// status.admissionChecks[].state.
enum class CheckState { kPending, kReady, kRetry, kRejected };
std::string_view CheckStateName(CheckState state);

// spec.podSets[].
struct PodSet {
  std::string name;
  int32_t count = 1;
  std::optional<int32_t> min_count;  // partial admission's floor
  // spec.podSets[].template as a pending Pod of the Workload's namespace, named "" with UID "".
  Pod prototype;
};

// One domain of a topologyAssignment: the node labels of its levels (the node selector Kueue
// gives its pods) and how many of the pod set's pods go there.
struct TopologyDomain {
  Labels node_labels;
  int32_t count = 0;
};

// status.admission.podSetAssignments[].
struct PodSetAssignment {
  std::string name;
  std::optional<int32_t> count;  // partial admission; nullopt: the pod set's count
  std::map<std::string, std::string, std::less<>> flavors;  // resource name -> ResourceFlavor
  bool topology_assigned = false;  // topologyAssignment present: Kueue's TAS chose the domains
  std::vector<TopologyDomain> topology;  // those domains, in order
  // delayedTopologyRequest is Pending: Kueue's topology scheduling assigns the domains in a
  // second pass, after the checks (a ProvisioningRequest's nodes, say).
  bool topology_delayed = false;
};

// status.admissionChecks[].podSetUpdates[]: what a check adds to a pod set's pods at admission
// (the parts placement reads: node selector and tolerations).
struct CheckPodSetUpdate {
  std::string name;
  Labels node_selector;
  std::vector<Toleration> tolerations;
};

// status.admissionChecks[]: one check's state as the Workload's status holds it.
struct CheckStatus {
  std::string name;
  CheckState state = CheckState::kPending;
  std::string message;
  std::vector<CheckPodSetUpdate> updates;
};

struct Workload {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string api_version;  // "kueue.x-k8s.io/v1beta2" or ".../v1beta1", as read
  std::string queue_name;
  int32_t priority = 0;
  bool active = true;  // spec.active
  // status.conditions True: QuotaReserved, Admitted, Finished, Evicted.
  bool quota_reserved = false;
  bool admitted = false;
  bool finished = false;
  bool evicted = false;
  std::string cluster_queue;  // status.admission.clusterQueue
  std::vector<PodSet> pod_sets;
  std::vector<PodSetAssignment> assignments;  // empty until quota is reserved
  std::vector<CheckStatus> checks;

  // The admitted count of pod set `i`: its assignment's count, else spec.podSets[i].count.
  int32_t AdmittedCount(size_t i) const;
  // The check named `name`, or null.
  const CheckStatus* FindCheck(std::string_view name) const;
};

struct ResourceFlavor {
  std::string name;
  Labels node_labels;                  // spec.nodeLabels
  std::vector<Toleration> tolerations;  // spec.tolerations
};

struct AdmissionCheck {
  std::string name;
  std::string controller_name;  // spec.controllerName
  bool active = false;          // status.conditions[type=Active] is True
};

// spec.admissionChecksStrategy.admissionChecks[] of a ClusterQueue (or spec.admissionChecks,
// which applies to every flavor).
struct QueueCheck {
  std::string name;
  std::vector<std::string> on_flavors;  // empty: every flavor
};

struct ClusterQueue {
  std::string name;
  std::vector<QueueCheck> checks;
};

// Kueue's objects as a cluster source hands them over (cluster_objects.h).
struct Objects {
  std::vector<Workload> workloads;
  std::vector<ResourceFlavor> flavors;
  std::vector<AdmissionCheck> checks;
  std::vector<ClusterQueue> queues;
};

}  // namespace gpusched::kueue
