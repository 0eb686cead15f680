// File: group_defrag.h
//
// Room for a pod group (issue 33, docs/gangs.md): `POST /debug/defrag?podGroup=NAMESPACE/NAME`
// and `gpusched defrag --pod-group`: the pod moves after which every pending member of the group
// fits at once (placement/group_defrag.h), a dry run unless applied. Applying it
// (defrag_executor.h's ApplyRoom) holds every member's GPUs for it before the first eviction,
// as a defrag hold with the member's UID the holder, which gang_holds.h reads as the member's
// slot (a slot it had elsewhere gives way, and is held again if the plan stops before its first
// eviction); a plan that does not fit whole does nothing. Also explain's group evictions
// (GroupEvictions: "wouldFitAfter" of GET /explain?podGroup=).
//
// The JSON answer (fields may be added, never renamed):
//   {"podGroup", "fits", "pending": ["ns/name"...], "plan": [{"pod", "node", "gpus"}], "nodes",
//    "moves": [as /debug/defrag's], "fragmentedPct": {"before", "after"}, "reason",
//    "notJudged", "applied": null | [...], "held"}
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/extender/defrag.h"
#include "gpusched/extender/defrag_executor.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/group_defrag.h"

namespace gpusched::extender {

struct GroupDefragResult {
  std::string group;          // as asked
  std::vector<Pod> pending;   // the members planned, by UID; the plan's slots align with them
  placement::GroupRoomPlan plan;
  std::vector<std::optional<Allocation>> slots;  // by `pending`: the hold each had (its slot), if any
  std::optional<DefragApplied> applied;
};

// The plan for group `key` instance `replica` (group_explain.h's FindGroup and its errors) on
// inputs.snapshot, with at most `max_moves` moves; the holds kept for the members (their slots)
// are room for them; members `binding` says are being bound are left out (null: none).
// Errors besides: InvalidArgument for a negative max_moves; FailedPrecondition for a group
// without pending members, or one with a topology constraint (kube-scheduler places it one
// domain at a time; room for it is not planned per domain yet).
StatusOr<GroupDefragResult> PlanGroupDefrag(std::string_view key, std::string_view replica, int max_moves,
                                            const EvaluationInputs& inputs,
                                            const std::function<bool(std::string_view uid)>& binding = nullptr);

// Applies a plan that fits (DefragExecutor::ApplyRoom); nothing for one that does not.
DefragApplied ApplyGroupDefrag(const GroupDefragResult& r, const DefragExecutor& executor, UnjudgedPolicy unjudged);

// The evictions, by preempt's rules, after which the `pending` members fit together on `snapshot`.
placement::GroupRoomPlan GroupEvictions(const std::vector<Pod>& pending, const inventory::InventorySnapshot& snapshot,
                                        const ServiceOptions& options);

std::string GroupDefragJson(const GroupDefragResult& r);
std::string GroupDefragText(const GroupDefragResult& r);

}  // namespace gpusched::extender
