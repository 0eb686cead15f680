// File: gang_holds.cc
//
// Gangs held: a pod's standing read from the snapshot; a group's members without a slot planned
// beside the slots held (or one member among the nodes offered) and held; by the sweep, the slots
// of deleted groups and members dropped, those of gangs still tried renewed, and gangs never
// planned planned.
#include "gpusched/extender/gang_holds.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "gpusched/common/log.h"
#include "gpusched/dra/extended_resources.h"
#include "gpusched/extender/gang_domains.h"
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

// True if `h` is a hold gpusched made (a slot, a defrag hold), not a nomination's.
bool Made(const Allocation& h) { return h.origin != AllocationOrigin::kNominated; }

// The node of the slot held for `uid` in `snapshot`, or "".
std::string SlotNode(std::string_view uid, const inventory::InventorySnapshot& snapshot) {
  const Allocation* slot = SlotOf(uid, snapshot);
  return slot != nullptr ? slot->node_name : "";
}

// The held nodes of `snapshot` that hold a slot of one of `uids`; with `nominations`, or a hold
// of a nomination of one of them.
std::set<std::string, std::less<>> NodesHolding(const Uids& uids, const inventory::InventorySnapshot& snapshot,
                                                bool nominations = false) {
  std::set<std::string, std::less<>> out;
  for (const std::string& name : snapshot.held_nodes()) {
    const placement::NodeState* node = snapshot.FindNode(name);
    if (node == nullptr) continue;
    for (const Allocation& h : node->holds) {
      if (uids.contains(h.pod_uid) && (nominations || Made(h))) out.insert(name);
    }
  }
  return out;
}

// True if `plan` (of `pods`, slots in their order) sends a member somewhere other than the node of
// its nomination's hold.
bool MovesANominatedMember(const placement::GangPlan& plan, const std::vector<Pod>& pods, const inventory::InventorySnapshot& snapshot) {
  for (size_t i = 0; i < pods.size() && i < plan.slots.size(); ++i) {
    const Pod& p = pods[i];
    if (p.nominated_node.empty() || plan.slots[i].node == p.nominated_node) continue;
    const placement::NodeState* node = snapshot.FindNode(p.nominated_node);
    if (node == nullptr) continue;
    for (const Allocation& h : node->holds) {
      if (h.pod_uid == p.uid && !Made(h)) return true;
    }
  }
  return false;
}

// The member key a group instance's key names its group by: "PodGroup/ns/name#replica" is of
// group "PodGroup/ns/name".
std::string_view GroupOfMemberKey(std::string_view member_key) { return member_key.substr(0, member_key.find('#')); }

// The node of `uid`'s slot if its node takes pods (not cordoned), or "".
std::string UsableSlot(std::string_view uid, const inventory::InventorySnapshot& snapshot) {
  std::string node = SlotNode(uid, snapshot);
  if (node.empty()) return node;
  const placement::NodeState* state = snapshot.FindNode(node);
  return state == nullptr || state->node.schedulability.unschedulable ? "" : node;
}

// The DRA inputs of a plan on `snapshot`: its DRA objects, selectors compiled into `programs`.
placement::GangDra GangDraOf(const inventory::InventorySnapshot& snapshot, const ServiceOptions& options,
                             dra::cel::ProgramCache* programs) {
  return placement::GangDra{.state = &snapshot.dra(), .programs = programs, .options = options.dra,
                            .extended_resources = options.dra_extended_resources};
}

// The member of `pods` asking the most GPU (GangDemand).
size_t LargestDemand(const std::vector<Pod>& pods, const placement::GangDra& dra) {
  size_t best = 0;
  int64_t most = -1;
  for (size_t i = 0; i < pods.size(); ++i) {
    int64_t d = placement::GangDemand(placement::GangMember{.pod = &pods[i], .request = placement::AnalyzePod(pods[i])}, dra);
    if (d > most) {
      best = i;
      most = d;
    }
  }
  return best;
}

}  // namespace

