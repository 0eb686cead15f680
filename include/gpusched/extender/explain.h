// File: explain.h
//
// "Why is my pod Pending?": one pod judged on every node of a snapshot with the same code as
// filter, prioritize and preempt, and said in full. Per node: whether it fits, the node's mode and
// state, one reason per GPU where GPUs decide (mGPU), the score and rank where it fits, and where
// it does not, the cheapest set of lower-priority pods whose eviction makes room (preempt's victim
// choice: placement/victims.h, dra_victims.h for claim pods; budgets counted). A pod already
// placed is judged as if it were not there, beside where it is and on which GPUs.
//
// The JSON answer (fields may be added, never renamed):
//   {"pod", "request": {"kind", "wholeGpus" | "containers": [{"name", "corePercent", "memoryMiB",
//    "gpus"}]}, "placed": null | {"node", "gpus": [...]},
//    "nodes": [{"node", "fits", "mode", "state", "reasons": [...], "gpus": [{"index",
//    "freeCorePercent", "freeMemoryMiB", "freeInstances", "verdict"}], "score", "rank",
//    "wouldFitAfter": null | {"evict": [{"pod", "uid", "priority"}], "cost": {"victims",
//    "maxPriority", "pdbViolations"}}, "links" (where it fits on a node with NVLink islands)}],
//    "summary"}
// Nodes come fitting first by rank, then the others by name. "score" is null where the policy
// cannot score a node the pod fits (a soft policy finds no GPU share that suits it: -infinity).
//
// Not thread-safe: one per request.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpusched/common/helper_thread.h"
#include "gpusched/common/status.h"
#include "gpusched/extender/cheapest_eviction.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/model/allocation.h"
#include "gpusched/model/pod.h"

namespace gpusched::extender {

// One GPU judged for the pod's most demanding container (kept as numbers: an answer holds
// thousands; Verdict() spells it).
struct GpuExplanation {
  enum class Verdict { kFits, kUnhealthy, kMig, kExclusive, kNotIdle, kFull, kCore, kMemory };
  int index = 0;
  int64_t free_core_percent = 0;
  int64_t free_memory_mib = 0;
  int free_instances = 0;
  Verdict verdict = Verdict::kFits;
  int instances = 0;     // containers on it (kNotIdle, kFull)
  int64_t needs = 0;     // core percent (kCore) or MiB (kMemory)

  bool fits() const { return verdict == Verdict::kFits; }
  // "fits", or why the container cannot use this GPU ("40% core free, needs 50%").
  std::string VerdictText() const;
};

struct NodeExplanation {
  std::string node;
  bool fits = false;
  std::string mode;
  std::string state;
  // Why it does not fit: a reason of the node's, or (per_gpu_reasons) "GPU i: verdict" for each
  // GPU whose verdict is not "fits" (Reasons() spells them).
  std::vector<std::string> reasons;
  bool per_gpu_reasons = false;
  std::vector<GpuExplanation> gpus;
  std::optional<double> score;  // where it fits: the node policy's score
  std::optional<int> rank;      // 1 = where gpusched would place it
  std::optional<Evictions> would_fit_after;  // where it does not fit and evictions make room
  // Where it fits on a node with NVLink islands: how the pod's GPUs stand on them
  // (placement/node_links.h), e.g. "container c: NVLink-connected GPU2+GPU3; ...".
  std::string links;
};

// Returns the reasons of `n`, spelled out.
std::vector<std::string> Reasons(const NodeExplanation& n);

struct Explanation {
  std::string pod;  // namespace/name
  std::string request_json;
  std::optional<Allocation> placed;
  std::vector<NodeExplanation> nodes;
  std::string summary;
};

// Explains `pod` on every node of inputs.snapshot. `placed`: where the pod is bound (judged
// without its own allocation there). Errors: InvalidArgument for a pod that cannot be judged
// (no GPU request, a contract it breaks, a claim it names that is missing).
StatusOr<Explanation> Explain(const Pod& pod, const std::optional<Allocation>& placed, const EvaluationInputs& inputs);

// With a helper thread (optional, when free), the second half of the nodes is written on it.
std::string ExplanationJson(const Explanation& e, HelperThread* helper = nullptr);
// A table a person reads in a terminal: the summary, then one line per node.
std::string ExplanationText(const Explanation& e);

}  // namespace gpusched::extender
