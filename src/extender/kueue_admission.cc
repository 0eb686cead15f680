// File: kueue_admission.cc
//
// kueue_admission.h: the admission check's sweep (activate, decide, release) and a Kueue pod's
// claim of its Workload's hold.
#include "gpusched/extender/kueue_admission.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpusched/common/log.h"
#include "gpusched/extender/kueue_check.h"

namespace gpusched::extender {
namespace {

constexpr size_t kMaxMessage = 1024;  // Kueue allows 32 KiB; a person reads the first lines

// The Workload key ("namespace/name") of a hold about an admitted pod (AdmittedPodUid), or "".
std::string WorkloadOfHold(std::string_view uid) {
  if (!uid.starts_with("kueue/")) return "";
  uid.remove_prefix(6);
  size_t ns = uid.find('/');
  size_t name = ns == std::string_view::npos ? ns : uid.find('/', ns + 1);
  return name == std::string_view::npos ? "" : std::string(uid.substr(0, name));
}

// Every hold about an admitted pod in `snapshot` whose uid starts with `prefix`: (uid, node,
// its placement), by uid.
struct HeldSlot {
  std::string uid, node;
  Placement placement;
};
std::vector<HeldSlot> HeldSlots(std::string_view prefix, const inventory::InventorySnapshot& snapshot) {
  std::vector<HeldSlot> out;
  for (const std::string& name : snapshot.held_nodes()) {
    const placement::NodeState* node = snapshot.FindNode(name);
    for (const Allocation& h : node != nullptr ? node->holds : std::vector<Allocation>{}) {
      if (h.pod_uid.starts_with(prefix)) out.push_back(HeldSlot{.uid = h.pod_uid, .node = name, .placement = h.placement});
    }
  }
  std::sort(out.begin(), out.end(), [](const HeldSlot& a, const HeldSlot& b) { return a.uid < b.uid; });
  return out;
}

// The podSetUpdates of a Ready Workload: per pod set, the annotations that tie its pods to the plan.
std::vector<PodSetUpdate> UpdatesOf(const kueue::Workload& w) {
  std::vector<PodSetUpdate> out;
  for (const kueue::PodSet& set : w.pod_sets) {
    out.push_back(PodSetUpdate{.name = set.name,
                               .annotations = {{std::string(kKueueWorkloadAnnotation), w.namespace_name + "/" + w.name},
                                               {std::string(kKueuePodSetAnnotation), set.name}}});
  }
  return out;
}

// True while gpusched's check `check` of `w` still waits for a decision.
bool AwaitsDecision(const kueue::Workload& w, const std::string& check) {
  const kueue::CheckStatus* cs = check.empty() ? nullptr : w.FindCheck(check);
  return cs != nullptr && cs->state == kueue::CheckState::kPending && w.quota_reserved && w.active && !w.evicted && !w.finished;
}

}  // namespace

size_t KueueAdmission::Sweep() const {
  if (writer_ == nullptr || !writer_->Leading()) return 0;
  MutexLock lock(&mu_);
  std::shared_ptr<const inventory::KueueState> kueue = inventory_->kueue().State();
  for (const auto& [name, check] : kueue->checks) {
    if (check.controller_name != options_->kueue_controller_name || check.active || !writer_->Leading()) continue;
    if (Status s = writer_->Activate(check); !s.ok()) log::Warning("AdmissionCheck {}: not set Active: {}", name, s.message());
  }
  // Holds of Workloads that no longer wait for their pods.
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  std::set<std::string> held;
  for (const HeldSlot& h : HeldSlots("kueue/", *snapshot)) held.insert(WorkloadOfHold(h.uid));
  for (const std::string& key : held) {
    const kueue::Workload* w = kueue->FindWorkload(key);
    std::string check = w == nullptr ? "" : GpuschedCheckOf(*w, *kueue, options_->kueue_controller_name);
    const kueue::CheckStatus* cs = check.empty() ? nullptr : w->FindCheck(check);
    bool ready = cs != nullptr && cs->state == kueue::CheckState::kReady && !w->evicted && !w->finished;
    auto decided = decided_.find(key);
    bool just_decided = w != nullptr && decided != decided_.end() && decided->second == w->resource_version;
    if (!ready && !just_decided) ReleaseLocked(key, *snapshot);
  }
  size_t written = 0;
  for (const auto& [key, w] : kueue->workloads) {
    std::string check = GpuschedCheckOf(w, *kueue, options_->kueue_controller_name);
    if (!AwaitsDecision(w, check)) continue;
    auto decided = decided_.find(key);
    if (decided != decided_.end() && decided->second == w.resource_version) continue;
    if (!writer_->Leading()) break;
    written += DecideLocked(w, check, *kueue) ? 1 : 0;
  }
  std::erase_if(decided_, [&](const auto& kv) { return kueue->FindWorkload(kv.first) == nullptr; });
  return written;
}

bool KueueAdmission::DecideLocked(const kueue::Workload& w, const std::string& check, const inventory::KueueState& kueue) const {
  std::string key = w.namespace_name + "/" + w.name;
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  WorkloadVerdict v = JudgeWorkload(w, KueueFlavors(kueue.flavors.begin(), kueue.flavors.end()),
                                    EvaluationInputs{.snapshot = snapshot.get(), .options = options_, .programs = programs_});
  if (v.state == kueue::CheckState::kPending) return false;
  CheckUpdate update{.state = v.state, .message = v.message};
  if (v.state == kueue::CheckState::kReady) {
    if (Status held = HoldLocked(v); held.ok()) {
      update.updates = UpdatesOf(w);
    } else {
      update = CheckUpdate{.state = kueue::CheckState::kRetry, .message = fmt::format("the plan could not be held: {}", held.message())};
    }
  }
  if (update.state == kueue::CheckState::kRetry) update.requeue_after_s = static_cast<int32_t>(options_->kueue_retry_after.count());
  if (update.message.size() > kMaxMessage) {
    update.message.resize(kMaxMessage - 3);
    update.message.append("...");
  }
  bool holding = update.state == kueue::CheckState::kReady;
  Status s = writer_->Leading() ? writer_->SetCheckState(w, check, update) : AbortedError("no longer the leader");
  if (!s.ok()) {
    if (holding) ReleaseLocked(key, *inventory_->Snapshot());
    if (s.code() != StatusCode::kAborted) log::Warning("Workload {}: check {} not set {}: {}", key, check, kueue::CheckStateName(update.state), s.message());
    return false;
  }
  decided_[key] = w.resource_version;
  log::Info("Workload {}: check {} set {}: {}", key, check, kueue::CheckStateName(update.state), update.message);
  return true;
}

Status KueueAdmission::HoldLocked(const WorkloadVerdict& v) const {
  for (size_t i = 0; i < v.plan.slots.size(); ++i) {
    const placement::GangSlot& slot = v.plan.slots[i];
    if (slot.placement.empty()) continue;  // no GPUs: nothing to hold
    const Pod& pod = v.pods[i];
    Allocation about{.pod_uid = pod.uid, .pod_namespace = pod.namespace_name, .pod_name = pod.name};
    if (Status s = holds_.Hold(pod.uid, about, slot.node, slot.placement); !s.ok()) {
      for (size_t k = 0; k < i; ++k) {
        if (!v.plan.slots[k].placement.empty()) holds_.Unhold(v.plan.slots[k].node, v.pods[k].uid);
      }
      return s;
    }
  }
  return OkStatus();
}

void KueueAdmission::ReleaseLocked(std::string_view key, const inventory::InventorySnapshot& snapshot) const {
  for (const HeldSlot& h : HeldSlots(fmt::format("kueue/{}/", key), snapshot)) holds_.Unhold(h.node, h.uid);
}

GangStanding KueueAdmission::Claim(const Pod& pod, const std::vector<std::string_view>& offered) const {
  auto workload = pod.annotations.find(kKueueWorkloadAnnotation);
  auto set = pod.annotations.find(kKueuePodSetAnnotation);
  if (workload == pod.annotations.end() || set == pod.annotations.end() || pod.uid.empty()) return {};
  GangStanding slot{.kind = GangStanding::Kind::kSlot, .group = "Workload " + workload->second};
  MutexLock lock(&mu_);
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  if (const Allocation* own = SlotOf(pod.uid, *snapshot); own != nullptr) {
    slot.node = own->node_name;
    return slot;
  }
  for (const HeldSlot& h : HeldSlots(fmt::format("kueue/{}/{}/", workload->second, set->second), *snapshot)) {
    if (std::find(offered.begin(), offered.end(), h.node) == offered.end()) continue;
    holds_.Unhold(h.node, h.uid);
    Allocation about{.pod_uid = pod.uid, .pod_namespace = pod.namespace_name, .pod_name = pod.name};
    if (Status s = holds_.Hold(pod.uid, about, h.node, h.placement); !s.ok()) {
      log::Warning("pod {}/{}: the hold of {} on {} not taken: {}", pod.namespace_name, pod.name, h.uid, h.node, s.message());
      continue;
    }
    slot.node = h.node;
    return slot;
  }
  return {};
}

}  // namespace gpusched::extender
