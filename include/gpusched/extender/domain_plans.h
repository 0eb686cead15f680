// File: domain_plans.h
//
// Gangs with a topology constraint (a PodGroup's spec.schedulingConstraints.topology, issue 33):
// kube-scheduler evaluates one placement per domain (the nodes that share the group's topology
// label value), filtering the members back to back among that domain's nodes, then binds the
// members of the placement it picks. gpusched keeps one plan per (group instance, domain): every
// pending member asking GPUs planned together on the domain's nodes (gang_holds.h's PlanPending,
// all or, while minCount can be reached, all but the largest that fit nowhere), made at the first
// filter that offers nodes of that domain and kept while the domain's nodes and the group's
// pending members stay as they were (NodeState::generation), so that every member of one pass
// sees one plan. A member's filter keeps, in each domain offered, its slot node of that domain's
// plan; every other node fails with the reason. A domain whose plan leaves the member out fails
// whole, with why.
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
#include <utility>
#include <vector>

#include "gpusched/common/mutex.h"
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

  // The filter of `member` (pending, asking GPUs) of `group` (a gang with a topology key) over
  // `offered` (args.node_names): kept and failed positions as above. Nodes without the topology
  // label fail: they are in no domain.
  FilterResult Steer(const Pod& member, const PodGroup& group, const std::vector<std::string_view>& offered,
                     const inventory::InventorySnapshot& snapshot) const GPUSCHED_EXCLUDES(mu_);
  // The GPUs the latest plan that placed pod `uid` on `node` gave it (bind takes them where they
  // are still free), or nullopt.
  std::optional<Placement> SlotPlacement(std::string_view uid, std::string_view node) const GPUSCHED_EXCLUDES(mu_);

 private:
  struct Plan {
    std::vector<std::pair<uint32_t, uint64_t>> nodes;  // the domain's nodes (snapshot position, generation)
    std::vector<std::string> members;                  // the pending members planned or left out, UIDs sorted
    placement::GangPlan plan;                          // slots of the members planned
    std::string refusal;                               // why the domain takes no member ("" when planned)
  };
  // The plan of the group instance `key` in `domain` (its nodes `positions`), kept or made.
  std::shared_ptr<const Plan> PlanFor(const std::string& key, const PodGroup& group, const std::string& domain,
                                      const std::vector<uint32_t>& positions, const inventory::InventorySnapshot& snapshot) const
      GPUSCHED_EXCLUDES(mu_);
  // Plans `pending` on the domain's nodes: all, or all but the largest left out while `needed`
  // can still be reached.
  Plan Make(std::vector<Pod> pending, size_t needed, const std::string& domain, const std::vector<uint32_t>& positions,
            const inventory::InventorySnapshot& snapshot) const;

  const inventory::Inventory* inventory_;
  const ServiceOptions* options_;
  dra::cel::ProgramCache* programs_;
  mutable Mutex mu_;
  // By member key and domain.
  mutable std::map<std::pair<std::string, std::string>, std::shared_ptr<const Plan>> plans_ GPUSCHED_GUARDED_BY(mu_);
  // The slots of the plans made, by member UID and node (the latest plan's).
  mutable std::map<std::pair<std::string, std::string>, Placement, std::less<>> slots_ GPUSCHED_GUARDED_BY(mu_);
};

}  // namespace gpusched::extender
