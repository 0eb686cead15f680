// File: inventory_uses.cc
//
// Inventory, continued: what preemption needs besides the ledger. The use table's changes as
// nodes to rebuild, the budgets from a cluster delta, and the pods nominated to a node after
// preemption (nomination.h).
#include "gpusched/inventory/inventory.h"

#include <algorithm>

#include "gpusched/placement/pod_request.h"

namespace gpusched::inventory {

std::string Inventory::NodeOfLocked(std::string_view uid) const {
  if (const Allocation* a = ledger_.Find(uid); a != nullptr) return a->node_name;
  const Pod* known = pods_.Find(uid);
  return known != nullptr ? known->node_name : std::string();
}

void Inventory::TrackUseLocked(const Pod& pod, std::set<std::string>* touched) {
  if (uses_.Track(pod)) touched->insert(pod.node_name);
}

void Inventory::DropUseLocked(std::string_view uid, std::string_view node, std::set<std::string>* touched) {
  if (uses_.Drop(uid, node) && touched != nullptr) touched->insert(std::string(node));
}

bool Inventory::ApplyBudgetsLocked(ClusterDelta* delta) {
  if (delta->upsert_budgets.empty() && delta->deleted_budgets.empty() && !delta->all_budgets) return false;
  std::map<std::string, DisruptionBudget> next = delta->all_budgets ? std::map<std::string, DisruptionBudget>() : uses_.budgets();
  for (const std::string& key : delta->deleted_budgets) next.erase(key);
  for (DisruptionBudget& b : delta->upsert_budgets) {
    std::string key = b.namespace_name + "/" + b.name;
    next.insert_or_assign(std::move(key), std::move(b));
  }
  return uses_.SetBudgets(std::move(next));
}

void Inventory::ApplyPendingLocked(ClusterDelta* delta, std::set<std::string>* touched) {
  for (const std::string& uid : delta->deleted_pending) EndNominationLocked(uid, touched);
  if (delta->all_pending) {
    std::set<std::string_view> listed;
    for (const Pod& p : delta->upsert_pending) listed.insert(p.uid);
    std::vector<std::string> ended;
    for (const auto& [uid, n] : nominations_) {
      if (!listed.contains(uid)) ended.push_back(uid);
    }
    for (const std::string& uid : ended) EndNominationLocked(uid, touched);
  }
  for (Pod& p : delta->upsert_pending) NominateLocked(std::move(p), touched);
}

void Inventory::NominateLocked(Pod&& pod, std::set<std::string>* touched) {
  placement::PodRequest request = placement::AnalyzePod(pod);
  // A pending pod that gpusched is not binding already counts; only a GPU pod (device plugin,
  // claims, or extended resources DRA may serve) with a valid request holds GPUs.
  bool gpus = request.asks_gpu() && request.schedulable();
  bool holds = !pod.nominated_node.empty() && !pod.bound() && !pod.terminal() && !pod.terminating &&
               !gone_.contains(pod.uid) && ledger_.Find(pod.uid) == nullptr;
  auto it = nominations_.find(pod.uid);
  if (!holds) {
    if (it != nominations_.end()) EndNominationLocked(pod.uid, touched);
    return;
  }
  if (it != nominations_.end()) {
    const Pod& held = it->second.pod;
    if (held.nominated_node == pod.nominated_node && held.priority == pod.priority && held.containers == pod.containers &&
        held.init_containers == pod.init_containers && held.resource_claims == pod.resource_claims &&
        held.overhead == pod.overhead && held.pod_requests == pod.pod_requests) {
      return;  // the same hold: it keeps its age
    }
    touched->insert(held.nominated_node);
  }
  touched->insert(pod.nominated_node);
  std::string uid = pod.uid;
  PodUse use{.uid = pod.uid, .name = pod.name, .priority = pod.priority, .requests = EffectiveRequests(pod)};
  nominations_.insert_or_assign(std::move(uid), Nomination{std::move(pod), options_.clock->Now(), gpus, std::move(use)});
}

bool Inventory::VictimsLeavingLocked(std::string_view node, int32_t priority) const {
  const std::vector<PodUse>& pods = uses_.PodsOn(node);
  return std::any_of(pods.begin(), pods.end(), [&](const PodUse& u) { return u.terminating && u.priority < priority; });
}

void Inventory::EndNominationLocked(std::string_view uid, std::set<std::string>* touched) {
  auto it = nominations_.find(uid);
  if (it == nominations_.end()) return;
  touched->insert(it->second.pod.nominated_node);
  nominations_.erase(it);
}

}  // namespace gpusched::inventory
