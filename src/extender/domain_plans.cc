// File: domain_plans.cc
//
// One plan per (gang, domain): the domain's nodes found by the group's topology label, the plan
// kept while those nodes and the group's pending members are unchanged, each member steered to
// its slot of the domain offered.
#include "gpusched/extender/domain_plans.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpusched/extender/gang_holds.h"
#include "gpusched/inventory/group_table.h"

namespace gpusched::extender {
namespace {

// The node of `uid`'s slot in `plan`, or "".
std::string SlotIn(const placement::GangPlan& plan, std::string_view uid) {
  for (const placement::GangSlot& s : plan.slots) {
    if (s.pod_uid == uid) return s.node;
  }
  return "";
}

// The snapshot positions of the nodes whose label `key` is `value`.
std::vector<uint32_t> DomainNodes(const inventory::InventorySnapshot& snapshot, const std::string& key, const std::string& value) {
  std::vector<uint32_t> out;
  for (uint32_t pos = 0; pos < snapshot.nodes().size(); ++pos) {
    const auto& labels = snapshot.nodes()[pos]->node.labels;
    auto it = labels.find(key);
    if (it != labels.end() && it->second == value) out.push_back(pos);
  }
  return out;
}

}  // namespace

const PodGroup* TopologyGangOf(const Pod& pod, const inventory::InventorySnapshot& snapshot) {
  if (!pod.group) return nullptr;
  auto it = snapshot.groups().find(GroupKey(pod.group->api, pod.namespace_name, pod.group->name));
  if (it == snapshot.groups().end() || !it->second.gang() || it->second.topology_key.empty()) return nullptr;
  return &it->second;
}

FilterResult DomainPlans::Steer(const Pod& member, const PodGroup& group, const std::vector<std::string_view>& offered,
                                const inventory::InventorySnapshot& snapshot) const {
  FilterResult result;
  std::string name = fmt::format("gang {}/{}", member.namespace_name, member.group->name);
  std::map<std::string, std::vector<size_t>> by_domain;  // offered positions
  for (size_t i = 0; i < offered.size(); ++i) {
    const placement::NodeState* n = snapshot.FindNode(offered[i]);
    auto label = n != nullptr ? n->node.labels.find(group.topology_key) : std::map<std::string, std::string, std::less<>>::const_iterator{};
    if (n == nullptr || label == n->node.labels.end()) {
      result.failed.emplace_back(i, fmt::format("{}: the node has no label {}, the group's topology key", name, group.topology_key));
      continue;
    }
    by_domain[label->second].push_back(i);
  }
  std::string key = inventory::GroupTable::MemberKey(member);
  for (const auto& [domain, positions] : by_domain) {
    std::shared_ptr<const Plan> plan = PlanFor(key, group, domain, DomainNodes(snapshot, group.topology_key, domain), snapshot);
    std::string slot = plan->refusal.empty() ? SlotIn(plan->plan, member.uid) : "";
    std::string why = !plan->refusal.empty() ? plan->refusal
                      : slot.empty()         ? "this member is left out of the domain's plan (it fits on no node beside the others)"
                                             : fmt::format("this member's slot in the domain's plan is node {}", slot);
    for (size_t i : positions) {
      if (!slot.empty() && offered[i] == slot) {
        result.kept.push_back(i);
      } else {
        result.failed.emplace_back(i, fmt::format("{} in {}={}: {}", name, group.topology_key, domain, why));
      }
    }
  }
  std::sort(result.kept.begin(), result.kept.end());
  return result;
}

std::shared_ptr<const DomainPlans::Plan> DomainPlans::PlanFor(const std::string& key, const PodGroup& group, const std::string& domain,
                                                              const std::vector<uint32_t>& positions,
                                                              const inventory::InventorySnapshot& snapshot) const {
  const inventory::GroupTable::Members& members = snapshot.MembersOf(key);
  std::vector<Pod> pending;
  std::vector<std::string> uids;
  for (const std::shared_ptr<const Pod>& p : members.pending) {
    if (!placement::AnalyzePod(*p).asks_gpu() || inventory_->AllocationOf(p->uid)) continue;  // launchers; being bound
    pending.push_back(*p);
    uids.push_back(p->uid);
  }
  std::sort(uids.begin(), uids.end());
  size_t others = members.bound + members.pending.size() - pending.size();
  size_t needed = static_cast<size_t>(group.min_count) > others ? static_cast<size_t>(group.min_count) - others : 0;
  std::vector<std::pair<uint32_t, uint64_t>> nodes;
  for (uint32_t pos : positions) nodes.emplace_back(pos, snapshot.nodes()[pos]->generation);
  {
    MutexLock lock(&mu_);
    auto it = plans_.find({key, domain});
    if (it != plans_.end() && it->second->nodes == nodes && it->second->members == uids) return it->second;
  }
  auto made = std::make_shared<Plan>(Make(std::move(pending), needed, domain, positions, snapshot));
  made->nodes = std::move(nodes);
  made->members = std::move(uids);
  MutexLock lock(&mu_);
  if (plans_.size() > 4096) {  // bounded: the gangs still tried plan again
    plans_.clear();
    slots_.clear();
  }
  plans_[{key, domain}] = made;
  for (const placement::GangSlot& s : made->plan.slots) slots_[{s.pod_uid, s.node}] = s.placement;
  return made;
}

std::optional<Placement> DomainPlans::SlotPlacement(std::string_view uid, std::string_view node) const {
  MutexLock lock(&mu_);
  auto it = slots_.find(std::make_pair(std::string(uid), std::string(node)));
  if (it == slots_.end()) return std::nullopt;
  return it->second;
}

DomainPlans::Plan DomainPlans::Make(std::vector<Pod> pending, size_t needed, const std::string& domain,
                                    const std::vector<uint32_t>& positions, const inventory::InventorySnapshot& snapshot) const {
  Plan out;
  if (pending.size() < needed) {
    out.refusal = fmt::format("{} members wait to be placed, minCount needs {} more", pending.size(), needed);
    return out;
  }
  std::vector<std::string_view> only;
  for (uint32_t pos : positions) only.push_back(snapshot.nodes()[pos]->node.name);
  placement::GangDra dra = GangDraOf(snapshot, *options_, programs_);
  while (true) {
    out.plan = PlanPending(pending, snapshot, *options_, programs_, &only);
    if (out.plan.fits || out.plan.unplannable || pending.size() <= needed) break;
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(LargestDemand(pending, dra)));
  }
  if (!out.plan.fits && !pending.empty()) out.refusal = fmt::format("the gang does not fit in the domain: {}", out.plan.reason);
  return out;
}

}  // namespace gpusched::extender
