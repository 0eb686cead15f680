#include "gpusched/scoring/scorer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "gpusched/scoring/fragmentation.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::scoring {
namespace scorer_test {

using ::testing::DoubleNear;
using ::testing::ElementsAre;

NodeView Node(std::vector<int32_t> free, int64_t cpu = kUntracked, int model = -1) {
  NodeView v{.model = model, .cpu_free = cpu, .gpu_count = static_cast<int>(free.size())};
  for (size_t i = 0; i < free.size(); ++i) v.gpu_free[i] = free[i];
  return v;
}

PodShape Share(int32_t milli, int64_t cpu = 0) { return PodShape{.cpu = cpu, .gpus = 1, .milli = milli}; }
PodShape Whole(int k, int64_t cpu = 0) { return PodShape{.cpu = cpu, .gpus = k, .milli = 1000}; }

std::vector<Choice> ScoreAll(const Scorer& s, const PodShape& pod, const std::vector<NodeView>& nodes, uint64_t seed = 1) {
  std::vector<Candidate> c;
  for (size_t i = 0; i < nodes.size(); ++i) c.push_back(Candidate{.node = &nodes[i], .order = static_cast<uint32_t>(i)});
  std::vector<Choice> out(nodes.size());
  Rng rng(seed);
  s.Score(pod, c, out, rng);
  return out;
}

std::unique_ptr<Scorer> Make(std::string_view name, const TargetWorkload* w = nullptr) {
  auto s = MakeScorer(name, w);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return std::move(s).value();
}

// The worked example of fgd-replay.md §4: M = {A: 4000 mCPU, 1 x 500, p .5; B: 4000, 1 x 1000,
// p .3; C: CPU-only 2000, p .2}; node c = 8000, g = [1000, 500].
TargetWorkload PaperWorkload() {
  return TargetWorkload{.classes = {TaskClass{.cpu = 4000, .milli = 500, .gpus = 1, .p = 0.5},
                                    TaskClass{.cpu = 4000, .milli = 1000, .gpus = 1, .p = 0.3},
                                    TaskClass{.cpu = 2000, .milli = 0, .gpus = 0, .p = 0.2}}};
}

TEST(Fragmentation, PaperWorkedExample) {
  TargetWorkload m = PaperWorkload();
  EXPECT_DOUBLE_EQ(FgdFragmentation(Node({1000, 500}, 8000), m), 450);
  EXPECT_DOUBLE_EQ(FgdFragmentation(Node({1000, 0}, 6000), m), 200);
  EXPECT_DOUBLE_EQ(FgdFragmentation(Node({500, 500}, 6000), m), 500);
}

TEST(FgdScorer, PaperWorkedExampleChoosesGpu1WithScore56) {
  TargetWorkload m = PaperWorkload();
  auto fgd = Make("fgd", &m);
  std::vector<Choice> c = ScoreAll(*fgd, Share(500, 2000), {Node({1000, 500}, 8000)});
  EXPECT_EQ(c[0].score, 56);  // floor(100 sigmoid(250/1000))
  EXPECT_EQ(c[0].gpu, 1);
}

TEST(FgdScorer, WholePodsTakeLowestFreeGpusAndQuantize) {
  TargetWorkload m = PaperWorkload();
  auto fgd = Make("fgd", &m);
  // Before F = 450 (above); after taking GPU0: g = [0, 500], c = 6000 -> A fits on GPU1 (frag 0),
  // B does not (frag 500), C idle 500: F = .3*500 + .2*500 = 250, delta 200 -> floor(100 s(0.2)) = 54.
  std::vector<Choice> c = ScoreAll(*fgd, Whole(1, 2000), {Node({1000, 500}, 8000)});
  EXPECT_EQ(c[0].score, std::floor(100.0 / (1 + std::exp(-0.2))));
  EXPECT_EQ(c[0].gpu, -1);
}

TEST(PackingScorer, FollowsTheArtifactsThreeCases) {
  auto packing = Make("packing");
  std::vector<Choice> c = ScoreAll(*packing, Share(200), {Node(std::vector<int32_t>(8, 1000)),
                                                          Node({1000, 1000}),
                                                          Node({1000, 300, 1000}),
                                                          Node({0, 1000, 1000})});
  EXPECT_EQ(c[0].score, 25);  // idle 8-GPU node: max(33 - 8, 8)
  EXPECT_EQ(c[1].score, 31);  // idle 2-GPU node: max(33 - 2, 2)
  EXPECT_EQ(c[2].score, 97);  // fits a used GPU with 300 free: 100 - (300*100/1000)/10
  EXPECT_EQ(c[3].score, 49);  // needs a fully free GPU on a used node: max(50 - 1, 33)
  EXPECT_EQ(ScoreAll(*packing, PodShape{.cpu = 1000}, {Node({1000})})[0].score, 0);  // CPU-only
}

TEST(ClusteringScorer, RewardsNodesHoldingTheSameTag) {
  auto clustering = Make("clustering");
  NodeView same = Node({500, 1000});
  same.tags[0] = 1;  // one sharing pod
  NodeView mixed = same;
  mixed.tags[1] = 1;  // and a 1-GPU pod
  NodeView other = Node({1000, 0});
  other.tags[1] = 1;
  NodeView idle = Node({1000, 1000});
  std::vector<Choice> c = ScoreAll(*clustering, Share(200), {same, mixed, other, idle});
  // base = 25 * (8000 - idle milli) / 8000, integer division
  EXPECT_EQ(c[0].score, 25 * (8000 - 1500) / 8000 + 75);
  EXPECT_EQ(c[1].score, 25 * (8000 - 1500) / 8000 + 50);
  EXPECT_EQ(c[2].score, 25 * (8000 - 1000) / 8000 + 0);
  EXPECT_EQ(c[3].score, 25 * (8000 - 2000) / 8000 + 25);
}

TEST(BestFitScorer, MinMaxNormalizesTruncatedScores) {
  auto bestfit = Make("bestfit");
  std::vector<NodeView> nodes = {Node({1000, 1000}, 64000), Node({300, 0}, 16000), Node({1000}, 32000)};
  std::vector<Choice> c = ScoreAll(*bestfit, Share(200, 4000), nodes);
  // raw = floor(100 (1 - [.5 (cpu-4000)/128000 + .5 (gpu-200)/8000])): 65, 94, 84 -> (raw-65)*100/29
  EXPECT_EQ(c[0].score, 0);
  EXPECT_EQ(c[1].score, 100);
  EXPECT_EQ(c[2].score, (84 - 65) * 100 / 29);
  EXPECT_EQ(c[1].gpu, 0);  // the best-fit GPU
  EXPECT_THAT(ScoreAll(*bestfit, Share(200), {nodes[0], nodes[0]})[0].score, 0);  // all equal -> 0
}

TEST(DotProdScorer, PrefersASmallDotProduct) {
  auto dotprod = Make("dotprod");
  std::vector<Choice> c = ScoreAll(*dotprod, Whole(1, 8000), {Node(std::vector<int32_t>(8, 1000), 96000), Node({1000}, 8000)});
  // 1 - ((96000/128000)(8000/128000) + (8000/8000)(1000/8000))/2 = 0.91406 -> 91
  EXPECT_EQ(c[0].score, 91);
  // 1 - ((8000/128000)(8000/128000) + (1000/8000)(1000/8000))/2 = 0.99023 -> 99
  EXPECT_EQ(c[1].score, 99);
}

TEST(RandomScorer, PicksOneFeasibleNodeAndGpu) {
  auto random = Make("random");
  std::vector<NodeView> nodes = {Node({1000, 1000}), Node({1000, 500}), Node({200, 900})};
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<Choice> c = ScoreAll(*random, Share(400), nodes, seed);
    int picked = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      if (c[i].score == 100) {
        ++picked;
        EXPECT_GE(nodes[i].gpu_free[c[i].gpu], 400);
      }
    }
    EXPECT_EQ(picked, 1);
  }
}

