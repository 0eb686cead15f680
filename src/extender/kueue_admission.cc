// File: kueue_admission.cc
//
// kueue_admission.h: the admission check's sweep (activate, decide, keep or end holds) and a
// Kueue pod's claim of its Workload's hold.
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

// A hold in the snapshot: its node and the hold itself.
struct HeldSlot {
  std::string node;
  Allocation hold;
};

// Every hold in `snapshot` about a pod whose UID `match` accepts, by UID.
template <typename Match>
std::vector<HeldSlot> HeldSlots(const inventory::InventorySnapshot& snapshot, Match match) {
  std::vector<HeldSlot> out;
  for (const std::string& name : snapshot.held_nodes()) {
    const placement::NodeState* node = snapshot.FindNode(name);
    for (const Allocation& h : node != nullptr ? node->holds : std::vector<Allocation>{}) {
      if (match(h.pod_uid)) out.push_back(HeldSlot{.node = name, .hold = h});
    }
  }
  std::sort(out.begin(), out.end(), [](const HeldSlot& a, const HeldSlot& b) { return a.hold.pod_uid < b.hold.pod_uid; });
  return out;
}
std::vector<HeldSlot> HeldWithPrefix(const inventory::InventorySnapshot& snapshot, std::string_view prefix) {
  return HeldSlots(snapshot, [&](std::string_view uid) { return uid.starts_with(prefix); });
}

// The podSetUpdates of a Ready Workload: per pod set, the annotations that tie its pods to the
// plan, and where the plan lies in one domain, a nodeSelector for it, unless a pod of the set
// already selects that key (the template, a flavor or another check set it: adding it again would
// make Kueue fail the job's start).
std::vector<PodSetUpdate> UpdatesOf(const kueue::Workload& w, const WorkloadVerdict& v) {
  std::vector<PodSetUpdate> out;
  for (const kueue::PodSet& set : w.pod_sets) {
    PodSetUpdate u{.name = set.name,
                   .annotations = {{std::string(kKueueWorkloadAnnotation), w.namespace_name + "/" + w.name},
                                   {std::string(kKueuePodSetAnnotation), set.name}}};
    bool selected = std::any_of(v.pods.begin(), v.pods.end(), [&](const Pod& p) {
      auto of = p.labels.find("kueue.x-k8s.io/podset");
      return of != p.labels.end() && of->second == set.name && p.constraints.node_selector.contains(v.domain_key);
    });
    if (!v.domain_key.empty() && !selected) u.node_selector[v.domain_key] = v.domain_value;
    out.push_back(std::move(u));
  }
  return out;
}

// gpusched's check of `w` as Kueue's objects say, or null.
const kueue::CheckStatus* OurCheck(const kueue::Workload& w, const inventory::KueueState& kueue, std::string_view controller) {
  std::string check = GpuschedCheckOf(w, kueue, controller);
  return check.empty() ? nullptr : w.FindCheck(check);
}

// True while Workload `w` (null: gone) may still need its holds: it has quota, is neither evicted
// nor finished, and gpusched's check is Ready or about to be decided (Pending).
bool MayKeepHolds(const kueue::Workload* w, const kueue::CheckStatus* check) {
  if (w == nullptr || check == nullptr || !w->quota_reserved || !w->active || w->evicted || w->finished) return false;
  return check->state == kueue::CheckState::kReady || check->state == kueue::CheckState::kPending;
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
  KeepHoldsLocked(*kueue);
  size_t written = 0;
  auto now = clock_->Now();
  for (const auto& [key, w] : kueue->workloads) {
    const kueue::CheckStatus* check = OurCheck(w, *kueue, options_->kueue_controller_name);
    if (check == nullptr || check->state != kueue::CheckState::kPending || !MayKeepHolds(&w, check)) continue;
    auto decided = decided_.find(key);
    if (decided != decided_.end() && decided->second == w.resource_version) continue;
    auto retried = retried_.find(key);
    if (retried != retried_.end() && now - retried->second < options_->kueue_retry_after) continue;
    if (!writer_->Leading()) break;
    written += DecideLocked(w, check->name, *kueue) ? 1 : 0;
  }
  std::erase_if(decided_, [&](const auto& kv) { return kueue->FindWorkload(kv.first) == nullptr; });
  std::erase_if(retried_, [&](const auto& kv) { return kueue->FindWorkload(kv.first) == nullptr; });
  return written;
}

