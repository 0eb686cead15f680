// File: use_table.cc
//
// The use table: each pod's effective requests, priority, labels and what preempt weighs of it
// (PodUse::flags) kept by node, copy-on-write for node states; label sets interned; budgets.
#include "gpusched/inventory/use_table.h"

#include <algorithm>

#include "gpusched/placement/pod_request.h"

namespace gpusched::inventory {
namespace {

// PodUse::flags of `pod`.
// `scheduler`: the profile gpusched serves ("": every pod counts as its own).
uint8_t UseFlags(const Pod& pod, const std::string& scheduler) {
  placement::PodRequest request = placement::AnalyzePod(pod);
  uint8_t flags = pod.constraints.Ties() ? PodUse::kTies : 0;
  if (request.device_plugin()) flags = PodUse::WithPluginKind(flags, request.kind);
  // A KEP 5004 pod's counted devices may come through DRA.
  if (!pod.resource_claims.empty() || !pod.extended_resource_claim.empty() || HasPayload(request.kind, Payload::kCount)) {
    flags |= PodUse::kDevices;
  }
  // No name: the API server sets one, so only hand-made objects lack it; they count as gpusched's.
  if (!scheduler.empty() && !pod.scheduler_name.empty() && pod.scheduler_name != scheduler) flags |= PodUse::kOtherScheduler;
  return flags;
}

}  // namespace

bool UseTable::Track(const Pod& pod) {
  if (!pod.bound() || pod.terminal()) return Drop(pod.uid, pod.node_name);
  PodUse use{.uid = pod.uid,
             .name = pod.name,
             .priority = pod.priority,
             .terminating = pod.terminating,
             .requests = EffectiveRequests(pod),
             .labels = Intern(pod),
             .flags = UseFlags(pod, scheduler_)};
  Slot& slot = slots_[pod.node_name];
  if (!slot.uses.Put(std::move(use))) return false;
  slot.shared = nullptr;
  return true;
}

bool UseTable::Drop(std::string_view uid, std::string_view node) {
  auto slot = slots_.find(node);
  if (slot == slots_.end() || !slot->second.uses.Drop(uid)) return false;
  if (slot->second.uses.empty()) {
    slots_.erase(slot);
  } else {
    slot->second.shared = nullptr;
  }
  return true;
}

std::shared_ptr<const NodeUses> UseTable::Shared(std::string_view node) {
  auto slot = slots_.find(node);
  if (slot == slots_.end()) return nullptr;
  if (slot->second.shared == nullptr) slot->second.shared = std::make_shared<const NodeUses>(slot->second.uses);
  return slot->second.shared;
}

const std::vector<PodUse>& UseTable::PodsOn(std::string_view node) const {
  static const std::vector<PodUse> kNone;
  auto slot = slots_.find(node);
  return slot != slots_.end() ? slot->second.uses.pods() : kNone;
}

bool UseTable::SetBudgets(std::map<std::string, DisruptionBudget> budgets) {
  if (budgets == budgets_) return false;
  budgets_ = std::move(budgets);
  std::vector<DisruptionBudget> list;
  for (const auto& [key, b] : budgets_) list.push_back(b);
  budget_list_ = list.empty() ? nullptr : std::make_shared<const std::vector<DisruptionBudget>>(std::move(list));
  return true;
}

std::shared_ptr<const PodLabels> UseTable::Intern(const Pod& pod) {
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

}  // namespace gpusched::inventory
