// File: pod_group.h
//
// Pod groups: pods placed all or nothing (a gang), as the three APIs that declare them name
// them (docs/gangs.md). A pod names its group (PodGroupRef); the group's
// object says how many members must be placed together (PodGroup::min_count):
//   - kPodGroup: scheduling.k8s.io PodGroup (v1alpha2 in 1.36, v1beta1 in 1.37),
//     spec.schedulingPolicy.gang.minCount; pods name it in spec.schedulingGroup.podGroupName.
//   - kWorkload: scheduling.k8s.io/v1alpha1 Workload (1.35), one group per
//     spec.podGroups[].policy.gang.minCount; pods name it in spec.workloadRef{name, podGroup,
//     podGroupReplicaKey}, each replica key a separate instance of the group.
//   - kCoscheduling: scheduler-plugins' scheduling.x-k8s.io/v1alpha1 PodGroup, spec.minMember;
//     pods join it with the label scheduling.x-k8s.io/pod-group.
// A group whose policy is not a gang (scheduling.k8s.io's `basic`) has min_count 0.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpusched {

enum class GroupApi : uint8_t { kPodGroup, kWorkload, kCoscheduling };

// The label a Coscheduling member carries, naming its PodGroup.
inline constexpr std::string_view kCoschedulingLabel = "scheduling.x-k8s.io/pod-group";

// The group a pod belongs to, in the pod's namespace: `name` is the group's (a Workload's:
// "<workload>/<podGroup>"), `replica` a Workload's podGroupReplicaKey ("" for none).
struct PodGroupRef {
  GroupApi api = GroupApi::kPodGroup;
  std::string name;
  std::string replica;

  auto operator<=>(const PodGroupRef&) const = default;
};

// A group as its object declares it.
struct PodGroup {
  GroupApi api = GroupApi::kPodGroup;
  std::string namespace_name;
  std::string name;        // as PodGroupRef::name
  int32_t min_count = 0;   // members that must be placed together; 0: not a gang
  // spec.schedulingConstraints.topology[0].key (scheduling.k8s.io PodGroup): the node label the
  // members must share; "" for none.
  std::string topology_key;
  // The annotation gpusched.io/topology-required: a node label key whose one domain must hold the
  // whole gang, where the field above is not available (an older API, the gate off, Coscheduling,
  // Workload); gpusched enforces it through the gang's slots (extender/gang_domains.h). "" none.
  std::string required_topology;
  // Coscheduling's spec.scheduleTimeoutSeconds (how long Permit waits); 0 when unset.
  int64_t schedule_timeout_s = 0;

  bool gang() const { return min_count > 0; }
  bool operator==(const PodGroup&) const = default;
};

// The key the inventory keeps a group under: its API, namespace and name, e.g.
// "PodGroup/ml/train" ("Workload/ml/job/workers", "Coscheduling/ml/train").
std::string GroupKey(GroupApi api, std::string_view namespace_name, std::string_view name);
inline std::string GroupKey(const PodGroup& g) { return GroupKey(g.api, g.namespace_name, g.name); }

// How reasons name an API: "PodGroup", "Workload", "Coscheduling".
std::string_view GroupApiName(GroupApi api);

}  // namespace gpusched