// A gang's members as a snapshot shows them, for its plan.
struct GangHolds::Gang {
  std::string key;   // GroupTable::MemberKey
  std::string name;  // "namespace/name"
  size_t min_count = 0;
  std::string required;  // the label key one domain of which must hold it (gang_domains.h); "" none
  std::vector<Pod> unslotted;  // pending, asking GPUs, without a usable slot, not being bound
  Uids slotted;                // pending with a usable slot
  size_t others = 0;           // members counted but not to plan: slotted, without GPUs, being bound, bound
};

const Allocation* SlotOf(std::string_view uid, const inventory::InventorySnapshot& snapshot) {
  for (const std::string& name : snapshot.held_nodes()) {
    const placement::NodeState* node = snapshot.FindNode(name);
    if (node == nullptr) continue;
    for (const Allocation& h : node->holds) {
      if (h.pod_uid == uid && Made(h)) return &h;
    }
  }
  return nullptr;
}

std::vector<const placement::NodeState*> ReleasedNodes(const Uids& uids, const inventory::InventorySnapshot& snapshot,
                                                       const std::vector<std::string_view>* only, bool nominations,
                                                       std::deque<placement::NodeState>* released) {
  std::set<std::string, std::less<>> holding = NodesHolding(uids, snapshot, nominations);
  std::set<std::string_view> allowed;
  if (only != nullptr) allowed.insert(only->begin(), only->end());
  std::vector<const placement::NodeState*> nodes;
  nodes.reserve(snapshot.nodes().size());
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    if (only != nullptr && !allowed.contains(n->node.name)) continue;
    if (!holding.contains(n->node.name)) {
      nodes.push_back(n.get());
      continue;
    }
    Uids here;  // the members whose holds here are released
    for (const Allocation& h : n->holds) {
      if (uids.contains(h.pod_uid) && (nominations || Made(h))) here.insert(h.pod_uid);
    }
    released->push_back(std::move(placement::WhatIf(*n).Releasing(here)).Take());
    nodes.push_back(&released->back());
  }
  return nodes;
}

const PodGroup* DeclaredGangOf(const Pod& pod, const inventory::InventorySnapshot& snapshot) { return DeclaredGang(pod, snapshot); }

GangStanding StandingOf(const Pod& pod, const inventory::InventorySnapshot& snapshot, bool gangs) {
  if (!gangs) return {};
  const PodGroup* group = DeclaredGang(pod, snapshot);
  // A topology constraint makes kube-scheduler try one placement per domain: one plan for all
  // would be moved by each domain's pass. Such gangs are planned per domain (domain_plans.h).
  if (group == nullptr || !group->topology_key.empty()) return {};
  GangStanding s{.kind = GangStanding::Kind::kUnplanned, .group = pod.namespace_name + "/" + pod.group->name};
  s.node = UsableSlot(pod.uid, snapshot);
  if (!s.node.empty()) s.kind = GangStanding::Kind::kSlot;
  return s;
}

placement::GangPlan PlanPending(const std::vector<Pod>& pods, const inventory::InventorySnapshot& snapshot,
                                const ServiceOptions& options, dra::cel::ProgramCache* programs,
                                const std::vector<std::string_view>* only) {
  Uids uids;
  for (const Pod& p : pods) uids.insert(p.uid);
  // Every hold kept for a member is room for the members: its slot, and a nomination's (a member
  // kube-scheduler nominated after a preemption). The room of a nomination stays held while its
  // member is nominated there, so a plan that sends that member elsewhere is made again without it.
  std::deque<placement::NodeState> released;
  placement::GangPlan plan = PlanOn(pods, ReleasedNodes(uids, snapshot, only, /*nominations=*/true, &released), snapshot, options, programs);
  if (!plan.fits || !MovesANominatedMember(plan, pods, snapshot)) return plan;
  std::deque<placement::NodeState> slots_only;
  return PlanOn(pods, ReleasedNodes(uids, snapshot, only, /*nominations=*/false, &slots_only), snapshot, options, programs);
}

