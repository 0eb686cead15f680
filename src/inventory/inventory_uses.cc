// File: inventory_uses.cc
//
// Inventory, continued: what preemption needs besides the ledger. The use table's changes as
// nodes to rebuild, the budgets from a cluster delta, and which pending pods are nominated to a
// node after preemption and hold GPUs there (kept by the nomination table, nomination_table.h).
#include "gpusched/inventory/inventory.h"

#include <algorithm>

#include "gpusched/placement/pod_request.h"

namespace gpusched::inventory {

std::string Inventory::NodeOfLocked(std::string_view uid) const {
  if (const Allocation* a = book_.Find(uid); a != nullptr) return a->node_name;
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
  for (const std::string& uid : delta->deleted_pending) {
    book_.nominations().End(uid, touched);
    groups_.DropPending(uid);
  }
  if (delta->all_pending) {
    std::set<std::string_view> listed;
    for (const Pod& p : delta->upsert_pending) listed.insert(p.uid);
    book_.nominations().EndUnlisted(listed, touched);
    groups_.KeepPending(listed);
  }
  for (Pod& p : delta->upsert_pending) {
    groups_.PutMember(p);
    NominateLocked(std::move(p), touched);
  }
}

void Inventory::NominateLocked(Pod&& pod, std::set<std::string>* touched) {
  placement::PodRequest request = placement::AnalyzePod(pod);
  // A pending pod that gpusched is not binding already counts; only a GPU pod (device plugin,
  // claims, or extended resources DRA may serve) with a valid request holds GPUs.
  bool gpus = request.asks_gpu() && request.schedulable();
  bool holds = !pod.nominated_node.empty() && !pod.bound() && !pod.terminal() && !pod.terminating &&
               !book_.IsGone(pod.uid) && book_.Find(pod.uid) == nullptr;
  if (!holds) {
    book_.nominations().End(pod.uid, touched);
    return;
  }
  book_.nominations().Nominate(std::move(pod), gpus, options_.clock->Now(), touched);
}

bool Inventory::VictimsLeavingLocked(std::string_view node, int32_t priority) const {
  const std::vector<PodUse>& pods = uses_.PodsOn(node);
  return std::any_of(pods.begin(), pods.end(), [&](const PodUse& u) { return u.terminating && u.priority < priority; });
}

}  // namespace gpusched::inventory
