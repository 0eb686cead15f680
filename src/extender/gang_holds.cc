// File: gang_holds.cc
//
// Gangs held: a pod's standing read from the snapshot; a group planned on the snapshot with its
// members' old slots free, its slots dropped and held again; plans of deleted groups and members
// dropped, and unplanned gangs planned, by the sweep.
#include "gpusched/extender/gang_holds.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "gpusched/dra/extended_resources.h"
#include "gpusched/inventory/group_table.h"
#include "gpusched/placement/node_ranking.h"
#include "gpusched/placement/what_if.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::extender {
namespace {

using Uids = std::set<std::string, std::less<>>;

// The group `pod` names, if it is declared a gang.
const PodGroup* DeclaredGang(const Pod& pod, const inventory::InventorySnapshot& snapshot) {
  if (!pod.group) return nullptr;
  auto it = snapshot.groups().find(GroupKey(pod.group->api, pod.namespace_name, pod.group->name));
  return it != snapshot.groups().end() && it->second.gang() ? &it->second : nullptr;
}

// The node of the slot held for `uid` in `snapshot`, or "".
std::string SlotNode(std::string_view uid, const inventory::InventorySnapshot& snapshot) {
  for (const std::string& name : snapshot.held_nodes()) {
    const placement::NodeState* node = snapshot.FindNode(name);
    if (node == nullptr) continue;
    for (const Allocation& h : node->holds) {
      if (h.pod_uid == uid) return name;
    }
  }
  return "";
}

// The held nodes of `snapshot` that hold a slot of one of `uids`.
std::set<std::string, std::less<>> NodesHolding(const Uids& uids, const inventory::InventorySnapshot& snapshot) {
  std::set<std::string, std::less<>> out;
  for (const std::string& name : snapshot.held_nodes()) {
    const placement::NodeState* node = snapshot.FindNode(name);
    if (node == nullptr) continue;
    for (const Allocation& h : node->holds) {
      if (uids.contains(h.pod_uid)) out.insert(name);
    }
  }
  return out;
}

// Why a member's extended resources may be served by DRA on the snapshot's nvidia-dra nodes
// (KEP 5004), which the gang planner does not judge yet; "" if none.
std::string ServedByDra(const std::vector<Pod>& pods, const inventory::InventorySnapshot& snapshot, const ServiceOptions& options) {
  if (!options.dra_extended_resources) return "";
  bool dra_nodes = std::any_of(snapshot.nodes().begin(), snapshot.nodes().end(),
                               [](const inventory::NodeStatePtr& n) { return HasPayload(n->mode, Payload::kDevices); });
  for (const Pod& p : pods) {
    if (dra_nodes && !dra::MappedResources(p, snapshot.dra().classes()).empty()) {
      return fmt::format("{}/{} asks extended resources DRA may serve (KEP 5004): gangs with such members are not planned yet",
                         p.namespace_name, p.name);
    }
  }
  return "";
}

// The member key a group instance's key names its group by: "PodGroup/ns/name#replica" is of
// group "PodGroup/ns/name".
std::string_view GroupOfMemberKey(std::string_view member_key) { return member_key.substr(0, member_key.find('#')); }

}  // namespace

GangStanding StandingOf(const Pod& pod, const inventory::InventorySnapshot& snapshot, bool gangs) {
  if (!gangs) return {};
  const PodGroup* group = DeclaredGang(pod, snapshot);
  if (group == nullptr) return {};
  GangStanding s{.kind = GangStanding::Kind::kUnplanned, .group = pod.namespace_name + "/" + pod.group->name};
  s.node = SlotNode(pod.uid, snapshot);
  if (!s.node.empty()) s.kind = GangStanding::Kind::kSlot;
  return s;
}

placement::GangPlan PlanPending(const std::vector<Pod>& pods, const inventory::InventorySnapshot& snapshot,
                                const ServiceOptions& options) {
  if (std::string why = ServedByDra(pods, snapshot, options); !why.empty()) return {.reason = std::move(why), .unplannable = true};
  std::vector<placement::GangMember> members;
  Uids uids;
  for (const Pod& p : pods) {
    members.push_back(placement::GangMember{.pod = &p, .request = placement::AnalyzePod(p)});
    uids.insert(p.uid);
  }
  std::set<std::string, std::less<>> holding = NodesHolding(uids, snapshot);
  std::deque<placement::NodeState> released;  // stable addresses: nodes points into it
  std::vector<const placement::NodeState*> nodes;
  nodes.reserve(snapshot.nodes().size());
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    if (!holding.contains(n->node.name)) {
      nodes.push_back(n.get());
      continue;
    }
    released.push_back(std::move(placement::WhatIf(*n).Releasing(uids)).Take());
    nodes.push_back(&released.back());
  }
  scoring::TargetWorkload workload = placement::ObservedWorkload(nodes);
  StatusOr<std::unique_ptr<scoring::Scorer>> scorer = scoring::MakeScorer(options.node_policy, &workload);
  if (!scorer.ok()) scorer = scoring::MakeScorer("binpack", &workload);  // the configuration was checked at start
  return placement::PlanGang(members, nodes, options.placement, **scorer);
}

GangStanding GangHolds::Plan(const Pod& member) const {
  MutexLock lock(&mu_);
  return PlanLocked(member);
}