void KueueAdmission::KeepHoldsLocked(const inventory::KueueState& kueue) const {
  std::set<std::string> keys, held;
  {
    MutexLock claims(&claim_mu_);
    for (const HeldSlot& h : HeldWithPrefix(*inventory_->Snapshot(), "kueue/")) {
      keys.insert(WorkloadOfHold(h.hold.pod_uid));
      held.insert(h.hold.pod_uid);
    }
    for (const auto& [uid, key] : claimed_) keys.insert(key);
  }
  std::erase_if(renewed_, [&](const auto& kv) { return !held.contains(kv.first); });  // claimed, run out, released
  auto now = clock_->Now();
  auto half = std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_->kueue_hold_ttl) / 2;
  for (const std::string& key : keys) {
    const kueue::Workload* w = kueue.FindWorkload(key);
    const kueue::CheckStatus* check = w == nullptr ? nullptr : OurCheck(*w, kueue, options_->kueue_controller_name);
    // Under the claims' lock, on the snapshot of now: a pod cannot take a hold over meanwhile.
    MutexLock claims(&claim_mu_);
    std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
    if (!MayKeepHolds(w, check)) {
      ReleaseLocked(key, *snapshot);
      continue;
    }
    // Renewed until Kueue admits the Workload (other checks may take long); from then on a hold
    // lasts kueue.holdSeconds at most, for the pods to come.
    if (check->state != kueue::CheckState::kReady || w->admitted) continue;
    for (const HeldSlot& h : HeldWithPrefix(*snapshot, fmt::format("kueue/{}/", key))) {  // its pods not come yet
      auto renewed = renewed_.find(h.hold.pod_uid);
      if (renewed != renewed_.end() && now - renewed->second < half) continue;
      if (Status s = holds_.Hold(h.hold.pod_uid, h.hold, h.node, h.hold.placement); !s.ok()) {
        log::Warning("Workload {}: hold {} on {} not renewed: {}", key, h.hold.pod_uid, h.node, s.message());
      }
      renewed_[h.hold.pod_uid] = now;
    }
  }
}

bool KueueAdmission::DecideLocked(const kueue::Workload& w, const std::string& check, const inventory::KueueState& kueue) const {
  std::string key = w.namespace_name + "/" + w.name;
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  WorkloadVerdict v = JudgeWorkload(w, kueue, EvaluationInputs{.snapshot = snapshot.get(), .options = options_, .programs = programs_});
  if (v.state == kueue::CheckState::kPending) return false;
  CheckUpdate update{.state = v.state, .message = v.message};
  if (v.state == kueue::CheckState::kReady && !v.holdable) {
    update.updates = UpdatesOf(w, v);  // Kueue places the pods later: nothing to hold
  } else if (v.state == kueue::CheckState::kReady) {
    if (Status held = HoldLocked(v); held.ok()) {
      update.updates = UpdatesOf(w, v);
    } else {
      update = CheckUpdate{.state = kueue::CheckState::kRetry, .message = fmt::format("the plan could not be held: {}", held.message())};
    }
  }
  if (update.state == kueue::CheckState::kRetry) update.requeue_after_s = static_cast<int32_t>(options_->kueue_retry_after.count());
  if (update.message.size() > kMaxMessage) {
    update.message.resize(kMaxMessage - 3);
    update.message.append("...");
  }
  Status s = writer_->Leading() ? writer_->SetCheckState(w, check, update) : AbortedError("no longer the leader");
  if (!s.ok()) {
    // Refused outright: nothing was written. Otherwise the outcome is unknown, and the holds stay
    // until the Workload's next state says whether they are needed (KeepHoldsLocked).
    bool unknown = s.code() == StatusCode::kAborted || s.code() == StatusCode::kUnavailable;
    if (update.state == kueue::CheckState::kReady && !unknown) {
      MutexLock claims(&claim_mu_);
      ReleaseLocked(key, *inventory_->Snapshot());
    }
    // Refused (a role without the status patch, say): asked again after kueue.retryAfterSeconds,
    // not at every sweep.
    if (!unknown) retried_[key] = clock_->Now();
    if (s.code() != StatusCode::kAborted) log::Warning("Workload {}: check {} not set {}: {}", key, check, kueue::CheckStateName(update.state), s.message());
    return false;
  }
  decided_[key] = w.resource_version;
  if (update.state == kueue::CheckState::kRetry) retried_[key] = clock_->Now();
  log::Info("Workload {}: check {} set {}: {}", key, check, kueue::CheckStateName(update.state), update.message);
  return true;
}

