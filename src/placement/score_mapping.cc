// File: score_mapping.cc
//
// Scores to kube-scheduler's 0-10: the best-first order (score desc, name asc), kRank's 10, 9, ...
// for the top ten, kLinear's min-max normalization, the best K, and the mappings' names.
#include "gpusched/placement/score_mapping.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gpusched::placement {
namespace {

// Returns the positions of `nodes` ordered best first: score desc, then name asc.
std::vector<size_t> Order(std::span<const ScoredNode> nodes, size_t k) {
  std::vector<size_t> order(nodes.size());
  std::iota(order.begin(), order.end(), 0);
  auto better = [&](size_t a, size_t b) {
    if (nodes[a].score != nodes[b].score) return nodes[a].score > nodes[b].score;
    return nodes[a].name < nodes[b].name;
  };
  k = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), better);
  order.resize(k);
  return order;
}

}  // namespace

std::optional<ScoreMapping> ParseScoreMapping(std::string_view name) {
  if (name == "rank") return ScoreMapping::kRank;
  if (name == "linear") return ScoreMapping::kLinear;
  return std::nullopt;
}

std::string_view ScoreMappingName(ScoreMapping mapping) {
  return mapping == ScoreMapping::kRank ? "rank" : "linear";
}

std::vector<int64_t> MapScores(std::span<const ScoredNode> nodes, ScoreMapping mapping) {
  std::vector<int64_t> out(nodes.size(), 0);
  if (mapping == ScoreMapping::kLinear) {
    if (nodes.empty()) return out;
    auto [lo, hi] = std::minmax_element(nodes.begin(), nodes.end(),
                                        [](const ScoredNode& a, const ScoredNode& b) { return a.score < b.score; });
    double range = hi->score - lo->score;
    for (size_t i = 0; i < nodes.size(); ++i) {
      double x = range > 0 ? (nodes[i].score - lo->score) / range : 1.0;
      out[i] = static_cast<int64_t>(std::lround(x * kMaxExtenderPriority));
    }
    return out;
  }
  std::vector<size_t> top = Order(nodes, kMaxExtenderPriority);
  for (size_t rank = 0; rank < top.size(); ++rank) {
    out[top[rank]] = kMaxExtenderPriority - static_cast<int64_t>(rank);
  }
  return out;
}

std::vector<size_t> BestK(std::span<const ScoredNode> nodes, size_t k) { return Order(nodes, k); }

}  // namespace gpusched::placement
