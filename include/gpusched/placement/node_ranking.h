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
#include "gpusched/placement/score_cache.h"
#include "gpusched/scoring/node_view.h"
#include "gpusched/scoring/scorer.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::placement {

// Returns the scoring view of `node` (BuildNodeState stores it in NodeState::view).
scoring::NodeView ScoringView(const NodeState& node);
scoring::PodShape ScoringShape(const PodRequest& request);

// Returns the workload the GPU pods booked on `nodes` make up (M for fgd and the soft policies),
// with its picky shapes (scoring/reservation.h) by the nodes' GPU counts.
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

// Scores computed for earlier pods of the same shape and node policy: `cache`, and the
// generation of each node of the call (aligned with its nodes). Ignored for Batch() scorers,
// whose scores depend on the other candidates.
struct CachedScores {
  ScoreCache* cache = nullptr;
  std::span<const uint64_t> generations;
};

// Returns `a` and `b`, each ordered by pos, merged in pos order.
std::vector<RankedNode> MergeByPosition(std::vector<RankedNode> a, const std::vector<RankedNode>& b);

// FilterAndRank with a cache: hits first, from the cache's flat array; then the misses,
// evaluated as without one. Refusals reach on_fail in node order either way.
template <typename OnFail>
std::vector<RankedNode> FilterAndRankCached(Planner& planner, Ranker& ranker, const PodRequest& request,
                                            std::span<const NodeState* const> nodes, std::span<const uint32_t> order,
                                            OnFail&& on_fail, ScoreCache& cache, std::span<const uint64_t> generations) {
  std::vector<RankedNode> hits;
  hits.reserve(nodes.size());
  std::vector<std::pair<size_t, NodeVerdict>> refusals;  // from the cache
  std::vector<const NodeState*> missed;
  std::vector<size_t> missed_pos;
  for (size_t pos = 0; pos < nodes.size(); ++pos) {
    if (nodes[pos] == nullptr) continue;
    ScoreCache::Hit hit;
    if (!cache.Find(order[pos], generations[pos], &hit)) {
      missed.push_back(nodes[pos]);
      missed_pos.push_back(pos);
    } else if (hit.refusal == nullptr) {
      hits.push_back(RankedNode{pos, hit.score});
    } else {
      refusals.emplace_back(pos, *hit.refusal);
    }
  }
  std::vector<std::pair<size_t, NodeVerdict>> fresh_refusals;
  EvaluateNodes(planner, request, missed, [&](size_t i, NodeVerdict&& v) {
    size_t pos = missed_pos[i];
    if (v.fits()) {
      ranker.Add(pos, *nodes[pos], order[pos]);
    } else {
      cache.PutRefusal(order[pos], generations[pos], v);
      fresh_refusals.emplace_back(pos, std::move(v));
    }
  });
  size_t next = 0;
  auto flush_before = [&](size_t pos) {
    for (; next < refusals.size() && refusals[next].first < pos; ++next) {
      on_fail(refusals[next].first, std::move(refusals[next].second));
    }
  };
  for (auto& [pos, verdict] : fresh_refusals) {
    flush_before(pos);
    on_fail(pos, std::move(verdict));
  }
  flush_before(nodes.size());
  std::vector<RankedNode> fresh = ranker.Finish();
  for (const RankedNode& r : fresh) cache.PutFit(order[r.pos], generations[r.pos], r.score);
  return MergeByPosition(std::move(hits), fresh);
}

// Evaluates `request` on each of `nodes` (null entries are skipped) and scores the fitting ones
// with `scorer` in the same pass. Calls on_fail(pos, NodeVerdict&&) for each node that does not
// fit and returns the ones that do, in node order. With `cached`, a node whose generation the
// cache holds a verdict for is not evaluated again, and fresh verdicts are added to the cache.
// REQUIRES: order.size() == nodes.size() (and cached.generations.size(), with a cache).
template <typename OnFail>
std::vector<RankedNode> FilterAndRank(Planner& planner, const scoring::Scorer& scorer, const PodRequest& request,
                                      std::span<const NodeState* const> nodes, std::span<const uint32_t> order,
                                      uint64_t seed, OnFail&& on_fail, CachedScores cached = {}) {
  Ranker ranker(scorer, request, seed);
  if (cached.cache != nullptr && !scorer.Batch()) {
    return FilterAndRankCached(planner, ranker, request, nodes, order, on_fail, *cached.cache, cached.generations);
  }
  EvaluateNodes(planner, request, nodes, [&](size_t pos, NodeVerdict&& v) {
    if (v.fits()) {
      ranker.Add(pos, *nodes[pos], order[pos]);
    } else {
      on_fail(pos, std::move(v));
    }
  });
  return ranker.Finish();
}

}  // namespace gpusched::placement
