// File: group_dra_room.h (private to group_defrag.cc)
//
// The DRA side of a pod group's room (group_defrag.h): a member whose GPUs come from
// ResourceClaims gets room as dra_defrag.h makes it for one pod, on the claims as the plan's
// earlier DRA members and moves leave them. Each member's devices, and each moved pod's devices
// on its new node, are booked as allocated claims of the plan's own (reserved for no pod, so no
// later member takes or moves them); a moved pod's claims are deallocated. The budgets a later
// member's moves may use are the input's less every move the plan made before (of either kind),
// and a node's pods are those there plus the members and moved pods that arrived (none leaves:
// CPU and memory freed by a move are not counted, never more room than there is).
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "defrag_room.h"
#include "gpusched/dra/cluster_state.h"
#include "gpusched/placement/dra_planner.h"
#include "gpusched/placement/gang_planner.h"
#include "gpusched/placement/group_defrag.h"

namespace gpusched::placement::defrag {

// The devices of a DRA verdict's ranked choice, as "driver/pool/device".
std::vector<std::string> RankedDeviceNames(const DraVerdict& v);

// The index of node `name` in `cluster`, or nullopt.
std::optional<size_t> IndexOf(const Overlay& cluster, const std::string& name);

class DraBook {
 public:
  // `dra` and `input` must outlive the book.
  DraBook(const GroupDra& dra, const DefragInput& input) : dra_(&dra), input_(&input), state_(dra.state) {}

  // The claims as the plan left them so far, and the DRA planner's other inputs.
  const dra::ClusterState& state() const { return *state_; }
  dra::cel::ProgramCache* programs() const { return dra_->programs; }
  const DraOptions& options() const { return dra_->options; }
  // The ready nvidia-dra node of *cluster, allowed for `pending`, where `planner` (on state())
  // gives the pod devices best (highest score), with them; nullopt if none.
  std::optional<std::pair<size_t, std::vector<std::string>>> BestNode(const DraPlanner& planner, const Pending& pending,
                                                                      const Overlay& cluster) const;
  // Books `devices` for `pending` on node `node` of *cluster: allocated here, arrived there.
  void Book(const Pending& pending, size_t node, const std::vector<std::string>& devices, Overlay* cluster);
  // Books pod `uid` as gone (evicted, or moved): it leaves the claims it reserves, and those no
  // pod reserves any more (or generated for it) are freed; a claim shared with a pod that stays
  // keeps its devices.
  void Free(const std::string& uid) { Deallocate(uid); }

  // Makes room for claim member `m` (`pending`) with at most left.max_moves moves, after the plan's
  // `moves` so far; on success books it (and its moves) here and on *cluster (the member arrives
  // on its node), and fills *room; otherwise room->reason says why.
  bool RoomFor(const GangMember& m, const Pending& pending, const DefragOptions& left, const std::vector<DefragMove>& moves,
               Overlay* cluster, Room* room);

 private:
  // The budgets left after `moves` (each covered budget's allowance less one per move).
  std::shared_ptr<const std::vector<DisruptionBudget>> BudgetsAfter(const std::vector<DefragMove>& moves, const Overlay& cluster) const;
  // The cluster's nodes `pending` may go to, with the pods that arrived on them (views_ keeps the
  // rebuilt ones). With a topology domain, the claim member's moves stay inside it too.
  std::vector<const NodeState*> NodesWithArrivals(const Overlay& cluster, const Pending& pending);
  // Books `devices` as allocated by a claim of the plan's own, named after pod `uid`.
  void Allocate(const std::string& ns, const std::string& uid, const std::vector<std::string>& devices);
  // Free's work.
  void Deallocate(const std::string& uid);

  const GroupDra* dra_;      // a value: a trial is a copy, kept by assignment
  const DefragInput* input_;
  const dra::ClusterState* state_;
  dra::ClusterStatePtr owned_;  // state_, once changed
  std::map<size_t, std::vector<PodUse>> arrived_;  // by node index
  std::deque<NodeState> views_;
};

}  // namespace gpusched::placement::defrag
