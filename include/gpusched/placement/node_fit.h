// File: node_fit.h
//
// Whether kube-scheduler would let a pod run on a node at all, by the filters gpusched models
// besides GPUs: one model for every verb that plans placements (defrag, explain, preempt's
// candidates, and what plans later). Upstream: NodeUnschedulable, TaintToleration and
// NodeAffinity (pkg/scheduler/framework/plugins, k8s.io/component-helpers nodeaffinity);
// NodeResourcesFit is placement/resource_fit.h.
//
// - spec.unschedulable: refused unless the pod tolerates node.kubernetes.io/unschedulable:NoSchedule.
// - Taints of effect NoSchedule or NoExecute must each be tolerated (they carry not-ready,
//   unreachable, unschedulable and the pressure conditions); PreferNoSchedule never refuses.
//   A toleration matches a taint when its effect is empty or equal, its key is empty with
//   operator Exists or equal, and its operator is Exists, or Equal (or empty) with an equal value;
//   any other operator (the alpha Gt/Lt) tolerates nothing.
// - nodeSelector: every entry equals a node label.
// - Required node affinity: some term holds (ORed); a term holds when each expression on labels
//   (In, NotIn, Exists, DoesNotExist, Gt, Lt: integers) and each field (metadata.name, In or
//   NotIn) does (ANDed); a term with neither, or an unknown operator, matches nothing.
//
// - Host ports (NodePorts, HostPortProblem): no pod counted on the node uses a host port of the
//   same number and protocol on an overlapping address (pod_relations.h's PortsConflict); the
//   caller says which pods count (those a plan leaves there, those nominated there of equal or
//   higher priority). Defrag judges them where pods land (move_rules.h); filter, explain and
//   preempt leave them to kube-scheduler, which checks them before it asks gpusched.
//
// Not judged here, and never by gpusched: inter-pod affinity and anti-affinity, topology spread
// (PodConstraints::HasPodRelations) and volumes. Verbs that plan leave those pods to
// kube-scheduler and say so (UnjudgedRelations).
//
// Pure.
#pragma once

#include <string>
#include <vector>

#include "gpusched/model/node.h"
#include "gpusched/model/node_uses.h"
#include "gpusched/model/pod.h"
#include "gpusched/model/pod_constraints.h"
#include "gpusched/model/resource_list.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/verdict.h"

namespace gpusched::placement {

// True if one of `tolerations` tolerates `taint`.
bool Tolerates(const std::vector<Toleration>& tolerations, const Taint& taint);

// True if some term of `terms` matches `node` (required node affinity).
bool MatchesNodeTerms(const std::vector<NodeTerm>& terms, const Node& node);

// "" if a pod with `pod`'s constraints may run on `node` by the rules above, else why not
// ("node is cordoned (spec.unschedulable)", "taint gpu=broken:NoSchedule is not tolerated",
// "nodeSelector pool=a does not match (pool=b)", "required node affinity does not match").
std::string NodeSelectionProblem(const PodConstraints& pod, const Node& node);

// Whether `pod`, asking `requests` besides GPUs (EffectiveRequests), may run on `node` as it stands
// by node selection (above) and NodeResourcesFit (resource_fit.h: the pods bound there, and those
// nominated there with equal or higher priority), with kube-scheduler's status code: kFits;
// kUnresolvable for a node-selection refusal or a request larger than the node's allocatable;
// kUnschedulable for a shortage that evicting pods could end. GPUs are not judged here.
struct NodeFitJudgement {
  Outcome outcome = Outcome::kFits;
  std::string reason;  // unless it fits
};
NodeFitJudgement JudgeNodeFit(const Pod& pod, const ResourceList& requests, const NodeState& node);

// Why a pod asking host ports `ports` may not run beside `other` (a pod counted on the node):
// "host port 8080/TCP is used by ml/web-0", or "" when they share none.
std::string HostPortProblem(const std::vector<HostPort>& ports, const PodUse& other);

// The constraints of `pod` that a verb does not judge, for its answer ("required pod
// anti-affinity, topology spread constraints, host ports, volumes"), or "" when none.
// UnjudgedRelations is for verbs that leave host ports to kube-scheduler (explain);
// UnjudgedBesidesHostPorts for those that judge them (defrag).
std::string UnjudgedRelations(const PodConstraints& pod);
std::string UnjudgedBesidesHostPorts(const PodConstraints& pod);

}  // namespace gpusched::placement