placement::GangPlan PlanLeavingOutLargest(std::vector<Pod>* pods, size_t needed, const inventory::InventorySnapshot& snapshot,
                                          const ServiceOptions& options, dra::cel::ProgramCache* programs,
                                          const std::vector<std::string_view>* only) {
  placement::GangPlan plan;
  while (!pods->empty()) {
    plan = PlanPending(*pods, snapshot, options, programs, only);
    if (plan.fits || plan.unplannable || pods->size() <= needed) break;
    pods->erase(pods->begin() + static_cast<std::ptrdiff_t>(LargestDemand(*pods, GangDraOf(snapshot, options, programs))));
  }
  return plan;
}

placement::GangPlan PlanOn(const std::vector<Pod>& pods, const std::vector<const placement::NodeState*>& nodes,
                           const inventory::InventorySnapshot& snapshot, const ServiceOptions& options,
                           dra::cel::ProgramCache* programs) {
  std::vector<placement::GangMember> members;
  for (const Pod& p : pods) members.push_back(placement::GangMember{.pod = &p, .request = placement::AnalyzePod(p)});
  scoring::TargetWorkload workload = placement::ObservedWorkload(nodes);
  StatusOr<std::unique_ptr<scoring::Scorer>> scorer = scoring::MakeScorer(options.node_policy, &workload);
  if (!scorer.ok()) scorer = scoring::MakeScorer("binpack", &workload);  // the configuration was checked at start
  return placement::PlanGang(members, nodes, options.placement, **scorer, GangDraOf(snapshot, options, programs));
}

std::vector<std::string> GangHolds::SiblingNodes(const std::string& key, std::string_view except,
                                                 const inventory::InventorySnapshot& snapshot) const {
  std::vector<std::string> nodes;
  const inventory::GroupTable::Members& members = snapshot.MembersOf(key);
  for (const std::string& uid : members.bound_uids) {
    if (std::optional<Allocation> a = inventory_->AllocationOf(uid); a && uid != except) nodes.push_back(a->node_name);
  }
  for (const std::shared_ptr<const Pod>& p : members.pending) {
    if (p->uid == except) continue;
    if (std::optional<Allocation> a = inventory_->AllocationOf(p->uid)) {
      nodes.push_back(a->node_name);  // being bound
    } else if (const Allocation* slot = SlotOf(p->uid, snapshot)) {
      nodes.push_back(slot->node_name);
    }
  }
  return nodes;
}

GangStanding GangHolds::Plan(const Pod& member, const std::vector<std::string_view>* offered) const {
  MutexLock lock(&mu_);
  return PlanLocked(member, offered);
}

GangStanding GangHolds::PlanLocked(const Pod& member, const std::vector<std::string_view>* offered) const {
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  GangStanding s = StandingOf(member, *snapshot, true);
  // Planned meanwhile, or no longer a gang; with `offered`, the member's slot is moved, or stays.
  if (s.kind != GangStanding::Kind::kUnplanned && !(offered != nullptr && s.kind == GangStanding::Kind::kSlot)) return s;
  const PodGroup* declared = DeclaredGang(member, *snapshot);
  Gang gang{.key = inventory::GroupTable::MemberKey(member), .name = s.group,
            .min_count = static_cast<size_t>(declared->min_count), .required = declared->required_topology};
  attempted_.insert(gang.key);
  std::string refusal_key = gang.key + " " + member.uid;
  auto r = offered == nullptr ? refused_.find(refusal_key) : refused_.end();  // a plan on some nodes is not cached
  if (r != refused_.end() && r->second.version == snapshot->version() &&
      (r->second.until_wall_ms == 0 || clock_->WallMs() < r->second.until_wall_ms)) {
    return r->second.standing;  // judged on this snapshot, and no wait for a domain has ended since
  }
  if (offered != nullptr) return PlanOneLocked(member, s.group, *snapshot, *offered);
  const inventory::GroupTable::Members& members = snapshot->MembersOf(gang.key);
  std::vector<const Pod*> pending;
  for (const std::shared_ptr<const Pod>& p : members.pending) pending.push_back(p.get());
  if (std::none_of(pending.begin(), pending.end(), [&](const Pod* p) { return p->uid == member.uid; })) pending.push_back(&member);
  gang.others = members.bound;
  for (const Pod* p : pending) {
    if (inventory_->AllocationOf(p->uid) || !placement::AnalyzePod(*p).asks_gpu()) {
      ++gang.others;  // being bound, or without GPUs (a launcher): no slot
    } else if (!UsableSlot(p->uid, *snapshot).empty()) {
      gang.slotted.insert(p->uid);
      ++gang.others;
    } else {
      gang.unslotted.push_back(*p);
    }
  }
  int64_t holds_until_ms = 0;
  GangStanding out = PlanMembersLocked(gang, member, *snapshot, &holds_until_ms);
  if (out.kind != GangStanding::Kind::kSlot) {
    if (refused_.size() > 4096) refused_.clear();  // bounded: old refusals are of old snapshots anyway
    refused_[refusal_key] = Refusal{.version = inventory_->Snapshot()->version(), .standing = out, .until_wall_ms = holds_until_ms};
  }
  return out;
}