TEST(UtilizationScorer, BinpackAndSpreadAreOpposites) {
  auto binpack = Make("binpack");
  auto spread = Make("spread");
  std::vector<NodeView> nodes = {Node({1000, 1000, 1000, 1000}), Node({0, 0, 0, 1000})};
  std::vector<Choice> b = ScoreAll(*binpack, Whole(1), nodes);
  std::vector<Choice> s = ScoreAll(*spread, Whole(1), nodes);
  EXPECT_DOUBLE_EQ(b[0].score, 0.25);
  EXPECT_DOUBLE_EQ(b[1].score, 1.0);
  EXPECT_DOUBLE_EQ(s[0].score, 0.75);
  EXPECT_DOUBLE_EQ(s[1].score, 0.0);
  EXPECT_EQ(ScoreAll(*binpack, Share(300), {Node({1000, 400, 900})})[0].gpu, 1);
  EXPECT_EQ(ScoreAll(*spread, Share(300), {Node({400, 1000, 900})})[0].gpu, 1);
}

TEST(Best, HighestScoreThenLowestOrder) {
  NodeView n = Node({1000});
  std::vector<Candidate> c = {{.node = &n, .order = 5}, {.node = &n, .order = 2}, {.node = &n, .order = 9}};
  std::vector<Choice> s = {{.score = 7}, {.score = 7}, {.score = 3}};
  EXPECT_EQ(Best(c, s), 1u);
}

