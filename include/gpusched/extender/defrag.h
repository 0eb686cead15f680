// File: defrag.h (extender)
//
// `gpusched defrag` and `POST /debug/defrag`: a dry-run plan of pod moves (placement/
// defrag_planner.h) on one inventory snapshot, that makes room for a pending pod or lowers the
// cluster's fragmentation to a target, as JSON or as a table. Nothing is evicted.
//
// The JSON answer (fields may be added, never renamed):
//   {"fits": bool, "pod": "ns/name" | null, "targetFragPct": number | null,
//    "node": name | null, "gpus": [index...], "wholeGpus": n,
//    "moves": [{"pod": "ns/name", "uid", "priority", "from", "to", "gpus": [index...],
//               "wholeGpus": n, "usesBudget": bool}],
//    "fragmentedPct": {"before", "after"}, "reason": ""}
// "gpus" are the device indices an mGPU pod gets on its node; a whole-GPU pod gets "wholeGpus"
// of them and the device plugin picks which.
#pragma once

#include <optional>
#include <string>

#include "gpusched/common/status.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/model/pod.h"

namespace gpusched::extender {

// What a plan is asked for: room for `pod`, or (without a pod) fragmentation down to the target.
struct DefragAsk {
  std::optional<Pod> pod;
  double target_frag_pct = 0;
  int max_moves = 8;
};

// The plan for `ask` on inputs.snapshot (its nodes and PodDisruptionBudgets; inputs.workloads for
// the workload fragmentation is measured for), as JSON or as text. Errors: InvalidArgument for a
// pod no move can help (no GPU request, a DRA pod, a request that breaks its contract) or a
// negative target; FailedPrecondition for a pod already placed.
StatusOr<std::string> PlanDefrag(const DefragAsk& ask, const std::optional<Allocation>& placed,
                                 const EvaluationInputs& inputs, bool text);

}  // namespace gpusched::extender
