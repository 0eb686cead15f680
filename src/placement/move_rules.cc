// File: move_rules.cc
//
// The move rules as code: why a pod may not move (terminating, unreadable, unknown to
// kube-scheduler, nothing or its own node recreates it, unjudged relations, several budgets), the
// summary of refused pods, and where a pod may land as the moves leave the nodes (resources, then
// host ports).
#include "gpusched/placement/move_rules.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpusched/placement/node_fit.h"
#include "gpusched/placement/resource_fit.h"

namespace gpusched::placement {
namespace {

const std::vector<const PodUse*> kNone;

const std::vector<const PodUse*>& On(const std::map<std::string, std::vector<const PodUse*>, std::less<>>& m, std::string_view node) {
  auto it = m.find(node);
  return it == m.end() ? kNone : it->second;
}

}  // namespace

std::string RefusedPods::Text() const {
  std::string out;
  for (const auto& [reason, uids] : by_reason_) {
    out += fmt::format("{} {} pod{} ({})", out.empty() ? "; not moved:" : ",", uids.size(), uids.size() == 1 ? "" : "s", reason);
  }
  return out;
}

std::string WhyNotMovable(const NodeState& node, const Allocation& a, const std::vector<DisruptionBudget>* budgets) {
  if (a.terminating) return "terminating";
  if (!a.problem.empty()) return "its allocation cannot be read";
  if (a.origin != AllocationOrigin::kObserved && a.origin != AllocationOrigin::kCommitted) return "not known to kube-scheduler yet";
  const PodLabels* labels = node.LabelsOf(a.pod_uid);
  if (labels == nullptr || labels->controller_uid.empty()) return "no controller would recreate it";
  if (RecreatedOnItsNode(*labels)) return fmt::format("its {} would recreate it on the same node", labels->controller_kind);
  // A gang's member is useless without the others, and a group may declare that its pods are
  // disrupted all together: a group moves whole or not at all, and defrag moves no group.
  if (labels->group) return fmt::format("a member of {} {}: a group moves whole or not at all", GroupApiName(labels->group->api), labels->group->name);
  if (std::string unjudged = UnjudgedBesidesHostPorts(labels->constraints); !unjudged.empty()) {
    return fmt::format("gpusched cannot judge its {}", unjudged);
  }
  if (budgets != nullptr) {
    size_t covering = 0;
    for (const DisruptionBudget& b : *budgets) covering += Covers(b, *labels, BudgetReading::kEviction) ? 1 : 0;
    if (covering > 1) return fmt::format("{} PodDisruptionBudgets cover it (the Eviction API refuses that)", covering);
  }
  return "";
}

void MovedUses::Move(const std::string& from, const std::string& to, const PodUse* use) {
  if (use == nullptr) return;
  left_[from].push_back(use);
  arrived_[to].push_back(use);
}

std::string MovedUses::LandingProblem(const NodeState& node, const PodLabels* labels, const ResourceList& requests,
                                      std::string_view uid, int32_t priority) const {
  if (node.node.schedulability.ready == false) return "node is not Ready (defrag's own rule)";
  static const PodConstraints kUnconstrained;
  if (std::string why = NodeSelectionProblem(labels != nullptr ? labels->constraints : kUnconstrained, node.node); !why.empty()) {
    return why;
  }
  ResourceFit fit(node, requests);
  fit.CountNominated(uid, priority);
  for (const PodUse* u : On(left_, node.node.name)) fit.Remove(*u);
  for (const PodUse* u : On(arrived_, node.node.name)) fit.Restore(*u);
  if (std::string why = fit.Why(); !why.empty()) return why;
  return labels != nullptr && !labels->constraints.host_ports.empty()
             ? PortsProblem(node, labels->constraints.host_ports, uid, priority)
             : "";
}

std::string MovedUses::PortsProblem(const NodeState& node, const std::vector<HostPort>& ports, std::string_view uid,
                                    int32_t priority) const {
  const std::vector<const PodUse*>& left = On(left_, node.node.name);
  // Why `u` keeps the pod off the node, unless it is the pod itself or a pod the moves took away.
  auto conflict = [&](const PodUse& u) {
    bool gone = u.uid == uid || std::any_of(left.begin(), left.end(), [&](const PodUse* l) { return l->uid == u.uid; });
    return gone ? std::string() : HostPortProblem(ports, u);
  };
  static const std::vector<PodUse> kNoUses;
  std::string why;
  for (const PodUse& u : node.uses != nullptr ? node.uses->pods() : kNoUses) {
    if (!(why = conflict(u)).empty()) return why;
  }
  for (const PodUse* u : On(arrived_, node.node.name)) {
    if (!(why = conflict(*u)).empty()) return why;
  }
  for (const PodUse& n : node.nominated) {  // as kube-scheduler's filters with nominated pods
    bool counted = n.priority >= priority && (node.uses == nullptr || node.uses->Find(n.uid) == nullptr);
    if (counted && !(why = conflict(n)).empty()) return why;
  }
  return "";
}

}  // namespace gpusched::placement