TEST(SoftScorer, ExactDeltaMinusRankPenalty) {
  TargetWorkload m = PaperWorkload();
  auto softfgd = Make("softfgd", &m);
  NodeView node = Node({1000, 500}, 8000);
  std::vector<Candidate> c = {{.node = &node, .order = 0, .rank = 0.0}, {.node = &node, .order = 1, .rank = 0.5}};
  std::vector<Choice> out(2);
  Rng rng(1);
  softfgd->Score(Share(500, 2000), c, out, rng);
  EXPECT_DOUBLE_EQ(out[0].score, 250);          // dF on GPU1, exact
  EXPECT_DOUBLE_EQ(out[1].score, 250 - 1600);   // lambda 3200 x rank 0.5
  EXPECT_EQ(out[0].gpu, 1);
}

TEST(FillFragmentation, CountsWhatEachClassCouldStillPlace) {
  TargetWorkload m = PaperWorkload();
  m.classes[0].mem_mean = 0;
  // g = [1000, 500], c = 8000: A (500) fits 3 by GPU, 2 by CPU -> N = 2: idle 1500 - 2*500 = 500.
  // B (1000) fits 1 by GPU, 2 by CPU -> 1: 1500 - 1000 = 500. C is CPU-only: skipped.
  EXPECT_DOUBLE_EQ(FillFragmentation(Node({1000, 500}, 8000), m), 0.5 * 500 + 0.3 * 500);
}

TEST(TargetWorkload, KeepsTheMostCommonClassesUpToCoverage) {
  std::vector<WorkloadSample> s;
  for (int i = 0; i < 6; ++i) s.push_back({Share(500, 1000), ""});
  for (int i = 0; i < 3; ++i) s.push_back({Whole(1, 2000), ""});
  s.push_back({Whole(8, 9000), ""});
  TargetWorkload m = BuildTargetWorkload(s, 0.85);
  ASSERT_EQ(m.classes.size(), 2u);  // 6 + 3 of 10 covers 85%
  EXPECT_DOUBLE_EQ(m.classes[0].p, 6.0 / 9);
  EXPECT_EQ(m.classes[1].gpus, 1);
  EXPECT_EQ(BuildTargetWorkload(s, 0.95).classes.size(), 3u);
}

TEST(TargetWorkload, GapValueOfADeadGapIsTheGap) {
  std::vector<WorkloadSample> s = {{Share(300), ""}, {Share(300), ""}, {Share(800), ""}};
  TargetWorkload m;
  BuildGapValue(s, 0.05, &m);
  ASSERT_EQ(m.gap_value.size(), 1001u);
  EXPECT_DOUBLE_EQ(m.gap_value[299], 299);  // nothing fits: the whole gap is lost
  EXPECT_LT(m.gap_value[300], 300);          // a 300 pod can refill it
  EXPECT_LT(m.gap_value[600], m.gap_value[599]);
}

TEST(MakeScorer, KnowsEveryNameAndRejectsOthers) {
  TargetWorkload m = PaperWorkload();
  BuildGapValue({}, 0.05, &m);
  for (std::string_view name : ScorerNames()) {
    auto s = MakeScorer(name, &m);
    ASSERT_TRUE(s.ok()) << name;
    EXPECT_EQ((*s)->Name(), name);
  }
  EXPECT_FALSE(MakeScorer("fgd", nullptr).ok());
  EXPECT_FALSE(MakeScorer("tetris", &m).ok());
}

}  // namespace scorer_test
}  // namespace gpusched::scoring
