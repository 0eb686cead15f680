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
// Applying a plan (a live cluster only) checks everything it depends on before its first
// eviction: every move has a controller and passes a dry-run eviction (the Eviction API with
// dryRun: [All], which checks the PodDisruptionBudgets), then the GPUs the plan gives the
// pending pod are held for it, then the target GPUs of every move are held for the next pod of
// the moved pod's controller (its replacement gets a new name and UID). If any of these fails,
// nothing is evicted, every hold made is dropped, and "applied" lists the pod that stopped it
// with the error and every move as not evicted. Then the pods are evicted in order. An eviction
// refused now (a budget used up meanwhile) stops the plan: the moves made stay made, the pending
// pod keeps its hold, the holds of the moves not made are dropped (but that of an eviction whose
// outcome is unknown: its pod may be gone), and "applied" lists each move as evicted or not. Holds end when their pod binds there, or after the hold time. With a
// publisher each hold is also written to its node (the annotation gpusched.io/holds, against the
// resourceVersion it was checked on), so that every replica keeps the GPUs; a node changed
// meanwhile is checked again. A pod body without metadata.uid names the pod gpusched knows by
// namespace and name; applying for a pod it does not know is refused (400).

#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "gpusched/common/status.h"
#include "gpusched/extender/hold_publisher.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/extender/pod_evictor.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/model/pod.h"

namespace gpusched::extender {

// What a plan is asked for: room for `pod`, or (without a pod) fragmentation down to the target.
struct DefragAsk {
  std::optional<Pod> pod;
  double target_frag_pct = 0;
  int max_moves = 8;
};

// What applying a plan uses (see above). Both must outlive the call.
struct DefragApplier {
  inventory::Inventory* inventory = nullptr;
  PodEvictor* evictor = nullptr;
  HoldPublisher* publisher = nullptr;  // null: the holds live in this replica's memory only
  std::chrono::seconds hold_ttl{300};
};

// The plan for `ask` on inputs.snapshot (its nodes and PodDisruptionBudgets; inputs.workloads for
// the workload fragmentation is measured for), as JSON or as text. Errors: InvalidArgument for a
// pod no move can help (no GPU request, a request that breaks its contract) or a
// negative target; FailedPrecondition for a pod already placed.
// With `apply`, the plan is then applied (see above) and the answer says what was done.
StatusOr<std::string> PlanDefrag(const DefragAsk& ask, const std::optional<Allocation>& placed,
                                 const EvaluationInputs& inputs, bool text, const DefragApplier* apply = nullptr);

}  // namespace gpusched::extender
