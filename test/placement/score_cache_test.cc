#include "gpusched/placement/score_cache.h"

#include <gtest/gtest.h>

#include "gpusched/placement/node_ranking.h"
#include "test_nodes.h"

namespace gpusched::placement {
namespace score_cache_test {

TEST(ShapeKey, SeparatesWhatChangesAVerdictOrItsReason) {
  PodRequest a = AnalyzePod(MgpuPod({MgpuC("main", 30, 8192)}));
  PodRequest again = AnalyzePod(MgpuPod({MgpuC("main", 30, 8192)}));
  PodRequest renamed = AnalyzePod(MgpuPod({MgpuC("worker", 30, 8192)}));  // reasons name containers
  PodRequest bigger = AnalyzePod(MgpuPod({MgpuC("main", 40, 8192)}));
  EXPECT_EQ(ShapeKey(a), ShapeKey(again));
  EXPECT_NE(ShapeKey(a), ShapeKey(renamed));
  EXPECT_NE(ShapeKey(a), ShapeKey(bigger));
  EXPECT_NE(ShapeKey(AnalyzePod(WholePod(1))), ShapeKey(AnalyzePod(WholePod(2))));
}

TEST(ScoreCache, AnEntryHoldsOnlyForTheGenerationItWasComputedOn) {
  ScoreCache cache;
  ScoreCache::Hit hit;
  cache.PutFit(3, 7, 0.5);
  EXPECT_TRUE(cache.Find(3, 7, &hit));
  EXPECT_EQ(hit.score, 0.5);
  EXPECT_EQ(hit.refusal, nullptr);
  EXPECT_FALSE(cache.Find(3, 8, &hit));
  EXPECT_FALSE(cache.Find(2, 7, &hit));
  cache.PutFit(4, 0, 0.9);  // a state no inventory built is never cached
  EXPECT_FALSE(cache.Find(4, 0, &hit));
  cache.PutRefusal(3, 8, NodeVerdict{.outcome = Outcome::kUnschedulable, .reject = Reject::kInsufficient, .reason = "full"});
  ASSERT_TRUE(cache.Find(3, 8, &hit));
  ASSERT_NE(hit.refusal, nullptr);
  EXPECT_EQ(hit.refusal->reason, "full");
}

// The cached scan answers exactly as a fresh one, for nodes cached, changed and new.
TEST(ScoreCache, ACachedScanAnswersAsAFreshOne) {
  std::vector<NodeState> states;
  for (int used = 0; used <= 8; ++used) {
    std::vector<Allocation> allocations;
    if (used > 0) allocations.push_back(WholeAlloc("p" + std::to_string(used), "w" + std::to_string(used), used));
    states.push_back(BuildNodeState(WholeNode("w" + std::to_string(used), 8), allocations));
    states.back().generation = 100 + used;
  }
  std::vector<const NodeState*> nodes;
  std::vector<uint32_t> order;
  std::vector<uint64_t> generations;
  for (size_t i = 0; i < states.size(); ++i) {
    nodes.push_back(&states[i]);
    order.push_back(static_cast<uint32_t>(i));
    generations.push_back(states[i].generation);
  }
  PodRequest request = AnalyzePod(WholePod(2));
  auto scorer = scoring::MakeScorer("binpack", nullptr);
  ASSERT_TRUE(scorer.ok());
  ScoreCache cache;
  auto scan = [&](ScoreCache* c) {
    Planner planner(PlacementOptions{});
    std::vector<std::string> refused;
    std::vector<RankedNode> fits = FilterAndRank(
        planner, **scorer, request, nodes, order, 1, [&](size_t pos, NodeVerdict&& v) { refused.push_back(v.reason); },
        CachedScores{c, generations});
    std::string out;
    for (const RankedNode& f : fits) out += std::to_string(f.pos) + ":" + std::to_string(f.score) + " ";
    for (const std::string& r : refused) out += r + ";";
    return out;
  };
  std::string fresh = scan(nullptr);
  EXPECT_EQ(scan(&cache), fresh);
  EXPECT_EQ(scan(&cache), fresh);  // all from the cache now
  // w1 changes: it is evaluated again, the others are not.
  states[1] = BuildNodeState(WholeNode("w1", 8), {WholeAlloc("q", "w1", 7)});
  states[1].generation = generations[1] = 200;
  std::string changed = scan(nullptr);
  EXPECT_NE(changed, fresh);
  EXPECT_EQ(scan(&cache), changed);
}

}  // namespace score_cache_test
}  // namespace gpusched::placement
