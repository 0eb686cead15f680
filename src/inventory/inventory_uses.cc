// File: inventory_uses.cc
//
// Inventory, continued: what preemption needs besides the ledger. Each bound pod's use of its
// node besides GPUs (NodeState::uses) and the GPUs held for pods nominated to a node after
// preemption (nomination.h).
#include "gpusched/inventory/inventory.h"

#include <algorithm>

#include "gpusched/placement/pod_request.h"

namespace gpusched::inventory {
namespace {

// PodUse::flags of `pod`.
uint8_t UseFlags(const Pod& pod) {
  placement::PodRequest request = placement::AnalyzePod(pod);
  uint8_t flags = pod.constraints.Ties() ? PodUse::kTies : 0;
  if (request.device_plugin()) flags = PodUse::WithPluginKind(flags, request.kind);
  // A KEP 5004 pod's counted devices may come through DRA.
  if (!pod.resource_claims.empty() || !pod.extended_resource_claim.empty() || HasPayload(request.kind, Payload::kCount)) {
    flags |= PodUse::kDevices;
  }
  return flags;
}

}  // namespace

std::string Inventory::NodeOfLocked(std::string_view uid) const {
  if (const Allocation* a = ledger_.Find(uid); a != nullptr) return a->node_name;
  auto it = pods_.find(uid);
  return it != pods_.end() ? it->second.node_name : std::string();
}

void Inventory::TrackUseLocked(const Pod& pod, std::set<std::string>* touched) {
  if (!pod.bound() || pod.terminal()) {
    DropUseLocked(pod.uid, pod.node_name, touched);
    return;
  }
  PodUse use{.uid = pod.uid,
             .name = pod.name,
             .priority = pod.priority,
             .terminating = pod.terminating,
             .requests = EffectiveRequests(pod),
             .labels = InternLabelsLocked(pod),
             .flags = UseFlags(pod)};
  UsesSlot& slot = uses_[pod.node_name];
  if (!slot.uses.Put(std::move(use))) return;
  slot.shared = nullptr;
  touched->insert(pod.node_name);
}

void Inventory::DropUseLocked(std::string_view uid, std::string_view node, std::set<std::string>* touched) {
  auto slot = uses_.find(node);
  if (slot == uses_.end()) return;
  if (!slot->second.uses.Drop(uid)) return;
  if (touched != nullptr) touched->insert(std::string(node));
  if (slot->second.uses.empty()) {
    uses_.erase(slot);
    return;
  }
  slot->second.shared = nullptr;
}

std::shared_ptr<const NodeUses> Inventory::SharedUsesLocked(std::string_view node) {
  auto slot = uses_.find(node);
  if (slot == uses_.end()) return nullptr;
  if (slot->second.shared == nullptr) slot->second.shared = std::make_shared<const NodeUses>(slot->second.uses);
  return slot->second.shared;
}

std::shared_ptr<const PodLabels> Inventory::InternLabelsLocked(const Pod& pod) {
  PodLabels key = LabelsOf(pod);
  auto it = label_sets_.find(key);
  if (it != label_sets_.end()) return *it;
  if (label_sets_.size() >= 2 * std::max<size_t>(label_sets_pruned_at_, 1024)) {
    std::erase_if(label_sets_, [](const auto& l) { return l.use_count() == 1; });
    label_sets_pruned_at_ = label_sets_.size();
  }
  auto shared = std::make_shared<const PodLabels>(std::move(key));
  label_sets_.insert(shared);
  return shared;
}

bool Inventory::ApplyBudgetsLocked(ClusterDelta* delta) {
  if (delta->upsert_budgets.empty() && delta->deleted_budgets.empty() && !delta->all_budgets) return false;
  std::map<std::string, DisruptionBudget> next = delta->all_budgets ? std::map<std::string, DisruptionBudget>() : budgets_;
  for (const std::string& key : delta->deleted_budgets) next.erase(key);
  for (DisruptionBudget& b : delta->upsert_budgets) {
    std::string key = b.namespace_name + "/" + b.name;
    next.insert_or_assign(std::move(key), std::move(b));
  }
  if (next == budgets_) return false;
  budgets_ = std::move(next);
  std::vector<DisruptionBudget> list;
  for (const auto& [key, b] : budgets_) list.push_back(b);
  budget_list_ = list.empty() ? nullptr : std::make_shared<const std::vector<DisruptionBudget>>(std::move(list));
  return true;
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
  auto slot = uses_.find(node);
  if (slot == uses_.end()) return false;
  const std::vector<PodUse>& pods = slot->second.uses.pods();
  return std::any_of(pods.begin(), pods.end(), [&](const PodUse& u) { return u.terminating && u.priority < priority; });
}

void Inventory::EndNominationLocked(std::string_view uid, std::set<std::string>* touched) {
  auto it = nominations_.find(uid);
  if (it == nominations_.end()) return;
  touched->insert(it->second.pod.nominated_node);
  nominations_.erase(it);
}

}  // namespace gpusched::inventory
