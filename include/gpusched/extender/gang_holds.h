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
//     as before gangs), or the group has members of a kind not planned yet (DRA claims, KEP 5004);
//   - kSlot: a slot is held for the pod (node): filter keeps that node when offered and the pod
//     fits there, else the nodes where it fits beside every other slot;
//   - kUnplanned: the group is a gang and the pod has no slot: Plan() plans the group, after
//     which it is kSlot, or kRefused with the reason for every node.
// A plan is made when a member without a slot is filtered, and by Sweep (every few seconds and
// at load) for every gang with pending members and no plan; planning again frees the members'
// old slots in the what-if (WhatIf::Releasing), drops them, then holds the new ones. A gang that
// does not fit whole holds nothing. Slots end as their members bind (Inventory::Commit uses the
// hold), when their hold runs out (gang_hold_ttl; a member filtered after that is planned again),
// and all together when the group is deleted or a member with a slot is deleted.
//
// Thread-safe: planning is serialized by one mutex (it calls the inventory and the publisher
// while holding it); StandingOf takes no lock.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/extender/hold_writer.h"
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
};

// The standing of `pod` in `snapshot` (see above), with gangs on or off.
GangStanding StandingOf(const Pod& pod, const inventory::InventorySnapshot& snapshot, bool gangs);

// Plans `pods` (pending members of one group) on the snapshot's nodes, with the slots held for
// them free, under the configured node policy (its scorer over the snapshot's workload), or says
// why not: a member whose extended resources DRA may serve on the snapshot's nvidia-dra nodes
// (KEP 5004) makes the plan unplannable.
placement::GangPlan PlanPending(const std::vector<Pod>& pods, const inventory::InventorySnapshot& snapshot,
                                const ServiceOptions& options);

class GangHolds {
 public:
  // Each pointer must outlive this; `publisher` may be null (holds in this replica's memory).
  GangHolds(inventory::Inventory* inventory, const ServiceOptions* options, HoldPublisher* publisher)
      : inventory_(inventory),
        options_(options),
        writer_{.inventory = inventory, .publisher = publisher, .ttl = options->gang_hold_ttl} {}

  // Plans the group of `member` (whose standing was kUnplanned; it may be pending or only seen
  // in filter) and returns its standing after: kSlot, kRefused, or kAlone.
  GangStanding Plan(const Pod& member) const GPUSCHED_EXCLUDES(mu_);
  // Drops the plans of groups deleted or with a member deleted, then plans every gang with a
  // pending member without a slot. Returns how many groups it planned with success.
  size_t Sweep() const GPUSCHED_EXCLUDES(mu_);

 private:
  struct Refusal {
    uint64_t version = 0;  // the snapshot it was judged on
    std::string reason;
  };
  GangStanding PlanLocked(const Pod& member) const GPUSCHED_REQUIRES(mu_);
  // Ends every slot of `uids` here and on their nodes, as `snapshot` shows them.
  void DropSlotsLocked(const std::set<std::string, std::less<>>& uids, const inventory::InventorySnapshot& snapshot) const
      GPUSCHED_REQUIRES(mu_);
  // Holds `plan`'s slots for `pods`; on a failure drops those made and returns why.
  Status HoldLocked(const placement::GangPlan& plan, const std::vector<Pod>& pods) const GPUSCHED_REQUIRES(mu_);
  // True if pending member `pod` asks GPUs, has no slot in `snapshot` and is not being bound.
  bool AwaitsSlotLocked(const Pod& pod, const inventory::InventorySnapshot& snapshot) const GPUSCHED_REQUIRES(mu_);
  // True if the member with a slot `uid` is gone: neither pending nor bound.
  bool MemberGoneLocked(const std::string& uid) const GPUSCHED_REQUIRES(mu_);

  inventory::Inventory* inventory_;
  const ServiceOptions* options_;
  const HoldWriter writer_;
  mutable Mutex mu_;
  // Refusals by member key, kept while the snapshot stays the same.
  mutable std::map<std::string, Refusal, std::less<>> refused_ GPUSCHED_GUARDED_BY(mu_);
  // The members each group this replica planned holds slots for, by member key.
  mutable std::map<std::string, std::set<std::string, std::less<>>, std::less<>> planned_ GPUSCHED_GUARDED_BY(mu_);
};

}  // namespace gpusched::extender
