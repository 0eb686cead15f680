// File: gang_holds.h
//
// Gangs held (issue 33, docs/gangs.md): every pending member of a pod group that is a gang
// planned together (placement/gang_planner.h), all or nothing, and the plan held in the
// reservation book as one slot per member: a hold about the member, kept for it (its UID the
// holder), on the node and GPUs the plan gives it, written to the node's gpusched.io/holds like a
// defrag hold (hold_writer.h), so that every replica keeps it and a restart finds it. Every other
// pod sees a slot's GPUs as used; the member sees its own slot free (placement/what_if.h), and
// its siblings' slots as used.
//
// A pod's standing (StandingOf, pure, from the snapshot alone) decides its filter:
//   - kAlone: gangs are off, the pod names no group, its group is not declared a gang (or not
//     seen yet: a filter may come before the watch shows the group; the pod is then judged alone,
//     as before gangs), the group has a topology constraint (planned per domain instead, and not
//     held: domain_plans.h), or a member cannot be planned (a claim missing: judged alone, its
//     filter says so);
//   - kSlot: a slot is held for the pod on a node that is not cordoned: filter keeps that node
//     alone when it is offered and the pod fits there, and fails every node otherwise (judging
//     the member beside the other slots instead would let two members count on one free share);
//   - kUnplanned: the group is a gang and the pod has no slot: Plan() plans it, after which it is
//     kSlot, or kRefused with the reason for every node.
// Planning never moves a slot kube-scheduler may have used: it plans the members without a slot
// (none has one at first) beside the slots held, all of them, or, while minCount can still be
// reached, all but those that fit nowhere (left out and refused). A gang that cannot reach
// minCount so holds nothing: its slots are dropped. Members without GPUs (a launcher) need no
// slot. Plans are made when a member without a slot is filtered, and by Sweep for gangs never
// planned (in snapshot mode, or on the replica kube-scheduler calls: one that served a filter in
// the last minute), never again by Sweep once their holds ran out (gang_hold_ttl): a gang
// kube-scheduler does not try holds nothing. Slots end as their members bind (Inventory::Commit
// uses the hold), when their hold runs out, one by one when a slot no longer fits its member, and
// all together when the group is deleted or a member's deletion leaves it short of minCount
// (members deleted, their slots alone otherwise).
//
// With `gang.nominate` and a nominator, Sweep (on the replica that plans) also writes each pending
// member's slot node as its status.nominatedNodeName where it names another (pod_nominator.h,
// KEP-5278): kube-scheduler then tries the slot's node first, alone, and counts the member's CPU
// and memory there against pods of equal or lower priority. The inventory does not hold GPUs
// for a nomination to the node of the pod's own hold (its slot holds them).
//
// Thread-safe: planning is serialized by one mutex (it calls the inventory and the publisher
// while holding it); StandingOf takes no lock.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpusched/common/clock.h"
#include "gpusched/common/mutex.h"
#include "gpusched/extender/domain_steering.h"
#include "gpusched/extender/gang_domains.h"
#include "gpusched/extender/hold_writer.h"
#include "gpusched/extender/pod_nominator.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/inventory/snapshot.h"
#include "gpusched/placement/gang_planner.h"

