// File: defrag_room.h (private to the device-plugin defrag planners)
//
// What defrag_planner.cc (one pending pod, consolidation) and group_defrag.cc (every member of a
// pod group at once) share: the cluster as a plan's moves leave it (Overlay), the move rules with
// the plan's budget use counted (MoveRules), and making room for one pending pod on that cluster
// (RoomFor: its victims on one node, each landed on the fullest node that takes it). The rules
// are defrag_planner.h's. Its names live in namespace placement::defrag, apart from the layer's.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/defrag_planner.h"
#include "gpusched/placement/move_rules.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/what_if.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::placement::defrag {

// True if node `n` takes device-plugin GPU pods now (ready, nvidia or mgpu).
bool ServesPods(const NodeState& n);

// The cluster as the plan's moves leave it: nodes changed so far are rebuilt with their new
// allocations (the node object, its holds and its pods' other uses kept); the others are the input's.
// A value: a trial is a copy, kept by assignment when it works out.
class Overlay {
 public:
  explicit Overlay(const DefragInput& input) : input_(&input) {}

  size_t size() const { return input_->nodes.size(); }
  const NodeState& node(size_t i) const {
    auto it = changed_.find(i);
    return it == changed_.end() ? *input_->nodes[i] : it->second;
  }
  // The state of node i with the pod `uid` gone, or with `added` booked too (what_if.h).
  NodeState Without(size_t i, std::string_view uid) const { return std::move(WhatIf(node(i)).Without(uid)).Take(); }
  NodeState With(size_t i, const Allocation& added) const { return std::move(WhatIf(node(i)).With(added)).Take(); }
  // The state of node i with pod `pod`'s `added` booked, in place of the holds kept for it.
  NodeState Booked(size_t i, const Allocation& added, const Viewer& pod) const {
    return std::move(WhatIf(node(i)).With(added).Consumed(pod)).Take();
  }
  void Set(size_t i, NodeState state) { changed_.insert_or_assign(i, std::move(state)); }
  // Records pod `uid` (of the inventory's node i) moving to node j, or leaving the cluster (an
  // eviction) where j is nullopt: its use of the nodes' other resources goes along.
  void Moved(size_t i, std::optional<size_t> j, std::string_view uid);
  // Records a pending pod's `use` arriving on node j; `use` must outlive the overlay.
  void Arrived(size_t j, const PodUse* use) { moved_.Move("", input_->nodes[j]->node.name, use); }
  // Why a pod with `labels` asking `requests` may not land on node j as the moves leave it, or ""
  // (move_rules.h).
  std::string LandingProblem(size_t j, const PodLabels* labels, const ResourceList& requests, std::string_view uid,
                             int32_t priority) const {
    return moved_.LandingProblem(*input_->nodes[j], labels, requests, uid, priority);
  }
  // LandingProblem for pod `uid` of node i (its labels and requests as the inventory has them).
  std::string LandingProblemOf(size_t i, std::string_view uid, int32_t priority, size_t j) const;

 private:
  const DefragInput* input_;
  std::map<size_t, NodeState> changed_;
  MovedUses moved_;
};

// Which pods a plan may still move: the rules of defrag_planner.h, with the plan's own evictions
// counted against the PodDisruptionBudgets, and the pods it pinned (the pending pods it booked).
class MoveRules {
 public:
  explicit MoveRules(const DefragInput& input) : budgets_(input.budgets), counter_(input.budgets, BudgetReading::kEviction) {}

