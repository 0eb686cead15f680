// File: gang_reservation.h
//
// A domain kept for the gang that waits first (docs/topology.md), after Slurm's backfill: while a
// gang cannot be placed, the domain of the lowest topology level with the most whole nodes, among
// those that could hold it when empty, takes no new pod from outside gangs of the gang's priority
// or lower, so that it drains as its pods end and the gang gets one domain. Without it, each node
// that frees up is taken by a small pod or a CPU-only job, and a gang of whole nodes waits until it
// spans domains. Nothing is evicted, and nothing is written: filter refuses those pods the
// domain's nodes (domain_steering.h), and the gang's own plan is gang_domains.h's.
//
// A gang waits when it is declared a gang (not one kube-scheduler places per domain of another
// level: PlacedPerOtherLevel), its members reach its minCount, none is bound, holds a slot
// or has scheduling gates (Kueue's: not in kube-scheduler's queue yet), and its pending members
// ask a known number of GPUs (not through claims). The first is the one
// kube-scheduler's queue pops first: the highest priority, then the oldest creationTimestamp,
// then the group's name. Computed from the snapshot alone, so every replica and a restarted one
// agree. Between a member's bind and the watch showing it bound, a gang that was placed may look
// waiting for a moment: a reservation then lasts until the watch catches up.
//
// Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "gpusched/inventory/snapshot.h"

namespace gpusched::extender {
struct DomainIndex;  // domain_steering.h
}  // namespace gpusched::extender

namespace gpusched::extender {

struct DomainReservation {
  std::string domain;    // the label value of the level's key
  std::string gang;      // "namespace/name" of the gang it is kept for
  std::string member_key;  // its GroupTable::MemberKey (API, name and replica): what tells gangs apart
  int32_t priority = 0;  // the gang's (its highest pending member's): pods of higher priority are not kept off
  int whole_nodes = 0;   // the domain's whole nodes now
  int64_t needs_milli = 0;  // what the gang's members ask, at least (GPU milli)
};

// The domain of label `key` kept for the first waiting gang of `snapshot`, or none when no gang
// waits or no domain could hold it when empty (on the nodes its first pending member may run on).
// `index`: the domains of `key` on `snapshot` (domain_steering.h), whose sums it ranks by;
// `scheduler`: the scheduler name gpusched serves (gangs whose pods name another are not its).
std::optional<DomainReservation> ReservedDomain(const inventory::InventorySnapshot& snapshot, const std::string& key,
                                                const DomainIndex& index, const std::string& scheduler);

// True if kube-scheduler places `group` per domain of a level (its topology constraint) other
// than `key`, the reservation's: it never has a domain of `key` kept for it, and is not kept off
// one. A gang with a constraint of `key` itself waits and is kept off as any gang gpusched plans.
bool PlacedPerOtherLevel(const PodGroup& group, const std::string& key);

// The priority `pod` is judged by against a kept domain: its own, or for a member of a group the
// highest of its and its group's pending members' (as the gang planner judges the gang: OffDomain).
int32_t GangPriority(const Pod& pod, const inventory::InventorySnapshot& snapshot);

// True if `pod` is a member of the gang `r` is kept for.
bool OfKeptGang(const Pod& pod, const DomainReservation& r);

// The reason filter gives a pod kept off the reserved domain.
std::string ReservationReason(const std::string& key, const DomainReservation& r);

}  // namespace gpusched::extender
