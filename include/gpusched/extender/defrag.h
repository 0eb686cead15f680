// File: defrag.h (extender)
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
//    "fragmentedPct": {"before", "after"}, "reason": "",
//    "applied": null | [{"pod": "ns/name", "evicted": bool, "error": ""}], "held": bool}
// "gpus" are the device indices an mGPU pod gets on its node; a whole-GPU pod gets "wholeGpus"
// of them and the device plugin picks which; a pod with ResourceClaims (placement/dra_defrag.h)
// gets "devices", those its claims are allocated.
//
// Applying a plan (a live cluster only): first the GPUs the plan gives the pending pod are held
// for it (if they cannot be, nothing is evicted, and "applied" lists the pending pod with the
// error), then move by move, in order: the target GPUs are held for the next pod of the moved
// pod's controller (its replacement gets a new name and UID), and the pod is evicted through the
// Eviction API, where the API server honours PodDisruptionBudgets. The first failure stops it: a
// pod without a controller (nothing would recreate it), a hold that no longer fits, an eviction
// refused; that move's hold and the pending pod's are dropped, the moves made stay made. Holds
// end when their pod binds there, or after the hold time. With a publisher each hold is also
// written to its node (the annotation gpusched.io/holds, against the resourceVersion it was
// checked on), so that every replica keeps the GPUs; a node changed meanwhile is checked again,
// a hold that cannot be written stops the plan before its eviction.
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
