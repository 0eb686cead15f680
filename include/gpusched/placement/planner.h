// File: planner.h
//
// The decision core: does a pod fit on a node, and which GPUs would it get. How good a fitting
// node is belongs to the scoring policies (node_ranking.h). The same code answers filter,
// prioritize, bind's re-check, the replay and the benchmarks.
//
// Checks run in a fixed order and the first failure is the reason: node label invalid -> mode
// mismatch -> switching -> inconsistent inventory, which every kind shares, then the judgement of
// the pod's kind (kind.h; mGPU: compute policy -> capacity). Capacity failures are resolvable
// (evicting pods could help); all others are not.
//
// Thread-safety: a Planner keeps scratch buffers and is not thread-safe; use one per request.
// Evaluate() is otherwise pure: the result depends only on its arguments and the options.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/model/allocation.h"
#include "gpusched/placement/kind.h"
#include "gpusched/placement/kinds.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/policy.h"
#include "gpusched/placement/verdict.h"

namespace gpusched::placement {

class Planner {
 public:
  explicit Planner(PlacementOptions options) : options_(options) {}

  // Returns the verdict for `request` on `node`. Fills verdict.placement only if want_placement.
  // REQUIRES: request.asks_gpu() and request.valid().
  NodeVerdict Evaluate(const PodRequest& request, const NodeState& node, bool want_placement = true);
  // True if `request` fits `node`: Evaluate's verdict alone, without the reason a refusal carries
  // (for what-ifs that try many states of one node, victims.h). Same REQUIRES as Evaluate.
  bool Fits(const PodRequest& request, const NodeState& node);
  // True if `request` fits `node`, as Fits, with the GPUs of one placement in `gpus`: for a
  // one-slice mGPU request the first GPU by index where it fits (found without allocating),
  // otherwise those of Evaluate's placement. For what-ifs that keep a witness (victims.h). Same
  // REQUIRES as Evaluate.
  bool Witness(const PodRequest& request, const NodeState& node, std::vector<int>* gpus);

  const PlacementOptions& options() const { return options_; }

 private:
  // A kind's buffers, made on first use (a kind may need none).
  struct Scratch {
    bool made = false;
    std::unique_ptr<KindScratch> buffers;
  };
  // Sets kind_ and kind_scratch_ for `request` (a scan asks for one kind thousands of times).
  void UseKind(RequestKind request) {
    if (request == kind_request_ && kind_ != nullptr) return;
    kind_request_ = request;
    kind_ = KindFor(request);
    kind_scratch_ = kind_ != nullptr ? ScratchFor(*kind_) : nullptr;
  }
  KindScratch* ScratchFor(const Kind& kind);

  PlacementOptions options_;
  std::vector<Scratch> scratch_;  // by request kind
  RequestKind kind_request_ = RequestKind::kNone;
  const Kind* kind_ = nullptr;
  KindScratch* kind_scratch_ = nullptr;
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
