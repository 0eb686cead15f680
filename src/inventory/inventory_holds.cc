// File: inventory_holds.cc
//
// Inventory: GPUs held for the replacements of pods that defrag moves evict, and for the pods
// their moves make room for (HoldFor).
#include <algorithm>
#include <climits>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/fit_check.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/model/node_uses.h"
#include "gpusched/placement/nomination.h"

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
      if (h.placement.kind == ClaimsKind() && std::find(h.placement.devices.begin(), h.placement.devices.end(), name) !=
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

// The key of an annotated hold among the book's ended ones: a later hold about the same pod is
// another hold.
std::string EndedKey(std::string_view about_uid, int64_t at_ms) { return fmt::format("{}@{}", about_uid, at_ms); }

}  // namespace

StatusOr<HoldMade> Inventory::HoldFor(const std::string& holder, const Allocation& about, const std::string& node,
                                      const Placement& placement, std::chrono::seconds ttl,
                                      const std::set<std::string, std::less<>>& leaving) {
  MutexLock lock(&mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return NotFoundError(fmt::format("node {} is not in the inventory", node));
  if (holder == about.pod_uid && book_.Find(holder) != nullptr) {  // checked with Commit's lock: no race
    return FailedPreconditionError(fmt::format("hold on {} for {}/{}: the pod is bound or being bound already", node,
                                               about.pod_namespace, about.pod_name));
  }
  const placement::NodeState& now = *it->second.state;
  std::vector<Allocation> staying;
  for (const Allocation& a : now.allocations) {
    if (!a.terminating && !leaving.contains(a.pod_uid)) staying.push_back(a);
  }
  placement::NodeState after = placement::BuildNodeState(it->second.spec, std::move(staying));
  const Reservation* replaced = book_.FindHold(about.pod_uid);  // a hold about the same pod gives way
  // So does another replica's hold kept for the same pending pod (a gang's slot moved or renewed
  // by a replica that did not make it): this one replaces it here.
  bool own_pod = holder == about.pod_uid;
  for (const Allocation& h : now.holds) {
    bool gives_way = (replaced != nullptr && h == replaced->held) || (own_pod && h.pod_uid == holder);
    if (!gives_way) placement::AddHold(h, &after);
  }
  Status fits = placement::CheckFits(after, placement);
  if (fits.ok() && placement.kind == ClaimsKind()) {
    std::string conflict = DraHoldConflict(placement, now.holds, replaced == nullptr ? nullptr : &replaced->held,
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
  if (replaced != nullptr) {
    touched.insert(replaced->held.node_name);
    if (replaced->held.node_name != node) made.replaced_node = replaced->held.node_name;
  } else if (own_pod) {
    made.replaced_node = AnnotatedHoldNodeLocked(about.pod_uid, node);  // withdrawn there by the writer
    if (!made.replaced_node.empty()) touched.insert(made.replaced_node);
  }
  book_.PutHold(about.pod_uid, Reservation{.held = std::move(hold), .expiry = Expiry::Before(options_.clock->Now() + ttl),
                                           .stamp_ms = made.hold.at_ms});
  book_.ForgetEnded(EndedKey(about.pod_uid, made.hold.at_ms));  // one dropped in this millisecond was another
  RebuildLocked(touched);
  PublishLocked(false);
  return made;
}

std::string Inventory::AnnotatedHoldNodeLocked(std::string_view about_uid, std::string_view except) const {
  for (const auto& [name, keys] : annotated_.counted()) {
    auto it = nodes_.find(name);
    if (name == except || it == nodes_.end()) continue;
    for (const NodeHold& h : it->second.spec.holds) {
      if (h.about_uid == about_uid) return name;
    }
  }
  return "";
}

void Inventory::DropHold(std::string_view about_uid) {
  MutexLock lock(&mu_);
  std::optional<Reservation> ended = book_.EndHold(about_uid);
  if (!ended) return;
  std::string node = ended->held.node_name;
  // Its copy in the node's annotation, until withdrawn, ends here too.
  int64_t left_ms = std::chrono::duration_cast<std::chrono::milliseconds>(ended->expiry.Left(options_.clock->Now())).count();
  book_.EndAnnotated(EndedKey(about_uid, ended->stamp_ms),
                     ReservationBook::EndedHold{.node = node, .until = Expiry::BeforeWall(options_.clock->WallMs() + std::max<int64_t>(left_ms, 0))});
  RebuildLocked({node});
  PublishLocked(false);
}

std::vector<Allocation> Inventory::DefragHoldsLocked(const std::string& node) {
  std::vector<Allocation> out;
  for (const auto& [uid, h] : book_.holds()) {
    if (h.held.node_name == node) out.push_back(h.held);
  }
  std::vector<std::string> keys;
  for (const NodeHold* h : LiveAnnotatedHoldsLocked(node)) {
    out.push_back(h->hold);
    keys.push_back(EndedKey(h->about_uid, h->at_ms));
  }
  annotated_.SetCounted(node, std::move(keys));
  return out;
}

std::vector<const NodeHold*> Inventory::LiveAnnotatedHoldsLocked(const std::string& node) {
  std::vector<const NodeHold*> live;
  auto entry = nodes_.find(node);
  if (entry == nodes_.end() || entry->second.spec.holds.empty()) return live;
  int64_t now = options_.clock->WallMs();
  int64_t last_end = now;  // when the last hold on the node runs out
  std::set<std::string, std::less<>> moved, taken;  // the moved pods; pods that used (or own) a hold
  std::vector<const NodeHold*> holds;  // fresh, not this replica's, not ended: oldest first
  for (const NodeHold& h : entry->second.spec.holds) {
    last_end = std::max(last_end, h.end_ms());
    moved.insert(h.about_uid);
    if (!h.hold.pod_uid.starts_with(placement::kControllerHoldPrefix)) taken.insert(h.hold.pod_uid);  // its own hold first
    if (book_.FindHold(h.about_uid) == nullptr && !book_.AnnotatedEnded(EndedKey(h.about_uid, h.at_ms)) &&
        BookingFresh(h.at_ms, now, std::chrono::seconds(h.ttl_s))) {
      holds.push_back(&h);
    }
  }
  for (const auto& [key, ended] : book_.ended()) {
    if (ended.node == node && !ended.pod.empty()) taken.insert(ended.pod);
  }
  std::sort(holds.begin(), holds.end(), [](const NodeHold* a, const NodeHold* b) {
    return std::tie(a->at_ms, a->about_uid) < std::tie(b->at_ms, b->about_uid);
  });
  for (const NodeHold* h : holds) {
    std::string pod = PodUsingLocked(*h, node, moved, &taken);
    if (pod.empty()) {
      live.push_back(h);
    } else if (SeenBoundLocked(pod)) {
      book_.EndAnnotated(EndedKey(h->about_uid, h->at_ms), ReservationBook::EndedHold{.node = node, .pod = pod, .until = Expiry::BeforeWall(last_end)});
    }
  }
  return live;
}

std::string Inventory::PodUsingLocked(const NodeHold& h, const std::string& node, const std::set<std::string, std::less<>>& moved,
                                      std::set<std::string, std::less<>>* taken) const {
  const std::string& holder = h.hold.pod_uid;
  if (!holder.starts_with(placement::kControllerHoldPrefix)) {
    bool placed = book_.Find(holder) != nullptr || book_.IsBare(holder) || SeenBoundLocked(holder);
    return placed ? holder : "";
  }
  std::string_view controller = std::string_view(holder).substr(placement::kControllerHoldPrefix.size());
  for (const std::string& uid : PodsOfControllerLocked(controller, node)) {
    if (moved.contains(uid) || taken->contains(uid) || std::binary_search(h.present.begin(), h.present.end(), uid)) continue;
    taken->insert(uid);
    return uid;
  }
  return "";
}

bool Inventory::SeenBoundLocked(std::string_view uid) const {
  if (const Allocation* a = book_.Find(uid); a != nullptr) return a->origin == AllocationOrigin::kObserved;
  const Pod* known = pods_.Find(uid);
  return known != nullptr && known->bound() && !book_.IsBare(uid);
}

std::vector<std::string> Inventory::PodsOfControllerLocked(std::string_view controller_uid, const std::string& node) const {
  std::vector<std::string> out;
  if (controller_uid.empty()) return out;
  for (const PodUse& p : uses_.PodsOn(node)) {
    if (!p.terminating && p.labels != nullptr && p.labels->controller_uid == controller_uid) out.push_back(p.uid);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void Inventory::ExpireAnnotatedHoldsLocked(std::set<std::string>* touched) {
  annotated_.ExpireHolds(options_.clock->WallMs());
  std::set<std::string> changed = WithChangedHoldNodesLocked(*touched);
  if (!changed.empty()) *touched = std::move(changed);
}

std::set<std::string> Inventory::WithChangedHoldNodesLocked(const std::set<std::string>& touched) {
  std::set<std::string> out;
  auto add = [&](const std::string& node) {
    if (touched.contains(node)) return;
    if (out.empty()) out = touched;
    out.insert(node);
  };
  for (const auto& [node, last_end_ms] : annotated_.held()) {
    if (touched.contains(node)) continue;
    std::vector<std::string> keys;
    for (const NodeHold* h : LiveAnnotatedHoldsLocked(node)) keys.push_back(EndedKey(h->about_uid, h->at_ms));
    if (annotated_.CountsOther(node, keys)) add(node);
  }
  for (const auto& [node, keys] : annotated_.counted()) {
    if (!annotated_.held().contains(node)) add(node);  // every hold there ran out
  }
  return out;
}

void Inventory::UseHoldLocked(const Pod& pod, const std::string& node, std::set<std::string>* touched) {
  std::string key = pod.controller_uid.empty() ? "" : placement::ControllerHoldKey(pod.controller_uid);
  std::string ended = book_.UseHold(pod.uid, key, node);
  if (!ended.empty()) touched->insert(std::move(ended));
}

}  // namespace gpusched::inventory
