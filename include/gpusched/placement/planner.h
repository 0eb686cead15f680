// File: planner.h
//
// The decision core: does a pod fit on a node, and which GPUs would it get. How good a fitting
// node is belongs to the scoring policies (node_ranking.h). The same code answers filter,
// prioritize, bind's re-check, the replay and the benchmarks.
//
// Checks run in a fixed order and the first failure is the reason:
//   node label invalid -> mode mismatch -> switching -> inconsistent inventory
//   -> compute policy (mGPU) -> capacity.
// Capacity failures are resolvable (evicting pods could help); all others are not.
//
// Thread-safety: a Planner keeps scratch buffers and is not thread-safe; use one per request.
// Evaluate() is otherwise pure: the result depends only on its arguments and the options.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/model/allocation.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/policy.h"

namespace gpusched::placement {

// Why a node was refused, as a category (metrics); NodeVerdict::reason has the details.
enum class Reject {
  kNone,
  kInvalidLabel,   // the node's mode label is not a mode
  kModeMismatch,   // the node's mode does not serve the pod's kind of GPU
  kSwitching,      // pods of the node's old mode still run
  kInconsistent,   // the node's GPU inventory cannot be trusted
  kComputePolicy,  // mGPU compute policies differ
  kInsufficient,   // not enough free GPU (or the search budget ran out)
  kInvalidRequest, // the pod's own request is at fault (a DRA selector that does not compile, ...)
  kNodeFit,        // kube-scheduler's other filters refuse the pod there (node_fit.h); explain only
  kUnknownNode,    // not in the inventory; keep last
};
inline constexpr size_t kRejectKinds = static_cast<size_t>(Reject::kUnknownNode) + 1;

// Returns a short snake_case name for `r` ("insufficient", ...).
std::string_view RejectName(Reject r);

struct NodeVerdict {
  bool fits = false;
  Reject reject = Reject::kNone;  // when !fits
  // When !fits: false if no change on this node short of relabelling or repairing it can help
  // (kube-scheduler's FailedAndUnresolvableNodes), true if freeing GPUs could (FailedNodes).
  bool resolvable = false;
  std::string reason;    // when !fits
  Placement placement;   // when fits and a placement was asked for
};

class Planner {
 public:
  explicit Planner(PlacementOptions options) : options_(options) {}

  // Returns the verdict for `request` on `node`. Fills verdict.placement only if want_placement.
  // REQUIRES: request.device_plugin() and request.valid().
  NodeVerdict Evaluate(const PodRequest& request, const NodeState& node, bool want_placement = true);
  // True if `request` fits `node`: Evaluate's verdict alone, without the reason a refusal carries
  // (for what-ifs that try many states of one node, victims.h). Same REQUIRES as Evaluate.
  bool Fits(const PodRequest& request, const NodeState& node);
  // True if `request` fits `node`, as Fits, with the GPUs of one placement in `gpus`: for a
  // one-slice mGPU request the first GPU by index where it fits (found without allocating),
  // otherwise those of Evaluate's placement. For what-ifs that keep a witness (victims.h). Same
  // REQUIRES as Evaluate.
  bool Witness(const PodRequest& request, const NodeState& node, std::vector<int>* gpus);

  // A one-slice mGPU request (IsOneSlice: one container on one shared GPU, the common mGPU pod)
  // fits a ready mGPU node exactly when PolicyMatches, TotalsFit, and some GPU passes
  // GpuTakesSlice: Fits in parts, for what-ifs that follow one node through many states and
  // recheck only what each change touches (victims.h).
  static bool IsOneSlice(const PodRequest& request);
  // The node's mGPU compute policy is the pod's, or the pod takes any. REQUIRES: mGPU request.
  static bool PolicyMatches(const PodRequest& request, const NodeState& node);
  // The node's free mGPU totals cover the pod's. REQUIRES: mGPU request.
  static bool TotalsFit(const PodRequest& request, const NodeState& node);
  // GPU `gpu` takes the slice. REQUIRES: IsOneSlice(request).
  static bool GpuTakesSlice(const PodRequest& request, const GpuSlot& gpu);

