// File: domain_plans.h
//
// Gangs with a topology constraint (a PodGroup's spec.schedulingConstraints.topology, issue 33):
// kube-scheduler evaluates one placement per domain (the nodes that share the group's topology
// label value), filtering the members back to back among that domain's nodes, then binds the
// members of the placement it picks. gpusched keeps one plan per (group instance, domain): every
// pending member asking GPUs planned together on the domain's nodes (gang_holds.h's PlanPending,
// all or, while minCount can be reached, all but the largest that fit nowhere), made at the first
// filter that offers nodes of that domain. A plan is kept while its slots still fit their nodes
// and the group's pending members and minCount stay as they were; a member that arrives later is
// planned alone beside the slots, which stay, so that every member of one pass sees one plan. A
// member's filter keeps, in each domain offered, its slot node of that domain's plan. When that
// node is not offered (kube-scheduler's own filters refused it), or the member has no slot, the
// member alone is planned again among the domain's nodes offered, beside its siblings' slots;
// where it fits nowhere there, every node of the domain fails with the reason. A node without the
// topology label is in no domain (unresolvable).
//
// At bind, a member takes the GPUs its slot names where they are still free (SlotPlacement):
// GPUs chosen member by member in bind order could take the share a later member was planned on.
//
// Nothing is held: kube-scheduler picks one domain of those it evaluated, and holding every
// domain's plan would keep GPUs from other pods for nothing. The plan therefore guards against
// members counting on one GPU or share, not against a pod outside the gang taking the GPUs
// between filter and bind (bind then refuses it: kube-scheduler tries the gang again).
//
// Thread-safe: the plans are kept under one mutex; planning runs outside it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/extender/gang_reservation.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/extender/wire.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/inventory/snapshot.h"
#include "gpusched/placement/gang_planner.h"

namespace gpusched::extender {

// The group of `pod` if it is declared a gang with a topology key, else null.
const PodGroup* TopologyGangOf(const Pod& pod, const inventory::InventorySnapshot& snapshot);

class DomainPlans {
 public:
  // Each pointer must outlive this.
  DomainPlans(const inventory::Inventory* inventory, const ServiceOptions* options, dra::cel::ProgramCache* programs)
      : inventory_(inventory), options_(options), programs_(programs) {}

  // The filter of `member` (asking GPUs) of `group` (a gang with a topology key) over `offered`
  // (args.node_names): kept and failed positions as above. `off`: the domain kept for another
  // gang where the member stays off it (KeptOff), its nodes failed with the reservation's reason
  // and not planned; null: none.
  FilterResult Steer(const Pod& member, const PodGroup& group, const std::vector<std::string_view>& offered,
                     const inventory::InventorySnapshot& snapshot, const DomainReservation* off = nullptr) const
      GPUSCHED_EXCLUDES(mu_);
  // The GPUs the latest plan that placed pod `uid` on `node` gave it, or nullopt.
  std::optional<Placement> SlotPlacement(std::string_view uid, std::string_view node) const GPUSCHED_EXCLUDES(mu_);

 private:
  struct Plan {
    uint64_t version = 0;              // the snapshot it was last found valid on
    std::vector<std::string> members;  // the group's pending members, UIDs sorted
    size_t needed = 0;                 // members minCount still needs besides those bound and without GPUs
    placement::GangPlan plan;          // slots of the members planned
    std::string refusal;               // why the domain takes no member ("" when planned)
  };
  using PlanPtr = std::shared_ptr<const Plan>;
  // The plan of the group instance `key` in `domain` (its nodes `positions`), kept or made.
  PlanPtr PlanFor(const std::string& key, const PodGroup& group, const Pod& member, const std::string& domain,
                  const std::vector<uint32_t>& positions, const inventory::InventorySnapshot& snapshot) const
      GPUSCHED_EXCLUDES(mu_);
  // `plan` still valid on `snapshot` for `members` and `needed`: its version moved on, or, when the
  // members grew, the new ones planned beside its slots; null when it must be made anew.
  PlanPtr Revalidated(const PlanPtr& plan, const std::vector<Pod>& pending, const std::vector<std::string>& members,
                      size_t needed, const std::vector<uint32_t>& positions, const inventory::InventorySnapshot& snapshot) const;
  // Plans `pending` on the domain's nodes: all, or all but the largest left out while `needed`
  // can still be reached.
  Plan Make(std::vector<Pod> pending, size_t needed, const std::vector<uint32_t>& positions,
            const inventory::InventorySnapshot& snapshot) const;
  // `member` alone among `positions`, beside the slots of `plan` that are not its own; `plan`
  // with the member's slot replaced, or null when it fits nowhere there.
  PlanPtr PlaceAlone(const PlanPtr& plan, const Pod& member, const std::vector<uint32_t>& positions,
                     const inventory::InventorySnapshot& snapshot) const;
  // Keeps `plan` as the plan of (key, domain) and its slots for bind.
  void Store(const std::string& key, const std::string& domain, const PlanPtr& plan) const GPUSCHED_EXCLUDES(mu_);
  // The snapshot positions of the nodes whose label `key` is `value`, indexed once per snapshot.
  std::vector<uint32_t> DomainNodes(const inventory::InventorySnapshot& snapshot, const std::string& key,
                                    const std::string& value) const GPUSCHED_EXCLUDES(mu_);

  const inventory::Inventory* inventory_;
  const ServiceOptions* options_;
  dra::cel::ProgramCache* programs_;
  mutable Mutex mu_;
  // By member key and domain.
  mutable std::map<std::pair<std::string, std::string>, PlanPtr> plans_ GPUSCHED_GUARDED_BY(mu_);
  // The slots of the plans kept, by member UID and node (the latest plan's).
  mutable std::map<std::pair<std::string, std::string>, Placement, std::less<>> slots_ GPUSCHED_GUARDED_BY(mu_);
  // DomainNodes' index: the snapshot version and label key it was built for, positions by value.
  mutable uint64_t index_version_ GPUSCHED_GUARDED_BY(mu_) = 0;
  mutable std::string index_key_ GPUSCHED_GUARDED_BY(mu_);
  mutable std::map<std::string, std::vector<uint32_t>, std::less<>> index_ GPUSCHED_GUARDED_BY(mu_);
};

}  // namespace gpusched::extender
