// File: pod_relations.h
//
// What ties a pending pod to a pod running beside it through kube-scheduler filters that gpusched
// does not model: NodePorts (a host port both use), InterPodAffinity (a required affinity or
// anti-affinity term of either pod selecting the other), PodTopologySpread (the pending pod's
// DoNotSchedule constraints counting the other) and the volume filters (the other has a volume
// they read). Preemption keeps every victim kube-scheduler offered that such a relation ties to
// the preemptor (extender/preemption.h): kube-scheduler may need its eviction for a reason
// gpusched cannot see.
//
// A term selects a pod when its namespaces hold the pod's (the term owner's own namespace when it
// names none; any namespace when it has a namespaceSelector: gpusched does not read Namespaces)
// and its label selector matches the pod's labels (no selector: no pod).
//
// Pure.
#pragma once

#include <string>
#include <string_view>

#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/pod.h"

namespace gpusched::placement {

// True if `term`, of a pod in namespace `owner_ns`, selects a pod in `ns` with `labels`.
bool Selects(const PodTerm& term, std::string_view owner_ns, std::string_view ns, const Labels& labels);

// True if both lists have a host port of the same number and protocol on overlapping addresses.
bool PortsConflict(const std::vector<HostPort>& a, const std::vector<HostPort>& b);

// Why evicting `other` (a bound pod's namespace, labels and constraints) may matter to a filter
// gpusched does not model for `pod` ("host port 8080/TCP", "required pod anti-affinity",
// "topology spread", "volumes"), or "" when nothing ties them.
std::string UnmodeledRelation(const Pod& pod, const PodLabels& other);

// True if a required affinity term of `pod` selects `other`: evicting it could leave `pod`
// without the neighbour it requires.
bool RequiredNeighbour(const Pod& pod, const PodLabels& other);

}  // namespace gpusched::placement