  const PlacementOptions& options() const { return options_; }

 private:
  struct Work {
    int index;
    int numa;
    bool healthy;
    bool exclusive;
    int instances;
    int64_t free_milli;
    int64_t free_mib;
    int64_t memory_mib;
  };
  // A candidate GPU set for one container: positions into work_, stored in option_pool_.
  struct Option {
    int begin;
    int count;
    double key;
  };

  void EvaluateWhole(const PodRequest& request, const NodeState& node, NodeVerdict* v);
  void EvaluateMgpu(const PodRequest& request, const NodeState& node, Policy gpu_policy, bool want_placement,
                    NodeVerdict* v);
  // Appends the options for container `c` on the current work_ state to option_pool_/options.
  void CollectOptions(const MgpuContainerRequest& c, Policy gpu_policy, std::vector<Option>* options);
  // EvaluateMgpu's refusals before any per-GPU work, and its one-slice placement.
  static void RejectComputePolicy(const PodRequest& request, const NodeState& node, NodeVerdict* v);
  static void RejectTotals(const PodRequest& request, const NodeState& node, NodeVerdict* v);
  static void PlaceSlice(const MgpuContainerRequest& c, int gpu_index, NodeVerdict* v);
  void SearchMgpu(const PodRequest& request, const NodeState& node, Policy gpu_policy, bool want_placement, NodeVerdict* v);
  bool Search(const PodRequest& request, size_t next, Policy gpu_policy);
  // Places each regular init container for its own phase, beside the other pods and the sidecars
  // declared before it, on the GPUs where the pod's booking grows least. Returns false if one
  // does not fit. REQUIRES: chosen_ holds the other containers' GPUs.
  bool PlaceTransient(const PodRequest& request, Policy gpu_policy);
  void Apply(const MgpuContainerRequest& c, const Option& o, int sign);
  static bool FitsEmptyNode(const PodRequest& request, const NodeState& node);
  std::string ExplainFailure(const PodRequest& request, const NodeState& node, Policy gpu_policy);

  PlacementOptions options_;
  // Scratch, reused across Evaluate calls.
  std::vector<Work> work_;
  std::vector<Work> base_;  // work_ before the pod: the other pods' use
  std::vector<std::vector<int>> transient_slots_;  // by container: positions in work_
  std::vector<int> option_pool_;
  std::vector<std::vector<Option>> options_by_depth_;
  std::vector<Option> chosen_;
  std::vector<int> candidates_;
  int steps_ = 0;
  bool budget_hit_ = false;
  bool explain_ = true;  // false inside Fits: refusals skip their reasons
  std::vector<int>* witness_ = nullptr;  // inside Witness: where the one-slice scan reports its GPU
};

// Evaluates `request` on each of `nodes` in order and calls on_verdict(i, NodeVerdict&&) for each;
// a null entry (a node the inventory does not know) is skipped without a call. Prefetches ahead,
// so a scan over thousands of nodes is not bound by memory latency. Verdicts carry no placement.
template <typename OnVerdict>
void EvaluateNodes(Planner& planner, const PodRequest& request, std::span<const NodeState* const> nodes,
                   OnVerdict&& on_verdict) {
  // The hot part of a NodeState (checks and the scoring view) spans four cache lines; its GPUs
  // live elsewhere. Fetch the state kAhead nodes ahead and, once that has arrived, its GPUs
  // kAhead / 2 nodes ahead.
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i + kAhead < nodes.size() && nodes[i + kAhead] != nullptr) {
      const char* p = reinterpret_cast<const char*>(nodes[i + kAhead]);
      for (int line = 0; line < 4; ++line) __builtin_prefetch(p + 64 * line);
    }
    if (i + kAhead / 2 < nodes.size() && nodes[i + kAhead / 2] != nullptr) {
      __builtin_prefetch(nodes[i + kAhead / 2]->gpus.data());
    }
    if (nodes[i] == nullptr) continue;
    on_verdict(i, planner.Evaluate(request, *nodes[i], /*want_placement=*/false));
  }
}

}  // namespace gpusched::placement