GangStanding GangHolds::PlanOneLocked(const Pod& member, const std::string& group, const inventory::InventorySnapshot& snapshot,
                                      const std::vector<std::string_view>& offered) const {
  // A gang that requires a domain: the member stays in its siblings' domain.
  const PodGroup* declared = DeclaredGang(member, snapshot);
  std::vector<std::string_view> allowed = offered;
  if (declared != nullptr && !declared->required_topology.empty()) {
    std::vector<std::string> beside = SiblingNodes(inventory::GroupTable::MemberKey(member), member.uid, snapshot);
    allowed = InRequiredDomain(offered, declared->required_topology, beside, snapshot);
  }
  placement::GangPlan plan = PlanPending({member}, snapshot, *options_, programs_, &allowed);
  Status held = plan.fits ? HoldLocked(plan, {member}) : OkStatus();
  GangStanding after = StandingOf(member, *inventory_->Snapshot(), true);
  if (plan.fits && held.ok() && after.kind == GangStanding::Kind::kSlot) return after;
  std::string why = plan.fits ? held.message() : plan.reason;
  return {.kind = GangStanding::Kind::kRefused, .group = group,
          .reason = fmt::format("gang {}: this member fits on none of the nodes offered beside the other slots: {}", group, why)};
}

std::optional<DomainReservation> GangHolds::KeptOn(const inventory::InventorySnapshot& snapshot) const {
  if (domains_ == nullptr || !ReservesForGangs(*options_)) return std::nullopt;
  return domains_->Of(snapshot, options_->topology_levels.front())->reserved;
}

