// File: pod_constraints.h
//
// What a pod's spec says about where it may run and what it shares with the pods beside it, as
// the API server writes it: node selection (nodeSelector, required node affinity, tolerations),
// inter-pod relations (required pod affinity and anti-affinity, topology spread constraints),
// host ports and the volumes kube-scheduler's volume filters read. And what a Node says of
// itself to those filters (spec.unschedulable, spec.taints, the Ready condition).
//
// Plain data, read once by kubejson/pod_constraints.h. Judged by placement/node_fit.h (node
// selection) and extender/preemption.h (which offered victims gpusched may give back).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/model/labels.h"

namespace gpusched {

// spec.tolerations[]: operator "Equal" (also when empty), "Exists", or another the API server
// accepts but gpusched does not know (such as the alpha "Gt"/"Lt"): that one tolerates nothing.
struct Toleration {
  std::string key;
  std::string op;
  std::string value;
  std::string effect;  // "" tolerates every effect
  auto operator<=>(const Toleration&) const = default;
};

// spec.taints[] of a Node.
struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
  auto operator<=>(const Taint&) const = default;
};

// A NodeSelectorRequirement: In, NotIn, Exists, DoesNotExist, Gt, Lt (an operator outside these
// matches nothing).
struct NodeRequirement {
  std::string key;
  std::string op;
  std::vector<std::string> values;
  auto operator<=>(const NodeRequirement&) const = default;
};

// A NodeSelectorTerm: every expression (on labels) and field (metadata.name) must hold; a term
// with neither matches no node.
struct NodeTerm {
  std::vector<NodeRequirement> expressions;
  std::vector<NodeRequirement> fields;
  auto operator<=>(const NodeTerm&) const = default;
};

// A required PodAffinityTerm: the pods its selector picks, in the namespaces it names (its pod's
// own when it names none; any when namespaceSelector is set: gpusched does not read Namespaces).
struct PodTerm {
  std::optional<LabelSelector> selector;  // nullopt: labelSelector absent, selects no pod
  std::vector<std::string> namespaces;
  bool namespace_selector = false;
  std::string topology_key;
  auto operator<=>(const PodTerm&) const = default;
};

// A topology spread constraint; only DoNotSchedule ones filter.
struct SpreadConstraint {
  std::optional<LabelSelector> selector;
  std::string topology_key;
  std::string when_unsatisfiable;
  // True if it filters nodes (DoNotSchedule, also when unset), not only scores them.
  bool Filters() const { return when_unsatisfiable != "ScheduleAnyway"; }
  auto operator<=>(const SpreadConstraint&) const = default;
};

// A container port with a hostPort (NodePorts filter).
struct HostPort {
  int32_t port = 0;
  std::string protocol;  // TCP when absent
  std::string host_ip;   // "" and "0.0.0.0" are every address
  auto operator<=>(const HostPort&) const = default;
};

struct PodConstraints {
  Labels node_selector;
  std::optional<std::vector<NodeTerm>> node_affinity;  // requiredDuringScheduling...; nullopt = none
  std::vector<Toleration> tolerations;
  std::vector<PodTerm> affinity;        // required pod affinity terms
  std::vector<PodTerm> anti_affinity;   // required pod anti-affinity terms
  std::vector<SpreadConstraint> spread;
  std::vector<HostPort> host_ports;     // of every container and init container
  // A volume some kube-scheduler filter reads (VolumeRestrictions, NodeVolumeLimits, VolumeZone,
  // VolumeBinding): anything but configMap, secret, projected, downwardAPI, emptyDir, hostPath.
  bool filter_volumes = false;

  // True if the pod has required inter-pod affinity or anti-affinity, or topology spread
  // constraints that filter (DoNotSchedule): relations gpusched cannot judge.
  bool HasPodRelations() const;
  // True if, as a running pod, it may tie a pending pod through a filter gpusched does not model
  // (pod_relations.h): host ports, required pod affinity or anti-affinity, filter volumes.
  bool Ties() const { return !host_ports.empty() || !affinity.empty() || !anti_affinity.empty() || filter_volumes; }
  // True if, as a pending pod, it may be tied to running pods that way: host ports, required pod
  // affinity or anti-affinity, topology spread constraints.
  bool TiedBy() const { return !host_ports.empty() || !affinity.empty() || !anti_affinity.empty() || !spread.empty(); }
  bool operator==(const PodConstraints&) const = default;
  auto operator<=>(const PodConstraints&) const = default;
};

// What a Node says of itself to kube-scheduler's filters besides resources.
struct NodeSchedulability {
  bool unschedulable = false;  // spec.unschedulable (cordoned)
  std::vector<Taint> taints;
  std::optional<bool> ready;   // status.conditions[type=Ready] is "True"; nullopt when not reported
  bool operator==(const NodeSchedulability&) const = default;
};

}  // namespace gpusched