namespace gpusched::extender {

struct GangStanding {
  enum class Kind { kAlone, kUnplanned, kSlot, kRefused };
  Kind kind = Kind::kAlone;
  std::string group;   // kUnplanned, kSlot, kRefused: "namespace/name" (a Workload's "namespace/workload/podGroup")
  std::string node;    // kSlot: the member's slot
  std::string reason;  // kRefused: why, naming the group
  bool unresolvable = false;  // kRefused: no eviction helps (members missing)
};

// The group `pod` names, if the snapshot declares it a gang (with or without a topology
// constraint); null otherwise. Points into the snapshot.
const PodGroup* DeclaredGangOf(const Pod& pod, const inventory::InventorySnapshot& snapshot);

// The standing of `pod` in `snapshot` (see above), with gangs on or off.
GangStanding StandingOf(const Pod& pod, const inventory::InventorySnapshot& snapshot, bool gangs);

// The hold gpusched keeps for pod `uid` in `snapshot` (a gang's slot, or room defrag made for
// it), never a nomination's, pointing into the snapshot; null if none.
const Allocation* SlotOf(std::string_view uid, const inventory::InventorySnapshot& snapshot);

// The snapshot's nodes (those `only` names, or all), each with the holds kept for `uids`
// released: their slots, and with `nominations` the holds of their nominations too. The rebuilt
// nodes live in *released, which must outlive the result.
std::vector<const placement::NodeState*> ReleasedNodes(const std::set<std::string, std::less<>>& uids,
                                                       const inventory::InventorySnapshot& snapshot,
                                                       const std::vector<std::string_view>* only, bool nominations,
                                                       std::deque<placement::NodeState>* released);

// Plans `pods` (pending members of one group) on the snapshot's nodes, with the slots held for
// them free (and their nominations' holds, unless the plan sends a nominated member elsewhere), under the configured node policy (its scorer over the snapshot's workload), members
// with DRA devices against the snapshot's DRA objects (selectors compiled into `programs`), or
// says why not. With `only`, on those nodes alone.
placement::GangPlan PlanPending(const std::vector<Pod>& pods, const inventory::InventorySnapshot& snapshot,
                                const ServiceOptions& options, dra::cel::ProgramCache* programs,
                                const std::vector<std::string_view>* only = nullptr);

// Plans `pods` on `nodes` (views of the snapshot's nodes), as PlanPending does.
placement::GangPlan PlanOn(const std::vector<Pod>& pods, const std::vector<const placement::NodeState*>& nodes,
                           const inventory::InventorySnapshot& snapshot, const ServiceOptions& options,
                           dra::cel::ProgramCache* programs);

// Plans *pods as PlanPending does (with `only`), leaving out the member asking the most GPU while
// they do not fit together and more than `needed` remain (leaving out the one that failed first
// could refuse a gang whose smaller members fit). *pods ends as the members of the last plan
// tried; with none, the plan is the default one (fits false, no reason).
placement::GangPlan PlanLeavingOutLargest(std::vector<Pod>* pods, size_t needed, const inventory::InventorySnapshot& snapshot,
                                          const ServiceOptions& options, dra::cel::ProgramCache* programs,
                                          const std::vector<std::string_view>* only = nullptr);

class GangHolds {
 public:
  // Each pointer must outlive this; `publisher` may be null (holds in this replica's memory).
  // `programs`: compiled CEL selectors for members with DRA devices, shared.
  // `clock` times renewals (the inventory's clock times the holds).
  // `nominator` (null: none) writes members' nominations when options->gang_nominate.
  // `domains` (null: none kept) has the domain kept for the first waiting gang
  // (gang_reservation.h): other gangs are planned off it.
  GangHolds(inventory::Inventory* inventory, const ServiceOptions* options, HoldPublisher* publisher, const Clock* clock,
            dra::cel::ProgramCache* programs, PodNominator* nominator = nullptr, const DomainFullness* domains = nullptr)
      : inventory_(inventory),
        options_(options),
        clock_(clock),
        programs_(programs),
        nominator_(options->gang_nominate ? nominator : nullptr),
        domains_(domains),
        writer_{.inventory = inventory, .publisher = publisher, .ttl = options->gang_hold_ttl} {}

  // Plans the group of `member` (whose standing was kUnplanned; it may be pending or only seen
  // in filter) and returns its standing after: kSlot, kRefused, or kAlone. With `offered`,
  // `member` alone is planned on those nodes (kube-scheduler's filters refused its slot's node).
  GangStanding Plan(const Pod& member, const std::vector<std::string_view>* offered = nullptr) const GPUSCHED_EXCLUDES(mu_);
  // `member` does not fit its slot any more (GPUs taken by a pod gpusched did not see): the slot
  // is dropped, for the member to be planned again.
  void SlotBroken(const Pod& member) const GPUSCHED_EXCLUDES(mu_);
  // True while member `uid`, whose slot on `node` fits it only once the pods being deleted there
  // are gone, may wait for them: half of gang_hold_ttl from the first time it was asked about
  // that node (pods stuck on finalizers must not keep a gang waiting for ever; the slot is then
  // broken). A slot moved to another node waits afresh.
  bool MayWait(const std::string& uid, const std::string& node) const GPUSCHED_EXCLUDES(mu_);
  // A member of the gang `member_key` was filtered now: kube-scheduler is trying it, and its
  // slots are renewed while it does.
  void Touch(const std::string& member_key) const GPUSCHED_EXCLUDES(touch_mu_);
  // Drops the slots of deleted groups and members (see above); renews the slots this replica made
  // that are past half their time when their gang was filtered within that half; with `plan`,
  // plans every gang never planned that has a pending member without a slot, and nominates the
  // members of this replica's plans to their slots (see above). Returns how many groups it planned.
  size_t Sweep(bool plan) const GPUSCHED_EXCLUDES(mu_, touch_mu_);

