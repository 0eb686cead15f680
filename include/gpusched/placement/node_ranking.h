// File: node_ranking.h
//
// The bridge from the extender's inventory to the scoring policies: every node policy the replay
// measures (scoring/scorer.h) ranks the extender's fitting nodes through these functions, so what
// the replay reports is what filter and prioritize do.
//
// The views: a whole-GPU node shows whole_total GPUs, whole_used of them taken. An mGPU GPU shows
// the smaller of its free compute and its free memory as a fraction of the GPU (a GPU whose memory
// is gone is full whatever its compute); unhealthy, whole-card and instance-full GPUs show 0. CPU
// and memory of the node are left untracked: kube-scheduler's NodeResourcesFit checks them.
//
// Pure.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/common/random.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/scoring/node_view.h"
#include "gpusched/scoring/scorer.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::placement {

// Returns the scoring view of `node` (BuildNodeState stores it in NodeState::view).
scoring::NodeView ScoringView(const NodeState& node);
scoring::PodShape ScoringShape(const PodRequest& request);

// Returns the workload the GPU pods booked on `nodes` make up (M for fgd and the soft policies).
scoring::TargetWorkload ObservedWorkload(std::span<const NodeState* const> nodes);

// Returns the place of node `name` in a fixed pseudo-random order, in [0, 1): stable across
// restarts and replicas (a hash of the name), as the soft policies' rank penalty needs.
double StableRank(std::string_view name);

struct RankedNode {
  size_t pos = 0;    // position in the caller's node list
  double score = 0;  // the node policy's score; higher is better
};

// Scores fitting nodes as they are found, while they are still in cache, or all at the end for a
// Batch() scorer. Not thread-safe; one per request.
class Ranker {
 public:
  // REQUIRES: `scorer` outlives the ranker. `seed` feeds Random.
  Ranker(const scoring::Scorer& scorer, const PodRequest& request, uint64_t seed);

  // Adds a fitting node. order breaks ties where a policy needs it (lower first).
  void Add(size_t pos, const NodeState& node, uint32_t order);
  // Returns every added node with its score, in the order added.
  std::vector<RankedNode> Finish();

 private:
  const scoring::Scorer& scorer_;
  const bool batch_;
  const bool uses_rank_;
  const scoring::PodShape shape_;
  Rng rng_;
  std::vector<RankedNode> ranked_;               // not Batch(): scored as added
  std::vector<scoring::Candidate> candidates_;  // Batch(): scored in Finish()
  std::vector<size_t> positions_;
};

// Evaluates `request` on each of `nodes` (null entries are skipped) and scores the fitting ones
// with `scorer` in the same pass. Calls on_fail(pos, NodeVerdict&&) for each node that does not
// fit and returns the ones that do. REQUIRES: order.size() == nodes.size().
template <typename OnFail>
std::vector<RankedNode> FilterAndRank(Planner& planner, const scoring::Scorer& scorer, const PodRequest& request,
                                      std::span<const NodeState* const> nodes, std::span<const uint32_t> order,
                                      uint64_t seed, OnFail&& on_fail) {
  Ranker ranker(scorer, request, seed);
  EvaluateNodes(planner, request, nodes, [&](size_t pos, NodeVerdict&& v) {
    if (v.fits) {
      ranker.Add(pos, *nodes[pos], order[pos]);
    } else {
      on_fail(pos, std::move(v));
    }
  });
  return ranker.Finish();
}

}  // namespace gpusched::placement
