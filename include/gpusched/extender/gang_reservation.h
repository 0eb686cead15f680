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
// A gang waits when it is declared a gang (not one confined to another level: ConfinedLevel), its
// members reach its minCount, none is bound, holds a slot
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
#include <vector>

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
  // No node of the domain runs a pod of another scheduler (RunsOtherSchedulersPod): with gpusched's
  // pods of the gang's priority or lower kept off it, it drains, and gangs may wait longer for it
  // (gang_domains.h's DomainWaitOf).
  bool drains = false;
  std::string level;     // the label key of the level (the first topology level)
  std::vector<uint32_t> nodes;  // the domain's nodes: positions in the snapshot it was computed on
};

// The domain of label `key` kept for the first waiting gang of `snapshot`, or none when no gang
// waits or no domain could hold it when empty (on the nodes its first pending member may run on).
// `index`: the domains of `key` on `snapshot` (domain_steering.h), whose sums it ranks by;
// `scheduler`: the scheduler name gpusched serves (gangs whose pods name another are not its).
std::optional<DomainReservation> ReservedDomain(const inventory::InventorySnapshot& snapshot, const std::string& key,
                                                const DomainIndex& index, const std::string& scheduler);

// What a gang of `min_count` must place, from its GPU members' demands in milli-GPU
// (`gpu_demands`, each above 0) and its members without GPUs (`launchers`): `needed`, the GPU
// members (minCount less the launchers, at least one, at most those there are), and `least_milli`,
// what the `needed` smallest of them ask. The one count of a gang's GPUs: the waiting gang
// (ReservedDomain) and domain steering's target (GangDemands) both read it.
struct GangNeed {
  size_t needed = 0;
  int64_t least_milli = 0;
};
GangNeed NeedOf(std::vector<int64_t> gpu_demands, size_t launchers, int32_t min_count);

// The level a declared group is confined to: its topology constraint's key (kube-scheduler places
// it per domain), else the level its annotation requires; "" for neither (or no group).
std::string ConfinedLevel(const PodGroup* group);

// What the kept-domain rule reads of a gang, or of a Workload's pods planned as one.
struct GangFacts {
  const Pod* member = nullptr;  // one of its pods: its group tells the gang apart (OfKeptGang)
  int32_t priority = 0;         // its highest pending member's
  std::string level;            // ConfinedLevel of its group
  bool members_there = false;   // a member already holds GPUs, a slot or a hold in the kept domain
};

// True if the gang stays off domain `kept`: it is not the gang the domain is kept for, nor of
// higher priority; not confined to a level other than the reservation's (it could never have a
// domain of that level kept); and none of its members is there already (it joins them). The one
// judgement of gangs against a kept domain: filter, preempt, defrag, group defrag, explain, the
// gang planner and the Kueue check all ask it.
bool GangKeptOff(const GangFacts& gang, const DomainReservation& kept);

// `kept`'s domain where the gang stays off it (GangKeptOff), else "" (also without `kept`).
std::string OffDomain(const GangFacts& gang, const DomainReservation* kept);

// The facts of the gang of `pod` (a member of declared gang `group`) on `snapshot`: its pending
// members' highest priority (the pod's counted too) and whether a member is in `kept`'s domain.
GangFacts FactsOf(const Pod& pod, const PodGroup& group, const DomainReservation& kept,
                  const inventory::InventorySnapshot& snapshot);

// True if `pod` is a member of the gang `r` is kept for.
bool OfKeptGang(const Pod& pod, const DomainReservation& r);

// The reason filter gives a pod kept off the reserved domain.
std::string ReservationReason(const std::string& key, const DomainReservation& r);

}  // namespace gpusched::extender
