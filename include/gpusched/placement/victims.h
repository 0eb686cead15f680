// File: victims.h
//
// Which pods must leave a node for a pending pod to fit there, by gpusched's own rules (the GPUs
// the pod would get in the node's mode): the decision behind the preempt verb and explain's
// "would fit after".
//
// The choice on one node follows kube-scheduler's (SelectVictimsOnNode in DefaultPreemption):
// every pod holding GPUs there with a lower priority than the pending pod's is a candidate, unless
// it is being deleted already or the caller rules it out (a pod kube-scheduler may not know yet);
// if the pod does not fit with every candidate gone, the node cannot help. Otherwise candidates
// are given back one at a time, those whose eviction would violate a PodDisruptionBudget first,
// each group in decreasing priority (then UID, so that the answer is deterministic), and one
// stays a victim only if the pod no longer fits with it back. Every victim is then needed: giving
// any one back leaves no room (adding pods only takes room away). A pod spread over several GPUs
// is one victim.
//
// Nodes that are not ready (switching mode, invalid label, inconsistent) are never helped by
// evictions: their refusal does not depend on the pods that run there.
//
// Speed: the choice reads the node's packed allocations (NodeState::packed, in the order of
// importance NodeState::by_importance), and undoes a try by the GPU slots it changed. For a
// one-slice mGPU pod (the common one) it counts the GPUs that take the slice and rechecks only
// those a candidate uses (IsOneSlice and its parts, kinds/mgpu.h); for other mGPU pods it keeps a
// witness, the GPUs of a placement the planner found: a candidate on none of them is given back
// without asking again. The planner confirms the final state; where it does not (a shortcut
// missing what the planner sees), the choice is made again asking it at every step. The answers
// are checked against the plain reprieve by a randomized test (victims_test).
//
// Pure: the result depends only on the arguments (VictimFinder keeps buffers, not state).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/allocation_list.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/what_if.h"

namespace gpusched::placement {

struct VictimRules {
  int32_t priority = 0;  // only pods of lower priority may be evicted (preempt: the pending pod's)
  // The pending pod as holds see it (what_if.h): its own hold, one kept for its controller and
  // holds of pods of lower priority are room for it; the others are never freed.
  Viewer viewer;
  // True: only pods kube-scheduler knows may be named (observed bound, or committed by this
  // gpusched, which kube-scheduler assumed first): never another replica's booking.
  bool known_only = false;
  // True if evicting the pod would violate a PodDisruptionBudget; null: none would. Called once
  // per candidate, in decreasing priority then UID, so that it can use budgets up in that order.
  std::function<bool(const Allocation&)> violates_pdb;
  // True if pod `uid` must stay whatever it holds: evicting it would break a constraint of the
  // pending pod that gpusched does not judge (a pod its required affinity selects). Null: none.
  std::function<bool(std::string_view uid)> keeps;
  // True if pod `uid` leaves anyway (a victim the caller must answer whatever gpusched chooses):
  // the choice is made on the node without it, and it is not among the victims chosen. Null: none.
  std::function<bool(std::string_view uid)> leaving;
};

struct VictimChoice {
  bool helps = false;                  // some evictions make the pod fit (none may be needed)
  // When helps: decreasing priority, then UID. They point into the node's state (NodeState or
  // its snapshot), which must outlive the choice.
  std::vector<const Allocation*> victims;
  // Victims made for the choice (dra_victims.h: a pod known only from the node's pod list), kept
  // alive with it; empty otherwise.
  std::vector<AllocationPtr> owned;
  int64_t pdb_violations = 0;          // victims whose eviction violates a budget
  std::string reason;                  // when !helps: why evictions cannot make room
};

// Returns true if the pod of `a` may be evicted for the pending pod: lower priority, not
// terminating, known to kube-scheduler where the rules ask.
bool IsCandidate(const PackedAllocation& a, const VictimRules& rules);
bool IsCandidate(const Allocation& a, const VictimRules& rules);

// The reprieve every mode shares, once the pod fits with all `candidates` gone: they are split
// into those whose eviction violates a budget (rules.violates_pdb, called in the order below) and
// the others, each group in decreasing priority then UID, and each in turn is offered back through
// `give_back`, which returns true if the pod still fits with it back (it stays back) and false
// otherwise (having undone it: it is a victim). Appends the victims to out->victims in decreasing
// priority then UID, and counts out->pdb_violations.
void Reprieve(std::vector<const AllocationPtr*> candidates, const VictimRules& rules,
              const std::function<bool(const Allocation&)>& give_back, VictimChoice* out);

// VictimChoice::reason where the pod does not fit with all `candidates` evicted.
std::string NoRoomReason(size_t candidates);

// Starts fetching into the cache what victim choice reads of `node` (its packed allocations and
// GPUs, and its pods' UIDs), for a caller about to choose on another node first.
void PrefetchForVictims(const NodeState& node);

// Chooses victims node after node for one pending pod, keeping its buffers from one node to the
// next (a preempt asks about hundreds of nodes). Not thread-safe: one per request and thread.
class VictimFinder {
 public:
  explicit VictimFinder(PlacementOptions options);
  ~VictimFinder();

  // Chooses the pods to evict from `node` so that `request` fits there.
  // REQUIRES: request.device_plugin() and request.valid().
  VictimChoice Choose(const PodRequest& request, const NodeState& node, const VictimRules& rules);

 private:
  // The search's state, kept from one node to the next for its buffers (victims.cc).
  struct Search;

  // Sets the search's candidates to the node's (positions into node.allocations) in decreasing
  // priority then UID.
  void ListCandidates(const NodeState& node, const VictimRules& rules);
  // The reprieve of the candidates on the node's kept use, into the victims and `out`: with a
  // witness (the GPUs of a placement of the pod as the node stands; a candidate on none of them
  // is given back without asking the planner), or for a one-slice pod by counting the GPUs that
  // take the slice (a candidate rechecks only the GPUs it uses). Each returns false if the planner does not confirm
  // the final state (the search and `out` then undefined); the caller then asks it at every step.
  bool GiveBackWithWitness(const PodRequest& request, const NodeState& node, VictimChoice* out);
  bool GiveBackOneSlice(const PodRequest& request, const NodeState& node, VictimChoice* out);
  void GiveBackAskingEachTime(const PodRequest& request, const NodeState& node, VictimChoice* out);

  Planner planner_;
  std::unique_ptr<Search> s_;
};

}  // namespace gpusched::placement
