// File: score_mapping.h
//
// kube-scheduler takes extender scores as integers in [0, 10] and breaks ties at random, so the
// internal scores (doubles in [0, 1]) must be mapped with care:
//
//   kRank    nodes are ordered by (internal score desc, node name asc); the best gets 10, the
//            next 9, ... the 11th and later 0. Every one of the top 10 gets a distinct score, so
//            the policy's order survives the 0-10 scale (a weight of 12 or more makes it decide).
//   kLinear  the scores min-max normalized over the nodes, then round(10 * x): nearby scores
//            collapse, and kube-scheduler picks among equal ones at random.
//
// BestK narrows a candidate list to the k best by the same order, for filter's top-K option.
//
// Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace gpusched::placement {

inline constexpr int64_t kMaxExtenderPriority = 10;

enum class ScoreMapping { kRank, kLinear };

std::optional<ScoreMapping> ParseScoreMapping(std::string_view name);
std::string_view ScoreMappingName(ScoreMapping mapping);

struct ScoredNode {
  std::string_view name;
  double score = 0;  // the policy's score: any scale, higher is better
};

// Returns the extender score of each node, in input order, each in [0, kMaxExtenderPriority].
std::vector<int64_t> MapScores(std::span<const ScoredNode> nodes, ScoreMapping mapping);

// Returns the positions of the best min(k, size) nodes, best first.
std::vector<size_t> BestK(std::span<const ScoredNode> nodes, size_t k);

}  // namespace gpusched::placement