GangStanding GangHolds::PlanLocked(const Pod& member) const {
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  GangStanding s = StandingOf(member, *snapshot, true);
  if (s.kind != GangStanding::Kind::kUnplanned) return s;  // planned meanwhile, or no longer a gang
  std::string key = inventory::GroupTable::MemberKey(member);
  if (auto r = refused_.find(key); r != refused_.end() && r->second.version == snapshot->version()) {
    return r->second.reason.empty() ? GangStanding{} : GangStanding{.kind = GangStanding::Kind::kRefused, .group = s.group,
                                                                     .reason = r->second.reason};
  }
  const inventory::GroupTable::Members& members = snapshot->MembersOf(key);
  std::vector<Pod> pods;
  size_t committed = 0;  // members being bound: committed here, not yet seen bound
  for (const std::shared_ptr<const Pod>& p : members.pending) {
    if (inventory_->AllocationOf(p->uid)) {
      ++committed;
    } else {
      pods.push_back(*p);
    }
  }
  if (std::none_of(pods.begin(), pods.end(), [&](const Pod& p) { return p.uid == member.uid; })) pods.push_back(member);
  Uids uids;
  for (const Pod& p : pods) uids.insert(p.uid);
  size_t exist = pods.size() + committed + members.bound;
  auto min_count = static_cast<size_t>(DeclaredGang(member, *snapshot)->min_count);
  std::string reason;  // stays "" when the gang is not the planner's (kAlone)
  if (exist < min_count) {
    reason = fmt::format("gang {}: {} of its {} members exist; none is placed before all {} can be", s.group, exist,
                         min_count, min_count);
  } else {
    placement::GangPlan plan = PlanPending(pods, *snapshot, *options_);
    if (plan.fits) {
      DropSlotsLocked(uids, *snapshot);
      Status held = HoldLocked(plan, pods);
      if (held.ok()) {
        planned_[key] = std::move(uids);
        refused_.erase(key);
        GangStanding after = StandingOf(member, *inventory_->Snapshot(), true);
        return after.kind == GangStanding::Kind::kSlot ? after : GangStanding{};
      }
      return {.kind = GangStanding::Kind::kRefused, .group = s.group,
              .reason = fmt::format("gang {}: its plan could not be held: {}", s.group, held.message())};
    }
    if (!plan.unplannable) reason = fmt::format("gang {}: {}", s.group, plan.reason);
  }
  DropSlotsLocked(uids, *snapshot);  // a gang that does not fit holds nothing
  planned_.erase(key);
  refused_[key] = Refusal{.version = inventory_->Snapshot()->version(), .reason = reason};
  if (reason.empty()) return {};
  return {.kind = GangStanding::Kind::kRefused, .group = s.group, .reason = std::move(reason)};
}

void GangHolds::DropSlotsLocked(const Uids& uids, const inventory::InventorySnapshot& snapshot) const {
  for (const std::string& name : NodesHolding(uids, snapshot)) {
    const placement::NodeState* node = snapshot.FindNode(name);
    for (const Allocation& h : node->holds) {
      if (uids.contains(h.pod_uid)) writer_.Unhold(name, h.pod_uid);
    }
  }
}

Status GangHolds::HoldLocked(const placement::GangPlan& plan, const std::vector<Pod>& pods) const {
  for (size_t i = 0; i < plan.slots.size(); ++i) {
    const placement::GangSlot& slot = plan.slots[i];
    if (slot.placement.empty()) continue;  // a member without GPUs: nothing to hold
    Allocation about{.pod_uid = pods[i].uid, .pod_namespace = pods[i].namespace_name, .pod_name = pods[i].name};
    Status s = writer_.Hold(about.pod_uid, about, slot.node, slot.placement);
    if (s.ok()) continue;
    for (size_t k = 0; k < i; ++k) {
      if (!plan.slots[k].placement.empty()) writer_.Unhold(plan.slots[k].node, pods[k].uid);
    }
    return s;
  }
  return OkStatus();
}

bool GangHolds::MemberGoneLocked(const std::string& uid) const {
  std::optional<Pod> pod = inventory_->FindPod(uid);
  return !pod || pod->terminal() || pod->terminating;
}

bool GangHolds::AwaitsSlotLocked(const Pod& pod, const inventory::InventorySnapshot& snapshot) const {
  // A member without GPUs (a launcher) never has a slot, nor does one being bound.
  return placement::AnalyzePod(pod).asks_gpu() && StandingOf(pod, snapshot, true).kind == GangStanding::Kind::kUnplanned &&
         !inventory_->AllocationOf(pod.uid);
}

size_t GangHolds::Sweep() const {
  if (!options_->gangs) return 0;
  MutexLock lock(&mu_);
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  for (auto it = planned_.begin(); it != planned_.end();) {
    auto group = snapshot->groups().find(GroupOfMemberKey(it->first));
    bool ended = group == snapshot->groups().end() || !group->second.gang() ||
                 std::any_of(it->second.begin(), it->second.end(), [&](const std::string& uid) GPUSCHED_REQUIRES(mu_) {
                   return MemberGoneLocked(uid);
                 });
    if (ended) DropSlotsLocked(it->second, *snapshot);
    // A plan whose slots have all been used (its members bound) or ended is no longer kept.
    if (ended || NodesHolding(it->second, *snapshot).empty()) {
      it = planned_.erase(it);
    } else {
      ++it;
    }
  }
  size_t planned = 0;
  snapshot = inventory_->Snapshot();
  for (const auto& [key, members] : snapshot->group_members()) {
    for (const std::shared_ptr<const Pod>& p : members.pending) {
      if (!AwaitsSlotLocked(*p, *snapshot)) continue;
      if (PlanLocked(*p).kind == GangStanding::Kind::kSlot) ++planned;
      break;  // one plan covers the group's pending members
    }
  }
  return planned;
}

}  // namespace gpusched::extender