GangStanding GangHolds::PlanMembersLocked(const Gang& gang, const Pod& member, const inventory::InventorySnapshot& snapshot,
                                          int64_t* holds_until_ms) const {
  GangStanding refused{.kind = GangStanding::Kind::kRefused, .group = gang.name};
  size_t have = gang.unslotted.size() + gang.others;
  Uids all = gang.slotted;
  for (const Pod& p : gang.unslotted) all.insert(p.uid);
  if (have < gang.min_count) {
    DropSlotsLocked(all, snapshot);  // it cannot start: it holds nothing
    refused.reason = fmt::format("gang {}: {} of its {} members exist; none is placed before all {} can be", gang.name, have,
                                 gang.min_count, gang.min_count);
    refused.unresolvable = true;
    return refused;
  }
  // Members that fit nowhere beside the others are left out while minCount can still be reached.
  size_t needed = gang.min_count > gang.others ? gang.min_count - gang.others : 0;
  std::vector<std::string> beside = SiblingNodes(gang.key, "", snapshot);  // new members join their domain
  std::optional<DomainReservation> kept = KeptOn(snapshot);
  DomainWait wait = DomainWaitOf(gang.unslotted, *options_, kept ? &*kept : nullptr, clock_->WallMs());
  GangPlacement placed = PlanGangInDomains(gang.unslotted, needed, gang.required, beside, wait, snapshot, *options_, programs_,
                                           kept ? &*kept : nullptr);
  *holds_until_ms = placed.waiting ? placed.waits_until_ms : wait.NextEnd();
  std::vector<Pod>& planning = placed.planned;
  const placement::GangPlan& plan = placed.plan;
  if (plan.unplannable) return {};  // not the planner's: each member is judged alone
  bool planned = plan.fits || (planning.empty() && needed == 0);
  if (!planned) {
    // Waiting for one domain, the gang is not short of room: no eviction is to be made for it.
    refused.unresolvable = placed.waiting;
    DropSlotsLocked(all, snapshot);  // it cannot start: it holds nothing
    refused.reason = gang.slotted.empty() ? fmt::format("gang {}: {}", gang.name, plan.reason)
                                          : fmt::format("gang {}: {} members hold slots; of the {} others, {}", gang.name,
                                                        gang.slotted.size(), planning.size(), plan.reason);
    return refused;
  }
  if (!planning.empty()) {
    if (Status held = HoldLocked(plan, planning); !held.ok()) {
      refused.reason = fmt::format("gang {}: its plan could not be held: {}", gang.name, held.message());
      return refused;
    }
    for (const Pod& p : planning) planned_[gang.key].insert(p.uid);
  }
  GangStanding after = StandingOf(member, *inventory_->Snapshot(), true);
  if (after.kind == GangStanding::Kind::kSlot) return after;
  refused.reason = fmt::format("gang {}: {}/{} is left out: it fits on no node beside the members planned, and the gang can "
                               "start without it",
                               gang.name, member.namespace_name, member.name);
  return refused;
}

void GangHolds::DropSlotsLocked(const Uids& uids, const inventory::InventorySnapshot& snapshot) const {
  // A slot made again waits afresh for pods leaving its node (MayWait).
  std::erase_if(waiting_, [&](const auto& kv) { return uids.contains(kv.first.substr(0, kv.first.find(' '))); });
  for (const std::string& name : NodesHolding(uids, snapshot)) {
    const placement::NodeState* node = snapshot.FindNode(name);
    for (const Allocation& h : node->holds) {
      if (!uids.contains(h.pod_uid) || !Made(h)) continue;
      writer_.Unhold(name, h.pod_uid);
      made_.erase(h.pod_uid);
    }
  }
}

Status GangHolds::HoldLocked(const placement::GangPlan& plan, const std::vector<Pod>& pods) const {
  for (size_t i = 0; i < plan.slots.size(); ++i) {
    const placement::GangSlot& slot = plan.slots[i];
    if (slot.placement.empty()) continue;  // a member without GPUs: nothing to hold
    Allocation about{.pod_uid = pods[i].uid, .pod_namespace = pods[i].namespace_name, .pod_name = pods[i].name};
    Status s = writer_.Hold(about.pod_uid, about, slot.node, slot.placement);
    if (s.ok()) {
      made_[about.pod_uid] = clock_->Now();
      std::erase_if(waiting_, [&](const auto& kv) { return kv.first.starts_with(about.pod_uid + " "); });  // a new slot waits afresh
      continue;
    }
    for (size_t k = 0; k < i; ++k) {
      if (plan.slots[k].placement.empty()) continue;
      writer_.Unhold(plan.slots[k].node, pods[k].uid);
      made_.erase(pods[k].uid);
    }
    return s;
  }
  return OkStatus();
}

void GangHolds::SlotBroken(const Pod& member) const {
  MutexLock lock(&mu_);
  DropSlotsLocked(Uids{member.uid}, *inventory_->Snapshot());
}

bool GangHolds::MayWait(const std::string& uid, const std::string& node) const {
  auto now = clock_->Now();
  auto limit = std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_->gang_hold_ttl) / 2;
  MutexLock lock(&mu_);
  std::erase_if(waiting_, [&](const auto& kv) { return now - kv.second >= 4 * limit; });  // long over: forgotten
  auto [it, first] = waiting_.try_emplace(uid + " " + node, now);
  return first || now - it->second < limit;
}