 private:
  struct Gang;  // a group's members as the snapshot shows them
  struct Refusal {
    uint64_t version = 0;  // the snapshot it was judged on
    GangStanding standing;
    int64_t until_wall_ms = 0;  // a wait for one domain the plan read ends then (PlanMembersLocked); 0: none
  };
  GangStanding PlanLocked(const Pod& member, const std::vector<std::string_view>* offered) const GPUSCHED_REQUIRES(mu_);
  // The domain kept for the first waiting gang on `snapshot` (gang_reservation.h), if one is.
  std::optional<DomainReservation> KeptOn(const inventory::InventorySnapshot& snapshot) const;
  // Plans and holds `gang`'s members without a slot; the standing of `member` after. A refusal
  // holds on `snapshot` until wall time *holds_until_ms (0: while the snapshot does), when a wait
  // for one domain that the plan read ends (gang_domains.h's DomainWait).
  GangStanding PlanMembersLocked(const Gang& gang, const Pod& member, const inventory::InventorySnapshot& snapshot,
                                 int64_t* holds_until_ms) const GPUSCHED_REQUIRES(mu_);
  // Plans and holds `member` alone on `offered`, beside the slots held; refuses it alone when it
  // fits there on none (nothing else changes: the offered nodes may be one domain's, or one
  // simulation's).
  // The nodes of the members of group instance `key` other than `except`: bound, being bound, or
  // holding a slot (topology domains: new members join theirs, gang_domains.h).
  std::vector<std::string> SiblingNodes(const std::string& key, std::string_view except,
                                        const inventory::InventorySnapshot& snapshot) const;
  GangStanding PlanOneLocked(const Pod& member, const std::string& group, const inventory::InventorySnapshot& snapshot,
                             const std::vector<std::string_view>& offered) const GPUSCHED_REQUIRES(mu_);
  // Ends every slot of `uids` here and on their nodes, as `snapshot` shows them.
  void DropSlotsLocked(const std::set<std::string, std::less<>>& uids, const inventory::InventorySnapshot& snapshot) const
      GPUSCHED_REQUIRES(mu_);
  // Holds `plan`'s slots for `pods`; on a failure drops those made and returns why.
  Status HoldLocked(const placement::GangPlan& plan, const std::vector<Pod>& pods) const GPUSCHED_REQUIRES(mu_);
  // True if pending member `pod` asks GPUs, has no slot in `snapshot` and is not being bound.
  bool AwaitsSlotLocked(const Pod& pod, const inventory::InventorySnapshot& snapshot) const GPUSCHED_REQUIRES(mu_);
  // Drops the slots of the gang planned under `key` whose group or members are gone; returns
  // false when none of its slots is left.
  bool KeepPlanLocked(const std::string& key, std::set<std::string, std::less<>>* uids,
                      const inventory::InventorySnapshot& snapshot) const GPUSCHED_REQUIRES(mu_);

  // Sweep's work under the lock but the nominations; returns how many groups it planned.
  size_t SweepLocked(bool plan) const GPUSCHED_REQUIRES(mu_) GPUSCHED_EXCLUDES(touch_mu_);
  // The nominations to write, at most 64: the pending members of this replica's plans whose
  // nominatedNodeName is not their slot's node, where it is empty or this replica's own (never
  // one kube-scheduler or another component set), with that node; and "" (clear) for members
  // whose slot is gone and whose nomination is still this replica's.
  std::vector<std::pair<Pod, std::string>> ToNominateLocked(const inventory::InventorySnapshot& snapshot) const
      GPUSCHED_REQUIRES(mu_);
  // Writes `nominations`, remembering those written.
  void Nominate(const std::vector<std::pair<Pod, std::string>>& nominations) const GPUSCHED_EXCLUDES(mu_);

  inventory::Inventory* inventory_;
  const ServiceOptions* options_;
  const Clock* clock_;
  dra::cel::ProgramCache* programs_;
  PodNominator* const nominator_;
  const DomainFullness* const domains_;
  const HoldWriter writer_;
  mutable Mutex mu_;
  // Refusals by member key and member UID, kept while the snapshot stays the same.
  mutable std::map<std::string, Refusal, std::less<>> refused_ GPUSCHED_GUARDED_BY(mu_);
  // The members each gang this replica planned holds slots for, by member key.
  mutable std::map<std::string, std::set<std::string, std::less<>>, std::less<>> planned_ GPUSCHED_GUARDED_BY(mu_);
  // Renews the slots of this replica's gangs filtered within half of gang_hold_ttl.
  void RenewLocked(const inventory::InventorySnapshot& snapshot) const GPUSCHED_REQUIRES(mu_) GPUSCHED_EXCLUDES(touch_mu_);
  // When each slot this replica holds was made or last renewed, by member UID.
  mutable std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> made_ GPUSCHED_GUARDED_BY(mu_);
  mutable Mutex touch_mu_;
  // When a member of each gang was last filtered, by member key.
  mutable std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> touched_ GPUSCHED_GUARDED_BY(touch_mu_);
  // Members with a slot found neither pending nor bound by the last sweep.
  mutable std::set<std::string, std::less<>> missing_ GPUSCHED_GUARDED_BY(mu_);
  // The gangs planned here at least once (Sweep plans a gang once), by member key.
  mutable std::set<std::string, std::less<>> attempted_ GPUSCHED_GUARDED_BY(mu_);
  // What this replica nominated a member to, by member UID, while its slot stands.
  struct Nomination {
    std::string key;   // the member's group (GroupTable::MemberKey)
    std::string node;
    std::chrono::steady_clock::time_point at;  // written then: not again for 30 s unless the slot moves
  };
  mutable std::map<std::string, Nomination, std::less<>> nominated_ GPUSCHED_GUARDED_BY(mu_);
  // When each member waiting for pods leaving its slot's node first waited (MayWait), by
  // "<UID> <node>".
  mutable std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> waiting_ GPUSCHED_GUARDED_BY(mu_);
  // The API server refused a nomination (RBAC, version): none is written any more.
  mutable std::atomic<bool> nominations_off_{false};
};

}  // namespace gpusched::extender
