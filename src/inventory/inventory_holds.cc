// Inventory: GPUs held for the replacements of pods that defrag moves evict, and for the pods
// their moves make room for (HoldFor).
#include <algorithm>
#include <climits>
#include <optional>

#include <fmt/format.h>

#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/fit_check.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/nomination.h"
#include "gpusched/model/node_uses.h"

namespace gpusched::inventory {
namespace {

// Why the devices of a DRA hold cannot be held on `node`: one is held already (`holds`, but not
// `replaced`), or allocated to a claim that a pod not `leaving` reserves (or none does); "" if
// they can.
std::string DraHoldConflict(const Placement& placement, const std::vector<Allocation>& holds, const Allocation* replaced,
                            const dra::ClusterState* state, const std::set<std::string, std::less<>>& leaving) {
  for (const std::string& name : placement.devices) {
    for (const Allocation& h : holds) {
      if (replaced != nullptr && h == *replaced) continue;
      if (h.placement.kind == RequestKind::kDra && std::find(h.placement.devices.begin(), h.placement.devices.end(), name) !=
                                                       h.placement.devices.end()) {
        return fmt::format("device {} is held for {}/{}", name, h.pod_namespace, h.pod_name);
      }
    }
    std::optional<dra::DeviceId> id = dra::ParseDeviceName(name);
    if (!id) return fmt::format("device \"{}\" is not driver/pool/device", name);
    if (state == nullptr) continue;
    for (const dra::ResourceClaim* claim : state->HoldersOf(*id)) {
      bool freed = !claim->reserved_for.empty() &&
                   std::all_of(claim->reserved_for.begin(), claim->reserved_for.end(), [&](const dra::ConsumerRef& r) { return leaving.contains(r.uid); });
      if (!freed) return fmt::format("device {} is allocated to claim {}/{}", name, claim->namespace_name, claim->name);
    }
  }
  return "";
}

}  // namespace

StatusOr<HoldMade> Inventory::HoldFor(const std::string& holder, const Allocation& about, const std::string& node,
                          const Placement& placement, std::chrono::seconds ttl, const std::set<std::string, std::less<>>& leaving) {
  MutexLock lock(&mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return NotFoundError(fmt::format("node {} is not in the inventory", node));
  const placement::NodeState& now = *it->second.state;
  std::vector<Allocation> staying;
  for (const Allocation& a : now.allocations) {
    if (!a.terminating && !leaving.contains(a.pod_uid)) staying.push_back(a);
  }
  placement::NodeState after = placement::BuildNodeState(it->second.spec, std::move(staying));
  auto replaced = defrag_holds_.find(about.pod_uid);  // a hold about the same pod gives way
  for (const Allocation& h : now.holds) {
    if (replaced == defrag_holds_.end() || !(h == replaced->second.hold)) placement::AddHold(h, &after);
  }
  Status fits = placement::CheckFits(after, placement);
  if (fits.ok() && placement.kind == RequestKind::kDra) {
    std::string conflict = DraHoldConflict(placement, now.holds, replaced == defrag_holds_.end() ? nullptr : &replaced->second.hold,
                                           dra_state_.get(), leaving);
    if (!conflict.empty()) fits = FailedPreconditionError(conflict);
  }
  if (!fits.ok()) {
    return FailedPreconditionError(fmt::format("hold on {} for {}/{}: {}", node, about.pod_namespace, about.pod_name, fits.message()));
  }
  Allocation hold{.pod_uid = holder,
                  .pod_namespace = about.pod_namespace,
                  .pod_name = about.pod_name,
                  .node_name = node,
                  .mode = ModeServing(placement.kind),
                  .placement = placement,
                  .origin = AllocationOrigin::kHeld,
                  .priority = INT32_MAX};
  std::string_view controller = holder.starts_with(placement::kControllerHoldPrefix)
                                    ? std::string_view(holder).substr(placement::kControllerHoldPrefix.size())
                                    : std::string_view{};
  HoldMade made{.hold = NodeHold{.about_uid = about.pod_uid,
                                 .hold = hold,
                                 .at_ms = options_.clock->WallMs(),
                                 .ttl_s = ttl.count(),
                                 .present = PodsOfControllerLocked(controller, node)},
                .node_version = it->second.spec.resource_version};
  std::set<std::string> touched{node};
  if (replaced != defrag_holds_.end()) touched.insert(replaced->second.hold.node_name);
  defrag_holds_.insert_or_assign(about.pod_uid, DefragHold{std::move(hold), options_.clock->Now() + ttl});
  ended_holds_.erase(about.pod_uid);  // a new hold about the pod, whatever ended before
  RebuildLocked(touched);
  PublishLocked(false);
  return made;
}

void Inventory::DropHold(std::string_view about_uid) {
  MutexLock lock(&mu_);
  auto it = defrag_holds_.find(about_uid);
  if (it == defrag_holds_.end()) return;
  std::string node = it->second.hold.node_name;
  defrag_holds_.erase(it);
  ended_holds_.insert(std::string(about_uid));  // its copy in an annotation, until withdrawn
  RebuildLocked({node});
  PublishLocked(false);
}

void Inventory::AddDefragHoldsLocked(const std::string& node, placement::NodeState* state) {
  for (const auto& [uid, h] : defrag_holds_) {
    if (h.hold.node_name == node) placement::AddHold(h.hold, state);
  }
  hold_expiry_ms_.erase(node);
  if (!held_nodes_.contains(node)) return;
  int64_t now = options_.clock->WallMs();
  for (const NodeHold& h : nodes_.find(node)->second.spec.holds) {
    std::chrono::seconds ttl(h.ttl_s);
    if (defrag_holds_.contains(h.about_uid) || ended_holds_.contains(h.about_uid) || !BookingFresh(h.at_ms, now, ttl)) continue;
    if (AnnotatedHoldUsedLocked(h, node)) {
      ended_holds_.insert(h.about_uid);
      continue;
    }
    placement::AddHold(h.hold, state);
    int64_t until = std::min(h.at_ms, now) + h.ttl_s * 1000;  // BookingFresh's end, either way
    auto [at, fresh] = hold_expiry_ms_.emplace(node, until);
    if (!fresh) at->second = std::min(at->second, until);
  }
}

bool Inventory::AnnotatedHoldUsedLocked(const NodeHold& h, const std::string& node) const {
  const std::string& holder = h.hold.pod_uid;
  if (!holder.starts_with(placement::kControllerHoldPrefix)) return !NodeOfLocked(holder).empty();
  std::string_view controller = std::string_view(holder).substr(placement::kControllerHoldPrefix.size());
  for (const std::string& uid : PodsOfControllerLocked(controller, node)) {
    if (uid != h.about_uid && !std::binary_search(h.present.begin(), h.present.end(), uid)) return true;
  }
  return false;
}

std::vector<std::string> Inventory::PodsOfControllerLocked(std::string_view controller_uid, const std::string& node) const {
  std::vector<std::string> out;
  auto slot = uses_.find(node);
  if (controller_uid.empty() || slot == uses_.end()) return out;
  for (const PodUse& p : slot->second.uses.pods()) {
    if (!p.terminating && p.labels != nullptr && p.labels->controller_uid == controller_uid) out.push_back(p.uid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Inventory::ExpireAnnotatedHoldsLocked(std::set<std::string>* touched) {
  int64_t now = options_.clock->WallMs();
  for (const auto& [node, until] : hold_expiry_ms_) {
    if (until <= now) touched->insert(node);
  }
  std::set<std::string_view> annotated;
  for (const std::string& node : held_nodes_) {
    for (const NodeHold& h : nodes_.find(node)->second.spec.holds) annotated.insert(h.about_uid);
  }
  std::erase_if(ended_holds_, [&](const std::string& uid) { return !annotated.contains(uid); });
}

void Inventory::ExpireDefragHoldsLocked(std::chrono::steady_clock::time_point now, std::set<std::string>* touched) {
  std::erase_if(defrag_holds_, [&](const auto& kv) {
    if (now < kv.second.until) return false;
    touched->insert(kv.second.hold.node_name);
    return true;
  });
}

void Inventory::UseHoldLocked(const Pod& pod, const std::string& node, std::set<std::string>* touched) {
  std::string key = pod.controller_uid.empty() ? "" : placement::ControllerHoldKey(pod.controller_uid);
  for (const std::string& held : held_nodes_) {  // annotated holds: as AnnotatedHoldUsedLocked
    for (const NodeHold& h : nodes_.find(held)->second.spec.holds) {
      bool own = h.hold.pod_uid == pod.uid;
      bool replacement = !key.empty() && h.hold.pod_uid == key && held == node && h.about_uid != pod.uid &&
                         !std::binary_search(h.present.begin(), h.present.end(), pod.uid);
      if (!own && !replacement) continue;
      ended_holds_.insert(h.about_uid);
      touched->insert(held);
    }
  }
  for (auto it = defrag_holds_.begin(); it != defrag_holds_.end(); ++it) {
    const Allocation& h = it->second.hold;
    bool own = h.pod_uid == pod.uid;  // the pending pod's room: it ends wherever the pod binds
    bool replacement = !key.empty() && h.pod_uid == key && h.node_name == node && it->first != pod.uid;
    if (own || replacement) {
      touched->insert(h.node_name);
      defrag_holds_.erase(it);
      return;
    }
  }
}

}  // namespace gpusched::inventory