bool GangHolds::KeepPlanLocked(const std::string& key, Uids* uids, const inventory::InventorySnapshot& snapshot) const {
  auto group = snapshot.groups().find(GroupOfMemberKey(key));
  if (group == snapshot.groups().end() || !group->second.gang()) {
    DropSlotsLocked(*uids, snapshot);
    return false;
  }
  const inventory::GroupTable::Members& members = snapshot.MembersOf(key);
  Uids pending;
  for (const std::shared_ptr<const Pod>& p : members.pending) pending.insert(p->uid);
  // A member that left the watch of pending pods may be seen bound only by the next event of
  // the watch of pods: it is gone when two sweeps in a row find it neither pending nor bound.
  Uids gone;
  for (const std::string& uid : *uids) {
    bool missing = !pending.contains(uid) && !inventory_->AllocationOf(uid);
    if (missing && !missing_.insert(uid).second) gone.insert(uid);
    if (!missing) missing_.erase(uid);
  }
  for (const std::string& uid : gone) missing_.erase(uid);
  if (!gone.empty()) {
    if (members.pending.size() + members.bound < static_cast<size_t>(group->second.min_count)) {
      DropSlotsLocked(*uids, snapshot);  // short of minCount now: it holds nothing
      return false;
    }
    DropSlotsLocked(gone, snapshot);
    for (const std::string& uid : gone) uids->erase(uid);
  }
  return !NodesHolding(*uids, snapshot).empty();
}

bool GangHolds::AwaitsSlotLocked(const Pod& pod, const inventory::InventorySnapshot& snapshot) const {
  // A member without GPUs (a launcher) never has a slot, nor does one being bound.
  return placement::AnalyzePod(pod).asks_gpu() && StandingOf(pod, snapshot, true).kind == GangStanding::Kind::kUnplanned &&
         !inventory_->AllocationOf(pod.uid);
}

void GangHolds::Touch(const std::string& member_key) const {
  MutexLock lock(&touch_mu_);
  touched_[member_key] = clock_->Now();
}

void GangHolds::RenewLocked(const inventory::InventorySnapshot& snapshot) const {
  auto now = clock_->Now();
  auto half = std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_->gang_hold_ttl) / 2;
  std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> touched;
  {
    MutexLock lock(&touch_mu_);
    std::erase_if(touched_, [&](const auto& kv) { return now - kv.second >= half; });
    touched = touched_;
  }
  for (const auto& [key, uids] : planned_) {
    if (!touched.contains(key)) continue;  // kube-scheduler is not trying it: its slots run out
    for (const std::string& name : NodesHolding(uids, snapshot)) {
      for (const Allocation& h : snapshot.FindNode(name)->holds) {
        auto made = made_.find(h.pod_uid);
        if (!uids.contains(h.pod_uid) || !Made(h) || made == made_.end() || now - made->second < half) continue;
        Allocation about{.pod_uid = h.pod_uid, .pod_namespace = h.pod_namespace, .pod_name = h.pod_name};
        if (writer_.Hold(h.pod_uid, about, name, h.placement).ok()) made->second = now;  // in place, for another TTL
      }
    }
  }
}

size_t GangHolds::Sweep(bool plan) const {
  if (!options_->gangs) return 0;
  std::vector<std::pair<Pod, std::string>> nominations;
  size_t planned = 0;
  {
    MutexLock lock(&mu_);
    planned = SweepLocked(plan);
    if (plan && nominator_ != nullptr) nominations = ToNominateLocked(*inventory_->Snapshot());
  }
  Nominate(nominations);  // API writes, outside the lock filter plans under
  return planned;
}

