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
// A group with a topology constraint (spec.schedulingConstraints.topology) must run inside one
// domain (the nodes sharing the key's label value; a node without it is in none): room is
// planned in each domain apart, and the plan with the fewest moves (evictions: the fewest
// victims, then the fewest budget violations) wins, the first domain on a tie; "domain" names it.
//
// The JSON answer (fields may be added, never renamed):
//   {"podGroup", "fits", "domain"?, "pending": ["ns/name"...], "plan": [{"pod", "node", "gpus"}], "nodes",
//    "moves": [as /debug/defrag's], "fragmentedPct": {"before", "after"}, "reason",
//    "notJudged", "applied": null | [...], "held"}
#pragma once

#include <fmt/format.h>

#include <functional>
#include <map>
#include <span>
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
  std::string domain;         // the topology domain the plan lies in; "" without a constraint
  std::vector<std::optional<Allocation>> slots;  // by `pending`: the hold each had (its slot), if any
  std::optional<DefragApplied> applied;
};

// The plan for group `key` instance `replica` (group_explain.h's FindGroup and its errors) on
// inputs.snapshot, with at most `max_moves` moves; the holds kept for the members (their slots)
// are room for them; members `binding` says are being bound are left out (null: none).
// Errors besides: InvalidArgument for a negative max_moves; FailedPrecondition for a group
// without pending members.
StatusOr<GroupDefragResult> PlanGroupDefrag(std::string_view key, std::string_view replica, int max_moves,
                                            const EvaluationInputs& inputs,
                                            const std::function<bool(std::string_view uid)>& binding = nullptr);

// Applies a plan that fits (DefragExecutor::ApplyRoom); nothing for one that does not.
DefragApplied ApplyGroupDefrag(const GroupDefragResult& r, const DefragExecutor& executor, UnjudgedPolicy unjudged);

// The evictions, by preempt's rules, after which the `pending` members fit together on `snapshot`
// (claim members' against its DRA objects, selectors compiled into `programs`; inside one domain
// of `declared`'s topology key when it has one: *domain names it; outside `kept`, the domain kept
// for another waiting gang, as LeaveOutKeptDomain leaves it out).
placement::GroupRoomPlan GroupEvictions(const std::vector<Pod>& pending, const inventory::InventorySnapshot& snapshot,
                                        const ServiceOptions& options, dra::cel::ProgramCache* programs,
                                        const PodGroup* declared = nullptr, const DomainReservation* kept = nullptr,
                                        std::string* domain = nullptr);

// The domains of `topology_key` among `nodes`: each label value with its nodes, in value order.
std::map<std::string, std::vector<const placement::NodeState*>> DomainsOf(std::span<const placement::NodeState* const> nodes,
                                                                          const std::string& topology_key);

// The best (`better`) fitting plan `plan_in` makes for the nodes of one domain of `key` among
// `nodes`, the first domain on a tie, its label value in *domain; where none fits, a Plan that
// does not fit, its reason naming up to three domains' reasons. Plan: GangPlan or GroupRoomPlan.
template <typename Plan>
Plan BestInDomains(std::span<const placement::NodeState* const> nodes, const std::string& key, std::string* domain,
                   const std::function<Plan(const placement::NodeNames&)>& plan_in,
                   const std::function<bool(const Plan&, const Plan&)>& better) {
  std::optional<Plan> best;
  std::vector<std::string> reasons;
  for (const auto& [value, members] : DomainsOf(nodes, key)) {
    placement::NodeNames names;
    for (const placement::NodeState* n : members) names.insert(n->node.name);
    Plan p = plan_in(names);
    if constexpr (requires { p.unplannable; }) {
      if (p.unplannable) return p;  // no domain can judge it: say why at once
    }
    if (p.fits && (!best || better(p, *best))) {
      best = std::move(p);
      *domain = value;
    } else if (!p.fits && reasons.size() < 3) {
      reasons.push_back(fmt::format("{}={}: {}", key, value, p.reason));
    }
  }
  if (best) return std::move(*best);
  Plan none;
  none.reason = reasons.empty() ? fmt::format("no node has the label {}: the group must run inside one of its domains", key)
                                : fmt::format("in no domain of {}: {}", key, fmt::join(reasons, "; "));
  return none;
}

std::string GroupDefragJson(const GroupDefragResult& r);
std::string GroupDefragText(const GroupDefragResult& r);

}  // namespace gpusched::extender
