// File: group_explain.h
//
// GET /explain?podGroup=NAMESPACE/NAME (and `gpusched explain --pod-group`): a pod group (gang)
// explained: the group as its object declares it (docs/gangs.md), its members pending and bound,
// and whether the pending ones can be placed all together on the cluster as it is now
// (placement/gang_planner.h): member by member where, or why not, and where each member's slot
// is held when its gang is planned (gang_holds.h); for a group with a topology constraint,
// inside one domain (the one where they fit on the fewest nodes); otherwise, while no member
// holds a slot, inside one domain of the topology levels as filter plans it (gang_domains.h), or
// waiting for one, as filter says (then nothing is to be evicted for it). Where they do not fit,
// "wouldFitAfter": the
// evictions of pods of lower priority after which they would, all together, by preempt's rules
// (placement/group_defrag.h's EvictForGroup), or why none would. Read-only: nothing is held
// or evicted.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/inventory/snapshot.h"
#include "gpusched/placement/gang_planner.h"
#include "gpusched/placement/group_defrag.h"

namespace gpusched::extender {

struct GroupExplanation {
  std::string group;            // "ml/train", as asked
  std::string api;              // GroupApiName: "PodGroup", "Workload", "Coscheduling"
  std::string replica;          // a Workload's podGroupReplicaKey, "" for none
  bool declared = false;        // the cluster declares it (else only pods name it so far)
  int32_t min_count = 0;        // 0: not a gang (or not declared)
  size_t bound = 0;             // members bound, as far as gpusched knows their specs
  std::vector<std::string> pending;  // "namespace/name" of the pending members, by UID
  // Members that do not exist yet: minCount less those pending and bound (0 when enough).
  size_t missing = 0;
  // What gpusched does not judge for some member and leaves to kube-scheduler (required pod
  // affinity or anti-affinity, topology spread, host ports, volumes), or "". A group's topology
  // constraint is judged: the plan and the evictions lie inside one domain each (`domain`).
  std::string not_judged;
  placement::GangPlan plan;     // of the pending members; slots in `pending`'s order
  std::vector<std::string> held;  // by `pending`'s order: the node of the member's held slot, or ""
  // When the plan does not fit (and is not unplannable): the evictions that would make room.
  std::optional<placement::GroupRoomPlan> would_fit_after;
  // The domain of the plan ("key=value" for the topology levels', the value for a topology
  // constraint's), and of the evictions (a constraint's only); "" without one.
  std::string domain;
  std::string evictions_domain;
  // The domain kept for the group while it waits for room (gang_reservation.h), "key=value"; ""
  // when none is kept for it.
  std::string kept_domain;
};

// A group found by name in a snapshot: the API that declares it (else the first whose pods name
// it), its declaration (null if none) and its members; pointers into the snapshot.
struct FoundGroup {
  GroupApi api = GroupApi::kPodGroup;
  const PodGroup* declared = nullptr;
  const inventory::GroupTable::Members* members = nullptr;
  std::vector<Pod> pending;  // copies of members->pending, by UID
};

// Finds group `key` instance `replica` (ExplainGroup's errors).
StatusOr<FoundGroup> FindGroup(std::string_view key, std::string_view replica, const inventory::InventorySnapshot& snapshot);

// Explains group `key` ("namespace/name"; a Workload's "namespace/workload/podGroup") instance
// `replica` on `snapshot`, placed under `options` (DRA selectors compiled into `programs`), inside
// one domain of the topology levels as filter plans it (gang_domains.h), its wait for one
// domain counted at wall time `now_ms`.
// Errors: InvalidArgument for a key without a namespace, or a replica key for a group
// that is not a Workload's; NotFound when no API declares the group and no pod names it.
StatusOr<GroupExplanation> ExplainGroup(std::string_view key, std::string_view replica,
                                        const inventory::InventorySnapshot& snapshot, const ServiceOptions& options,
                                        dra::cel::ProgramCache* programs, int64_t now_ms);

std::string GroupExplanationJson(const GroupExplanation& e);
std::string GroupExplanationText(const GroupExplanation& e);

}  // namespace gpusched::extender
