#include "gpusched/placement/score_mapping.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::placement {
namespace score_mapping_test {

using ::testing::ElementsAre;

TEST(ScoreMapping, RankGivesTheTopTenDistinctScores) {
  std::vector<ScoredNode> nodes;
  std::vector<std::string> names;
  for (int i = 0; i < 12; ++i) names.push_back("n" + std::to_string(10 + i));
  for (int i = 0; i < 12; ++i) nodes.push_back({names[i], i / 100.0});
  std::vector<int64_t> s = MapScores(nodes, ScoreMapping::kRank);
  EXPECT_THAT(s, ElementsAre(0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10));
}

TEST(ScoreMapping, RankBreaksTiesByNodeName) {
  std::vector<ScoredNode> nodes = {{"b", 0.5}, {"a", 0.5}, {"c", 0.9}};
  EXPECT_THAT(MapScores(nodes, ScoreMapping::kRank), ElementsAre(8, 9, 10));
}

TEST(ScoreMapping, LinearNormalizesThenRounds) {
  std::vector<ScoredNode> nodes = {{"a", 10.0}, {"b", 14.4}, {"c", 14.6}, {"d", 20.0}};
  EXPECT_THAT(MapScores(nodes, ScoreMapping::kLinear), ElementsAre(0, 4, 5, 10));
  std::vector<ScoredNode> equal = {{"a", 3.0}, {"b", 3.0}};
  EXPECT_THAT(MapScores(equal, ScoreMapping::kLinear), ElementsAre(10, 10));
}

TEST(ScoreMapping, ScoresStayInRange) {
  std::vector<ScoredNode> nodes;
  for (int i = 0; i < 50; ++i) nodes.push_back({"n", (i * 37 % 11) / 10.0});
  for (ScoreMapping m : {ScoreMapping::kRank, ScoreMapping::kLinear}) {
    for (int64_t s : MapScores(nodes, m)) {
      EXPECT_GE(s, 0);
      EXPECT_LE(s, kMaxExtenderPriority);
    }
  }
}

TEST(ScoreMapping, BestKIsOrderedBestFirst) {
  std::vector<ScoredNode> nodes = {{"a", 0.1}, {"b", 0.9}, {"c", 0.5}, {"d", 0.9}};
  EXPECT_THAT(BestK(nodes, 2), ElementsAre(1, 3));
  EXPECT_THAT(BestK(nodes, 10), ElementsAre(1, 3, 2, 0));
}

}  // namespace score_mapping_test
}  // namespace gpusched::placement