Status KueueAdmission::HoldLocked(const WorkloadVerdict& v) const {
  auto now = clock_->Now();
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
    renewed_[pod.uid] = now;
  }
  return OkStatus();
}

void KueueAdmission::ReleaseLocked(std::string_view key, const inventory::InventorySnapshot& snapshot) const {
  for (const HeldSlot& h : HeldWithPrefix(snapshot, fmt::format("kueue/{}/", key))) {
    holds_.Unhold(h.node, h.hold.pod_uid);
    renewed_.erase(h.hold.pod_uid);
  }
  std::set<std::string, std::less<>> pods;
  for (auto it = claimed_.begin(); it != claimed_.end();) {
    if (it->second != key) {
      ++it;
      continue;
    }
    pods.insert(it->first);
    it = claimed_.erase(it);
  }
  for (const HeldSlot& h : HeldSlots(snapshot, [&](std::string_view uid) { return pods.contains(uid); })) {
    holds_.Unhold(h.node, h.hold.pod_uid);
  }
}

GangStanding KueueAdmission::Claim(const Pod& pod, const std::vector<std::string_view>& offered) const {
  auto workload = pod.annotations.find(kKueueWorkloadAnnotation);
  auto set = pod.annotations.find(kKueuePodSetAnnotation);
  if (workload == pod.annotations.end() || set == pod.annotations.end() || pod.uid.empty()) return {};
  // Only a pod of the Workload's namespace: another namespace's pod naming it takes nothing.
  if (!workload->second.starts_with(pod.namespace_name + "/")) return {};
  GangStanding slot{.kind = GangStanding::Kind::kSlot, .group = "Workload " + workload->second};
  MutexLock lock(&claim_mu_);
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  if (const Allocation* own = SlotOf(pod.uid, *snapshot); own != nullptr) {
    slot.node = own->node_name;
    return slot;
  }
  for (const HeldSlot& h : HeldWithPrefix(*snapshot, fmt::format("kueue/{}/{}/", workload->second, set->second))) {
    if (std::find(offered.begin(), offered.end(), h.node) == offered.end()) continue;
    holds_.Unhold(h.node, h.hold.pod_uid);
    Allocation about{.pod_uid = pod.uid, .pod_namespace = pod.namespace_name, .pod_name = pod.name};
    if (Status s = holds_.Hold(pod.uid, about, h.node, h.hold.placement); !s.ok()) {
      log::Warning("pod {}/{}: the hold of {} on {} not taken: {}", pod.namespace_name, pod.name, h.hold.pod_uid, h.node, s.message());
      if (Status back = holds_.Hold(h.hold.pod_uid, h.hold, h.node, h.hold.placement); !back.ok()) {
        log::Warning("hold {} on {} lost: {}", h.hold.pod_uid, h.node, back.message());
      }
      continue;
    }
    claimed_[pod.uid] = workload->second;
    slot.node = h.node;
    return slot;
  }
  return {};
}

}  // namespace gpusched::extender