std::vector<std::pair<Pod, std::string>> GangHolds::ToNominateLocked(const inventory::InventorySnapshot& snapshot) const {
  constexpr size_t kMaxWrites = 64;  // per sweep: the writes are serial, on the serve loop
  auto now = clock_->Now();
  std::vector<std::pair<Pod, std::string>> out;
  auto pending = [&](const std::string& key, std::string_view uid) -> const Pod* {
    for (const std::shared_ptr<const Pod>& p : snapshot.MembersOf(key).pending) {
      if (p->uid == uid) return p.get();
    }
    return nullptr;
  };
  // Nominations this replica wrote whose slot is gone: cleared where the pod still names them.
  for (auto it = nominated_.begin(); it != nominated_.end();) {
    const Pod* p = pending(it->second.key, it->first);
    if (p != nullptr && !UsableSlot(p->uid, snapshot).empty()) {
      ++it;
      continue;
    }
    if (p != nullptr && p->nominated_node == it->second.node) {
      if (out.size() >= kMaxWrites) {  // cleared at a later sweep
        ++it;
        continue;
      }
      out.emplace_back(*p, "");
    }
    it = nominated_.erase(it);
  }
  for (const auto& [key, uids] : planned_) {
    for (const std::string& uid : uids) {
      const Pod* p = pending(key, uid);
      std::string node = p != nullptr ? UsableSlot(uid, snapshot) : "";
      if (node.empty() || p->nominated_node == node || out.size() >= kMaxWrites) continue;
      auto written = nominated_.find(uid);
      bool ours = written != nominated_.end() && written->second.node == p->nominated_node;
      if (!p->nominated_node.empty() && !ours) continue;  // kube-scheduler's (a preemption) or another component's
      if (written != nominated_.end() && written->second.node == node && now - written->second.at < std::chrono::seconds(30)) continue;
      out.emplace_back(*p, node);
    }
  }
  return out;
}

void GangHolds::Nominate(const std::vector<std::pair<Pod, std::string>>& nominations) const {
  for (const auto& [pod, node] : nominations) {
    if (nominations_off_.load()) return;
    Status s = nominator_->Nominate(pod, node);
    if (s.code() == StatusCode::kFailedPrecondition) {  // refused: RBAC, or a version that does not take it
      nominations_off_.store(true);
      log::Error("gang.nominate: the API server refuses to set status.nominatedNodeName ({}); no more nominations are written",
                 s.message());
      return;
    }
    if (!s.ok()) {
      log::Warning("gang slot of {}/{} not suggested to kube-scheduler: {}", pod.namespace_name, pod.name, s.message());
    }
    // An outcome unknown may have been written: counted as this replica's, so that it is cleared
    // with the slot (a clear of unknown outcome is tried again).
    bool unknown = s.code() == StatusCode::kUnavailable;
    if ((node.empty() && s.ok()) || (!s.ok() && !unknown)) continue;  // cleared; or refused, retried at the next sweep
    MutexLock lock(&mu_);
    nominated_[pod.uid] = Nomination{.key = inventory::GroupTable::MemberKey(pod), .node = node.empty() ? pod.nominated_node : node,
                                     .at = clock_->Now()};
  }
}

size_t GangHolds::SweepLocked(bool plan) const {
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  for (auto it = planned_.begin(); it != planned_.end();) {
    it = KeepPlanLocked(it->first, &it->second, *snapshot) ? std::next(it) : planned_.erase(it);
  }
  std::erase_if(attempted_, [&](const std::string& key) { return !snapshot->group_members().contains(key); });
  RenewLocked(*inventory_->Snapshot());
  if (!plan) return 0;
  size_t planned = 0;
  snapshot = inventory_->Snapshot();
  for (const auto& [key, members] : snapshot->group_members()) {
    if (attempted_.contains(key)) continue;  // planned once: again only when a member's filter asks
    for (const std::shared_ptr<const Pod>& p : members.pending) {
      if (!AwaitsSlotLocked(*p, *snapshot)) continue;
      PlanLocked(*p, nullptr);
      if (planned_.contains(key)) ++planned;  // held, even if `p` itself was left out
      break;  // one plan covers the group's pending members
    }
  }
  return planned;
}

}  // namespace gpusched::extender
