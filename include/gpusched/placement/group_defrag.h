// File: group_defrag.h
//
// Room for a pod group at once (issue 33, docs/gangs.md): the moves (defrag: MakeRoomForGroup)
// or the evictions (explain's wouldFitAfter: EvictForGroup) after which every pending member of
// the group fits, all together or not at all.
//
// The members are placed one after another, largest GPU demand first (gang_planner.h's order),
// each on the cluster as the members and moves before it left it (their GPUs and other resources
// booked), so that two members never count on one free GPU or share: where it fits as it is (the
// fullest node), else on the node where room is made for it. The members booked are never moved
// or evicted for another. A member without GPUs (a launcher) needs its node fit alone: a node
// of the plan first, then any. A member that finds no room ends the search: the plan does not fit
// and has no moves (a plan that cannot be carried out whole does nothing), and its reason says
// how many members had room and why the next did not.
//
// Moves follow defrag_planner.h's rules for one pod, counted over the whole plan: at most
// options.max_moves in all, a pod moved once never moves again, PodDisruptionBudget allowances
// used up by the earlier moves. Evictions follow preempt's rules (victims.h): only pods of lower
// priority than the member, known to kube-scheduler and not terminating, never one a member's
// required pod affinity selects; budget violations counted over the plan, not refused; nodes in
// kube-scheduler's order of preemption candidates (fewest violations, lowest highest priority,
// least total priority, fewest victims, name). Evicted pods leave the cluster.
//
// Members whose GPUs come from ResourceClaims are planned with the GroupDra inputs, on the claims
// as the earlier members, moves and evictions left them (group_dra_room.h): moves as dra_defrag.h
// makes them for one pod; evictions as dra_victims.h chooses them, on the cheapest ready
// nvidia-dra node, the victims' claims then freed. Without GroupDra such a group gets no plan, and
// the reason names the member. Members asking extended resources that DRA may serve (KEP 5004) are
// planned on device-plugin nodes only.
//
// Pure: the plan depends only on the arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "gpusched/placement/defrag_planner.h"
#include "gpusched/placement/gang_planner.h"

namespace gpusched::placement {

struct GroupRoomPlan {
  bool fits = false;
  std::vector<GangSlot> slots;    // when fits: one per member, in the members' order
  std::vector<DefragMove> moves;  // when fits, in the order to make them; an eviction's `to` is ""
  int64_t pdb_violations = 0;     // EvictForGroup: the budget violations its evictions cost
  size_t nodes = 0;               // distinct nodes the slots use
  double frag_before_pct = 0;     // the cluster's FGD fragmentation before and after (members booked)
  double frag_after_pct = 0;
  std::string reason;             // when !fits
  std::string not_judged;         // the members' constraints gpusched does not judge, or ""
};

// What members with ResourceClaims are planned with; each must outlive the call. Without
// `state` such members get no plan.
struct GroupDra {
  const dra::ClusterState* state = nullptr;
  dra::cel::ProgramCache* programs = nullptr;
  DraOptions options;
};

// Node names: with `allowed` (a group's topology domain), the members go to those nodes only;
// moved pods land anywhere.
using NodeNames = std::set<std::string, std::less<>>;

// The fewest moves, member by member, that make room for every member of `members` at once.
GroupRoomPlan MakeRoomForGroup(std::span<const GangMember> members, const DefragInput& input, const DefragOptions& options,
                               const GroupDra& dra = {}, const NodeNames* allowed = nullptr);

// The evictions, member by member, that make room for every member of `members` at once.
GroupRoomPlan EvictForGroup(std::span<const GangMember> members, const DefragInput& input, const DefragOptions& options,
                            const GroupDra& dra = {}, const NodeNames* allowed = nullptr);

}  // namespace gpusched::placement
