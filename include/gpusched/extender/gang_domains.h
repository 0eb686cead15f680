// File: gang_domains.h
//
// Where a gang goes across nodes (topology levels). NVLink cliques, blocks or racks, and zones
// are domains, each named by a node label (ServiceOptions::topology_levels, lowest level first;
// a node without the label is in no domain of that level). A gang's pending members are planned
// inside one domain of the lowest level where one domain can hold them, else the next level's,
// else across the cluster as before: the preference and its fallback. A group annotated
// gpusched.io/topology-required with a label key is planned inside one domain of that key or not
// at all: the requirement, with no fallback. kube-scheduler chooses among nodes with its own
// scores, never the extender's, so the domain is carried out by the gang's slots: each member's
// filter keeps its slot node (gang_holds.h).
//
// A gang that no domain of a level holds now waits for one, up to topology.fallbackAfterSeconds
// from its oldest pending member's creation, before it goes to the next level or across the
// cluster: as Slurm's --switches=N@max-time. At the first level it waits up to
// topology.drainWaitSeconds instead while the domain kept for waiting gangs drains (no pod of
// another scheduler runs there: DomainWaitOf). A fallback at once splits a gang over domains that
// then hold no other gang either. It waits only where some domain of that level could hold it
// when empty.
//
// Among the domains that can hold the gang it takes the fullest: the fewest whole nodes
// (domain_steering.h's IsWholeNode), then the least free GPU, as KAI's domain choice packs: gangs
// pack into domains already in use and whole domains stay free for larger gangs. Where minCount lets members be left out, a domain that holds more of them wins.
//
// A PodGroup that declares spec.schedulingConstraints.topology is kube-scheduler's to place per
// domain (domain_plans.h), not these.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/dra/cel.h"
#include "gpusched/extender/gang_reservation.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/inventory/snapshot.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/gang_planner.h"

namespace gpusched::extender {

// How long a gang waits for one domain, seen at wall time `now_ms`: for a domain of any level until
// `until_ms` (topology.fallbackAfterSeconds; 0: no wait), and for one of the first level until
// `drain_until_ms` when later (topology.drainWaitSeconds while the domain kept for waiting gangs
// drains; 0: not).
struct DomainWait {
  int64_t until_ms = 0;
  int64_t drain_until_ms = 0;
  int64_t now_ms = 0;
  int64_t UntilAt(bool first_level) const { return first_level ? std::max(until_ms, drain_until_ms) : until_ms; }
  bool ActiveAt(bool first_level) const { return UntilAt(first_level) > now_ms; }
  // Whether the wait at the first level is the drain wait.
  bool Draining() const { return drain_until_ms > until_ms; }
  // The first end of a wait still ahead, 0 for none: a plan made now holds until then at most.
  int64_t NextEnd() const {
    if (until_ms > now_ms) return until_ms;
    return drain_until_ms > now_ms ? drain_until_ms : 0;
  }
};

struct GangPlacement {
  placement::GangPlan plan;
  std::vector<Pod> planned;  // the members the plan places (all, or all but some left out)
  std::string level;         // the label key of its domain; "" when planned across the cluster
  std::string domain;        // the domain's label value
  bool waiting = false;      // not planned: it waits for one domain (plan.reason says how long)
  int64_t waits_until_ms = 0;  // waiting: until then (DomainWait::UntilAt its level)
};

// Plans `pending` (members without slots) of a gang that still needs `needed` of them, inside one
// domain as above; `required`: the group's required label key ("" for none); `beside`: the nodes
// of the slots other members already hold, whose domain the new members join at each level
// (a level whose domains they already span is skipped). `wait`: how long the gang waits for one
// domain (DomainWaitOf): while it is active, a gang that no domain of a level holds now, where some domain of that level has
// GPUs enough for it when empty on nodes its first member may run on, is not planned further
// (`waiting`; plan.reason says until when, a text that stays the same while it waits). Never with `beside` (members already placed or
// holding slots wait for no domain) nor where the members' GPU demand is unknown (DRA claims).
// Where the plan does not fit (or, required, no domain can hold it), plan.reason says why.
// `kept`: the domain kept for the first waiting gang (gang_reservation.h), or null: the pods are
// planned off it where they stay off it (KeptOffFor), in one domain or across several.
GangPlacement PlanGangInDomains(const std::vector<Pod>& pending, size_t needed, const std::string& required,
                                const std::vector<std::string>& beside, const DomainWait& wait,
                                const inventory::InventorySnapshot& snapshot, const ServiceOptions& options,
                                dra::cel::ProgramCache* programs, const DomainReservation* kept = nullptr);

// The names of the nodes of `snapshot` outside domain `off` of the first level of `options`.
std::vector<std::string_view> NodesOutside(const std::string& off, const inventory::InventorySnapshot& snapshot,
                                           const ServiceOptions& options);

// PlanPending of `pods` across the cluster, off `kept` (null: none) where they stay off it
// (KeptOffFor), as filter plans them.
placement::GangPlan PlanPendingOffKept(const std::vector<Pod>& pods, const DomainReservation* kept,
                                       const inventory::InventorySnapshot& snapshot, const ServiceOptions& options,
                                       dra::cel::ProgramCache* programs);

// How long a gang whose members without slots are `pending` waits for one domain, seen at wall
// time `now_ms`, from the oldest one's creationTimestamp (no wait when none has one):
// options.topology_fallback_after; at the first level, while the domain `kept` for the first
// waiting gang (null: none) drains, options.topology_drain_wait when longer (never with a
// fallback of 0). Every gang that waits at the first level waits so: the gangs behind the first
// one are next for the domains that drain after its own. The drain is judged on the snapshot the
// plan is made on, so a pod of another scheduler that comes to the domain ends the longer wait.
DomainWait DomainWaitOf(const std::vector<Pod>& pending, const ServiceOptions& options, const DomainReservation* kept,
                        int64_t now_ms);

// Of `offered`, the nodes a member of a gang that requires `key` may be planned on alone: those
// in the one domain of `key` that the slots of its siblings (on nodes `beside`) lie in; any node
// with the label when they hold none.
std::vector<std::string_view> InRequiredDomain(const std::vector<std::string_view>& offered, const std::string& key,
                                               const std::vector<std::string>& beside,
                                               const inventory::InventorySnapshot& snapshot);

}  // namespace gpusched::extender