  const PodLabels* LabelsOf(const NodeState& node, const Allocation& a) const { return node.LabelsOf(a.pod_uid); }
  // True if `a` may move, after the moves counted in `counter` (default: the plan's).
  bool Movable(const NodeState& node, const Allocation& a, DisruptionCounter* counter = nullptr) const;
  bool UsesBudget(const NodeState& node, const Allocation& a) const { return counter_.Covers(a.pod_name, LabelsOf(node, a)); }
  // Records the move of `a` (checked Movable): it uses its budgets and never moves again.
  void Moved(const NodeState& node, const Allocation& a) {
    counter_.Evict(a.pod_name, LabelsOf(node, a));
    moved_.insert(a.pod_uid);
  }
  // Records the move of pod `uid` (`name`, `labels`) another planner made (dra_defrag.h): it
  // uses its budgets and never moves again.
  void Moved(const std::string& name, const PodLabels* labels, std::string_view uid) {
    counter_.Evict(name, labels);
    moved_.insert(std::string(uid));
  }
  // Pod `uid` never moves (a pending pod the plan booked); it is not counted as refused.
  void Pin(std::string_view uid) { moved_.insert(std::string(uid)); }
  bool Pinned(std::string_view uid) const { return moved_.contains(uid); }
  const DisruptionCounter& counter() const { return counter_; }
  // The pods that were never movable, by reason ("; not moved: 2 pods: no controller would
  // recreate it"), or "".
  std::string Refused() const { return refused_.Text(); }

 private:
  std::shared_ptr<const std::vector<DisruptionBudget>> budgets_;
  DisruptionCounter counter_;
  std::set<std::string, std::less<>> moved_;
  mutable RefusedPods refused_;
};

// Whether a pod may land on node j besides its GPUs (Overlay::LandingProblem).
using Accepts = std::function<bool(size_t j)>;

// A pending pod as the landing rules see it (move_rules.h).
struct Pending {
  const Pod* pod = nullptr;
  PodLabels labels;
  PodUse use;  // its requests besides GPUs, counted on its node once booked
  // The nodes it may go to (a group's topology domain); null: any. Moved pods land anywhere.
  const std::set<std::string, std::less<>>* allowed = nullptr;

  static Pending Of(const Pod& pod);
  bool MayGo(const NodeState& n) const { return allowed == nullptr || allowed->contains(n.node.name); }
};

// A pending pod's booking as its node will hold it (placement still empty).
Allocation BookingOf(const Pod& pod, const std::string& node);

// How full a node's GPUs are, 0..1: the tie-break that packs moved pods.
double Fullness(const NodeState& n);

// `a` as it would be booked on node `n` with what Evaluate gives `request` there, or nullopt.
std::optional<Allocation> Placed(Planner& planner, const PodRequest& request, Allocation a, const NodeState& n);

// Books `a` on node j of `cluster` (Placed), judged as `viewer` sees the node (null: every hold
// counts). Returns the booked allocation, or nullopt. The holds kept for the viewer give way to
// its booking, as at bind; every other hold stays.
std::optional<Allocation> Land(Planner& planner, const PodRequest& request, Allocation a, size_t j, Overlay* cluster,
                               const Viewer* viewer = nullptr);

// The move of `was` (on its node `source`) to where it is `now`.
DefragMove MoveOf(const NodeState& source, const Allocation& was, const Allocation& now, const MoveRules& rules);

// The cluster's fragmentation as the overlay shows it (0 without a workload).
double PctOf(const Overlay& cluster, const scoring::TargetWorkload* workload);

// Where a pending pod went, and the moves that made room for it.
struct Room {
  size_t node = 0;
  Placement placement;
  std::vector<DefragMove> moves;  // in the order to make them; empty when it fit as the cluster was
  std::string reason;             // when no room: why (without the refused pods: MoveRules::Refused)
};

// Books `pending` (asking `request`) on the fullest node of *cluster that takes it as it is (its
// GPUs as the pod sees them, what_if.h; the landing rules besides), arrived there, and fills
// *room (no moves); false, changing nothing, if no node does.
bool BookWhereItFits(const PodRequest& request, const Pending& pending, const PlacementOptions& options, Overlay* cluster,
                     Room* room);

// Makes room for `pending` (asking `request`: kWholeGpu or kMgpu, valid) on *cluster with at most
// options.max_moves moves: on the fullest node that takes it as it is, else on the first candidate
// node (fewest moves, then least disruption) whose victims all land elsewhere. On success the
// pod is booked and arrived on its node, the moves made on *cluster and recorded in *rules, and
// *room says where; on failure nothing changes and room->reason says why.
bool RoomFor(const PodRequest& request, const Pending& pending, const DefragOptions& options, Overlay* cluster,
             MoveRules* rules, Room* room);

}  // namespace gpusched::placement::defrag
