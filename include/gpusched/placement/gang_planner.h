// File: gang_planner.h
//
// A gang's plan: where every pending member of a pod group goes, all or nothing (issue 33). The
// members are placed one after another, largest GPU demand first, each on the cluster as the
// members before it left it (their GPUs, shares and other resources booked on a what-if copy of
// their node, what_if.h), so that two members never count on one free GPU or share: the
// failure an extender judging member by member cannot see. A member goes to a node of the plan
// where it fits (the policy's best scored), else to a new node: for the fewest nodes, one whose
// free GPUs hold every member left, the best scored of those, or else the one with the most
// free. GPUs are judged by the Planner, the rest by the node fit (node_fit.h: node selection
// and NodeResourcesFit). A member without GPUs (a launcher) needs the node fit alone: the first
// node of the plan, then of the cluster, where it fits.
//
// Members whose devices come from DRA are judged by the DRA planner (dra_planner.h) with the
// GangDra inputs: a member with ResourceClaims alone on every node, a member asking extended
// resources that DRA serves on nvidia-dra nodes (KEP 5004) there, and the device plugin's way
// elsewhere. Such a member takes the devices of the DRA planner's ranked choice, held on the
// plan's copy of its node for every later member; it goes to the plan's node the DRA planner
// scores best, else to the first other node where it fits, in the nodes' order (ranking every
// node cost four times judging it; the nodes outside the plan are judged once per claim shape).
// Without GangDra::state, or with a claim missing, such a gang is unplannable.
// Holds (defrag, nominations) count as taken for every member, even those they are kept for. An
// empty gang is refused ("no members to place").
//
// Pure: the plan depends only on the arguments.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "gpusched/dra/cel.h"
#include "gpusched/dra/cluster_state.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/dra_planner.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/policy.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::placement {

struct GangMember {
  const Pod* pod = nullptr;  // must outlive the plan's making
  PodRequest request;        // AnalyzePod(*pod)
};

// What members whose devices come from DRA are judged with: the DRA planner's inputs, which must
// outlive the plan's making. Without `state` such members make the gang unplannable.
struct GangDra {
  const dra::ClusterState* state = nullptr;
  dra::cel::ProgramCache* programs = nullptr;
  DraOptions options;
  bool extended_resources = false;  // DRA may serve extended resources on nvidia-dra nodes (KEP 5004)
};

// Where one member goes.
struct GangSlot {
  std::string pod_uid;
  std::string node;
  Placement placement;  // empty for a member without GPUs; the devices it takes for a DRA member

  bool operator==(const GangSlot&) const = default;
};

struct GangPlan {
  bool fits = false;
  std::vector<GangSlot> slots;  // when fits: one per member, in the members' order
  size_t placed = 0;            // members placed before the first that fit nowhere (all when fits)
  size_t failed = 0;            // when !fits and not unplannable: the index of the member that fit nowhere
  size_t nodes = 0;             // distinct nodes the slots use
  std::string reason;           // when !fits
  // When !fits: some member cannot be judged here (DRA without GangDra, a claim missing) or placed
  // at all (its request is refused); the reason names it. Such a gang is not the planner's to refuse.
  bool unplannable = false;
};

// What a member asks of GPUs in milli-GPU (whole GPUs and mGPU shares alike; each device its
// claims ask counts as a whole GPU): the order members are placed in, largest first.
int64_t GangDemand(const PodRequest& request);
int64_t GangDemand(const GangMember& member, const GangDra& dra);

// Plans `members` on `nodes` (null entries are skipped), scored by `scorer`, DRA members with `dra`.
GangPlan PlanGang(std::span<const GangMember> members, std::span<const NodeState* const> nodes,
                  const PlacementOptions& options, const scoring::Scorer& scorer, const GangDra& dra = {});

}  // namespace gpusched::placement
