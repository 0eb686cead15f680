// File: defrag.h
//
// `gpusched defrag` and `POST /debug/defrag`: a dry-run plan of pod moves (placement/
// defrag_planner.h) on one inventory snapshot, that makes room for a pending pod or lowers the
// cluster's fragmentation to a target, as JSON or as a table. Nothing is evicted.
//
// The JSON answer (fields may be added, never renamed):
//   {"fits": bool, "pod": "ns/name" | null, "targetFragPct": number | null,
//    "node": name | null, "gpus": [index...], "wholeGpus": n, "devices": ["driver/pool/device"...],
//    "moves": [{"pod": "ns/name", "uid", "priority", "from", "to", "gpus": [index...],
//               "wholeGpus": n, "devices": [...], "usesBudget": bool}],
//    "fragmentedPct": {"before", "after"}, "reason": "", "notJudged": "",
//    "applied": null | [{"pod": "ns/name", "evicted": bool, "error": ""}], "held": bool}
// "gpus" are the device indices an mGPU pod gets on its node; a whole-GPU pod gets "wholeGpus"
// of them and the device plugin picks which; a pod with ResourceClaims (placement/dra_defrag.h)
// gets "devices", those its claims are allocated.
//
// "notJudged" names the pending pod's constraints gpusched does not judge (required pod affinity
// or anti-affinity, topology spread): kube-scheduler decides those. Plans follow
// placement/move_rules.h: which pods may move, and where they and the pending pod may land.
//
// Applying a plan is defrag_executor.h's; its outcome is the answer's "applied" and "held". A
// pod body without metadata.uid names the pod gpusched knows by namespace and name; applying for
// a pod it does not know is refused (400).

#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/json/writer.h"
#include "gpusched/extender/defrag_executor.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/defrag_planner.h"

namespace gpusched::extender {

// What a plan is asked for: room for `pod`, or (without a pod) fragmentation down to the target.
struct DefragAsk {
  std::optional<Pod> pod;
  double target_frag_pct = 0;
  int max_moves = 8;
};

// How a defrag request is carried out: a dry run, or applied to the live cluster
// (defrag_executor.h), where a plan whose pending pod has constraints gpusched does not judge is
// refused unless `unjudged` accepts it.
struct DefragRun {
  bool apply = false;
  UnjudgedPolicy unjudged = UnjudgedPolicy::kRefuse;
};

// A plan, and what applying it did (none for a dry run).
struct DefragResult {
  DefragAsk ask;
  placement::DefragPlan plan;
  std::optional<DefragApplied> applied;
};

// Leaves out of `nodes` those of `kept` (gang_reservation.h; null: none) where `pending` (the pods
// a plan is for) stay off it (KeptOffFor); true if it did.
// Explain's plans and evictions for a group see the cluster so.
bool LeaveOutKeptDomain(std::span<const Pod> pending, const DomainReservation* kept, const inventory::InventorySnapshot& snapshot,
                        const ServiceOptions& options, std::vector<const placement::NodeState*>* nodes);

// `in` as a plan that makes room for `pending` by moving pods sees `kept`: left out where one of
// them stays off it (LeaveOutKeptDomain); else room may be made there for them, but no moved pod
// of the gang's priority or lower lands there (DefragInput::no_landing): filter keeps such a
// pod's replacement off it. Defrag for a pod and group defrag see the cluster so.
void SeeKeptDomain(std::span<const Pod> pending, const DomainReservation* kept, const inventory::InventorySnapshot& snapshot,
                   const ServiceOptions& options, placement::DefragInput* in);

// The plan for `ask` on inputs.snapshot (its nodes and PodDisruptionBudgets; inputs.workloads for
// the workload fragmentation is measured for). Errors: InvalidArgument for a pod no move can help
// (no GPU request, a request that breaks its contract) or a negative target; FailedPrecondition
// for a pod already placed (`placed`).
StatusOr<DefragResult> PlanDefrag(const DefragAsk& ask, const std::optional<Allocation>& placed,
                                  const EvaluationInputs& inputs);

// The answer as JSON (the shape above), and as a table a person reads in a terminal.
std::string DefragJson(const DefragResult& r);
std::string DefragText(const DefragResult& r);

// The parts every defrag answer shares: "moves" (the shape above), "applied" and "held"; and the
// moves as a table, after what applying them did.
void WriteMoves(json::Writer& w, const std::vector<placement::DefragMove>& moves);
void WriteApplied(json::Writer& w, const std::optional<DefragApplied>& applied);
std::string MovesText(const std::vector<placement::DefragMove>& moves, const std::optional<DefragApplied>& applied);

// What a placement holds, as the tables show it: "2 whole", GPU indices "0,3", or device names.
std::string GpusText(const Placement& p);

}  // namespace gpusched::extender
