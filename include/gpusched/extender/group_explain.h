// File: group_explain.h
//
// GET /explain?podGroup=NAMESPACE/NAME (and `gpusched explain --pod-group`): a pod group (gang)
// explained: the group as its object declares it (docs/gangs.md), its members pending and bound,
// and whether the pending ones can be placed all together on the cluster as it is now
// (placement/gang_planner.h): member by member where, or why not. Read-only: nothing is held.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/gang_planner.h"

namespace gpusched::extender {

struct GroupExplanation {
  std::string group;            // "ml/train", as asked
  std::string api;              // GroupApiName: "PodGroup", "Workload", "Coscheduling"
  std::string replica;          // a Workload's podGroupReplicaKey, "" for none
  bool declared = false;        // the cluster declares it (else only pods name it so far)
  int32_t min_count = 0;        // 0: not a gang (or not declared)
  size_t bound = 0;             // members bound, as far as gpusched knows their specs
  std::vector<std::string> pending;  // "namespace/name" of the pending members, by UID
  placement::GangPlan plan;     // of the pending members; slots in `pending`'s order
};

// Explains group `key` ("namespace/name"; a Workload's "namespace/workload/podGroup") instance
// `replica` on `inventory`'s current snapshot, placed under `options`. Errors: InvalidArgument
// for a key without a namespace; NotFound when no API declares the group and no pending pod
// names it.
StatusOr<GroupExplanation> ExplainGroup(std::string_view key, std::string_view replica, const inventory::Inventory& inventory,
                                        const ServiceOptions& options);

std::string GroupExplanationJson(const GroupExplanation& e);
std::string GroupExplanationText(const GroupExplanation& e);

}  // namespace gpusched::extender
