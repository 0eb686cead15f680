// File: domain_plans.cc
//
// One plan per (gang, domain): the domain's nodes found by the group's topology label, the plan
// kept while its slots fit and its members stay, late members and members kube-scheduler kept
// off their slot's node planned alone beside the others' slots, each member steered to its slot.
#include "gpusched/extender/domain_plans.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <deque>
#include <set>

#include "gpusched/extender/gang_holds.h"
#include "gpusched/inventory/group_table.h"
#include "gpusched/placement/fit_check.h"
#include "gpusched/placement/what_if.h"

namespace gpusched::extender {
namespace {

// The node of `uid`'s slot in `plan`, or "".
std::string SlotIn(const placement::GangPlan& plan, std::string_view uid) {
  for (const placement::GangSlot& s : plan.slots) {
    if (s.pod_uid == uid) return s.node;
  }
  return "";
}

// The allocation a slot books on its node, as a plan's view of that node holds it.
Allocation SlotAllocation(const placement::GangSlot& s) {
  return Allocation{.pod_uid = s.pod_uid, .node_name = s.node, .mode = ModeServing(s.placement.kind), .placement = s.placement,
                    .origin = AllocationOrigin::kHeld, .priority = INT32_MAX};
}

// True if every slot of `plan` with GPUs of a device plugin still fits its node as `snapshot` has
// it, beside the plan's other slots there.
bool SlotsFit(const placement::GangPlan& plan, const inventory::InventorySnapshot& snapshot) {
  std::map<std::string, std::vector<const placement::GangSlot*>> by_node;
  for (const placement::GangSlot& s : plan.slots) {
    if (!s.placement.empty() && s.placement.kind != ClaimsKind()) by_node[s.node].push_back(&s);
  }
  for (const auto& [name, slots] : by_node) {
    const placement::NodeState* node = snapshot.FindNode(name);
    if (node == nullptr) return false;
    placement::NodeState state = *node;
    for (const placement::GangSlot* s : slots) {
      if (!placement::CheckFits(state, s->placement).ok()) return false;
      placement::AddHold(SlotAllocation(*s), &state);
    }
  }
  return true;
}

}  // namespace

const PodGroup* TopologyGangOf(const Pod& pod, const inventory::InventorySnapshot& snapshot) {
  if (!pod.group) return nullptr;
  auto it = snapshot.groups().find(GroupKey(pod.group->api, pod.namespace_name, pod.group->name));
  if (it == snapshot.groups().end() || !it->second.gang() || it->second.topology_key.empty()) return nullptr;
  return &it->second;
}

FilterResult DomainPlans::Steer(const Pod& member, const PodGroup& group, const std::vector<std::string_view>& offered,
                                const inventory::InventorySnapshot& snapshot, const DomainReservation* off) const {
  FilterResult result;
  std::string name = fmt::format("gang {}/{}", member.namespace_name, member.group->name);
  std::map<std::string, std::vector<size_t>> by_domain;  // offered positions
  for (size_t i = 0; i < offered.size(); ++i) {
    const placement::NodeState* n = snapshot.FindNode(offered[i]);
    auto label = n != nullptr ? n->node.labels.find(group.topology_key) : decltype(n->node.labels.end()){};
    if (n == nullptr || label == n->node.labels.end()) {
      result.unresolvable.emplace_back(i, fmt::format("{}: the node has no label {}, the group's topology key", name, group.topology_key));
      continue;
    }
    by_domain[label->second].push_back(i);
  }
  std::string key = inventory::GroupTable::MemberKey(member);
  for (const auto& [domain, positions] : by_domain) {
    if (off != nullptr && domain == off->domain) {  // kept for another gang (its level is this key's)
      for (size_t i : positions) result.failed.emplace_back(i, ReservationReason(group.topology_key, *off));
      continue;
    }
    std::vector<uint32_t> nodes = DomainNodes(snapshot, group.topology_key, domain);
    PlanPtr plan = PlanFor(key, group, member, domain, nodes, snapshot);
    std::string slot = plan->refusal.empty() ? SlotIn(plan->plan, member.uid) : "";
    auto is_slot = [&](size_t i) { return !slot.empty() && offered[i] == slot; };
    bool kept = std::any_of(positions.begin(), positions.end(), is_slot);
    bool nominated_try = positions.size() == 1 && offered[positions[0]] == member.nominated_node;
    std::string why = plan->refusal;
    if (why.empty() && !kept && !nominated_try) {
      // kube-scheduler's own filters refused the slot's node, or the member has no slot: it alone
      // among the domain's nodes offered, beside its siblings' slots.
      std::vector<uint32_t> here;
      for (size_t i : positions) here.push_back(static_cast<uint32_t>(snapshot.FindIndex(offered[i])));
      if (PlanPtr moved = PlaceAlone(plan, member, here, snapshot)) {
        Store(key, domain, moved);
        slot = SlotIn(moved->plan, member.uid);
        kept = true;
      }
    }
    if (why.empty()) {
      why = kept          ? fmt::format("this member's slot in the domain's plan is node {}", slot)
            : slot.empty() ? "this member fits on no node of the domain offered beside the other members' slots"
                           : fmt::format("this member's slot in the domain's plan is node {}, not offered, and it fits on "
                                         "no node offered beside the other members' slots", slot);
    }
    for (size_t i : positions) {
      if (kept && is_slot(i)) {
        result.kept.push_back(i);
      } else {
        result.failed.emplace_back(i, fmt::format("{} in {}={}: {}", name, group.topology_key, domain, why));
      }
    }
  }
  std::sort(result.kept.begin(), result.kept.end());
  return result;
}

DomainPlans::PlanPtr DomainPlans::PlanFor(const std::string& key, const PodGroup& group, const Pod& member,
                                          const std::string& domain, const std::vector<uint32_t>& positions,
                                          const inventory::InventorySnapshot& snapshot) const {
  PlanPtr kept;
  {
    MutexLock lock(&mu_);
    auto it = plans_.find({key, domain});
    if (it != plans_.end()) kept = it->second;
  }
  if (kept != nullptr && kept->version == snapshot.version()) return kept;  // one pass sees one plan
  const inventory::GroupTable::Members& members = snapshot.MembersOf(key);
  std::vector<Pod> pending;
  std::vector<std::string> uids;
  size_t without = 0;  // launchers, and members being bound
  auto consider = [&](const Pod& p) {
    uids.push_back(p.uid);
    if (!placement::AnalyzePod(p).asks_gpu() || inventory_->AllocationOf(p.uid)) {
      ++without;
    } else {
      pending.push_back(p);
    }
  };
  for (const std::shared_ptr<const Pod>& p : members.pending) consider(*p);
  if (std::find(uids.begin(), uids.end(), member.uid) == uids.end()) consider(member);  // filtered before the watch showed it
  std::sort(uids.begin(), uids.end());
  size_t others = members.bound + without;
  size_t needed = static_cast<size_t>(group.min_count) > others ? static_cast<size_t>(group.min_count) - others : 0;
  PlanPtr plan = kept != nullptr ? Revalidated(kept, pending, uids, needed, positions, snapshot) : nullptr;
  if (plan == nullptr) {
    auto made = std::make_shared<Plan>(Make(std::move(pending), needed, positions, snapshot));
    made->version = snapshot.version();
    made->members = std::move(uids);
    made->needed = needed;
    plan = made;
  }
  Store(key, domain, plan);
  return plan;
}

DomainPlans::PlanPtr DomainPlans::Revalidated(const PlanPtr& plan, const std::vector<Pod>& pending,
                                              const std::vector<std::string>& members, size_t needed,
                                              const std::vector<uint32_t>& positions,
                                              const inventory::InventorySnapshot& snapshot) const {
  if (!plan->refusal.empty() || plan->needed != needed || !SlotsFit(plan->plan, snapshot)) return nullptr;
  auto next = std::make_shared<Plan>(*plan);
  next->version = snapshot.version();
  if (members == plan->members) return next;
  // Members left (bound, being bound, deleted) give their slots up; new ones are planned alone
  // beside the slots, which stay where the pass may have steered members already.
  std::set<std::string, std::less<>> waiting;
  for (const Pod& p : pending) waiting.insert(p.uid);
  std::erase_if(next->plan.slots, [&](const placement::GangSlot& s) { return !waiting.contains(s.pod_uid); });
  next->members = members;
  PlanPtr out = next;
  for (const Pod& p : pending) {
    if (!SlotIn(out->plan, p.uid).empty()) continue;
    if (PlanPtr placed = PlaceAlone(out, p, positions, snapshot)) out = placed;  // else left out
  }
  return out->plan.slots.size() >= needed ? out : nullptr;
}

DomainPlans::Plan DomainPlans::Make(std::vector<Pod> pending, size_t needed, const std::vector<uint32_t>& positions,
                                    const inventory::InventorySnapshot& snapshot) const {
  Plan out;
  if (pending.size() < needed) {
    out.refusal = fmt::format("{} members wait to be placed, minCount needs {} more", pending.size(), needed);
    return out;
  }
  std::vector<std::string_view> only;
  for (uint32_t pos : positions) only.push_back(snapshot.nodes()[pos]->node.name);
  out.plan = PlanLeavingOutLargest(&pending, needed, snapshot, *options_, programs_, &only);
  if (!out.plan.fits && !pending.empty()) out.refusal = fmt::format("the gang does not fit in the domain: {}", out.plan.reason);
  return out;
}

DomainPlans::PlanPtr DomainPlans::PlaceAlone(const PlanPtr& plan, const Pod& member, const std::vector<uint32_t>& positions,
                                             const inventory::InventorySnapshot& snapshot) const {
  std::map<std::string, std::vector<const placement::GangSlot*>, std::less<>> siblings;
  for (const placement::GangSlot& s : plan->plan.slots) {
    if (s.pod_uid != member.uid && !s.placement.empty()) siblings[s.node].push_back(&s);
  }
  std::deque<placement::NodeState> views;  // stable addresses: nodes points into it
  std::vector<const placement::NodeState*> nodes;
  for (uint32_t pos : positions) {
    if (pos >= snapshot.nodes().size()) continue;
    const placement::NodeState& n = *snapshot.nodes()[pos];
    auto it = siblings.find(n.node.name);
    if (it == siblings.end()) {
      nodes.push_back(&n);
      continue;
    }
    views.push_back(n);
    for (const placement::GangSlot* s : it->second) placement::AddHold(SlotAllocation(*s), &views.back());
    views.back().generation = 0;  // a view no cache may keep
    nodes.push_back(&views.back());
  }
  placement::GangPlan one = PlanOn({member}, nodes, snapshot, *options_, programs_);
  if (!one.fits) return nullptr;
  auto next = std::make_shared<Plan>(*plan);
  std::erase_if(next->plan.slots, [&](const placement::GangSlot& s) { return s.pod_uid == member.uid; });
  next->plan.slots.push_back(std::move(one.slots[0]));
  return next;
}

void DomainPlans::Store(const std::string& key, const std::string& domain, const PlanPtr& plan) const {
  MutexLock lock(&mu_);
  if (plans_.size() > 4096) plans_.clear();   // bounded: the gangs still tried plan again
  if (slots_.size() > 65536) slots_.clear();  // far more than the members of the plans kept
  PlanPtr& at = plans_[{key, domain}];
  if (at != nullptr && at->version > plan->version) return;  // made meanwhile on a newer snapshot
  at = plan;
  for (const placement::GangSlot& s : plan->plan.slots) slots_[{s.pod_uid, s.node}] = s.placement;
}

std::optional<Placement> DomainPlans::SlotPlacement(std::string_view uid, std::string_view node) const {
  MutexLock lock(&mu_);
  auto it = slots_.find(std::make_pair(std::string(uid), std::string(node)));
  if (it == slots_.end()) return std::nullopt;
  return it->second;
}

std::vector<uint32_t> DomainPlans::DomainNodes(const inventory::InventorySnapshot& snapshot, const std::string& key,
                                               const std::string& value) const {
  MutexLock lock(&mu_);
  if (index_version_ != snapshot.version() || index_key_ != key) {
    index_.clear();
    for (uint32_t pos = 0; pos < snapshot.nodes().size(); ++pos) {
      const auto& labels = snapshot.nodes()[pos]->node.labels;
      if (auto it = labels.find(key); it != labels.end()) index_[it->second].push_back(pos);
    }
    index_version_ = snapshot.version();
    index_key_ = key;
  }
  auto it = index_.find(value);
  return it == index_.end() ? std::vector<uint32_t>{} : it->second;
}

}  // namespace gpusched::extender
