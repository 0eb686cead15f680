#include "gpusched/replay/openb_replay.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "gpusched/common/random.h"
#include "gpusched/replay/grid.h"
#include "gpusched/replay/report.h"
#include "temp_dir.h"

namespace gpusched::replay {
namespace openb_replay_test {

using ::testing::HasSubstr;

TEST(OpenbTrace, ParsesColumnsByHeaderName) {
  auto nodes = ParseNodeCsv("sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,32000,131072,0,\n", "nodes.csv");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].model, "P100");
  EXPECT_EQ((*nodes)[1].gpus, 0);
  auto full = ParsePodCsv(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
      "p0,12000,16384,1,460,V100M16|V100M32,LS,Running,0,12537496,0\n",
      "pods.csv");
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ((*full)[0].gpu_milli, 460);
  EXPECT_EQ((*full)[0].gpu_spec, "V100M16|V100M32");
  EXPECT_EQ((*full)[0].deletion_time, 12537496);
  auto short_form = ParsePodCsv("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,8000,100,8,1000\n", "multigpu.csv");
  ASSERT_TRUE(short_form.ok());
  EXPECT_EQ((*short_form)[0].num_gpu, 8);
  EXPECT_EQ((*short_form)[0].creation_time, -1);
}

TEST(OpenbTrace, ErrorsNameFileLineAndColumn) {
  EXPECT_THAT(ParsePodCsv("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,8000,100,1\n", "x.csv").status().message(),
              HasSubstr("x.csv:2: want 5 fields, got 4"));
  EXPECT_THAT(ParsePodCsv("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,8k,100,1,500\n", "x.csv").status().message(),
              HasSubstr("x.csv:2: column cpu_milli: \"8k\" is not a non-negative integer"));
  EXPECT_THAT(ParsePodCsv("name,cpu_milli\np0,8\n", "x.csv").status().message(), HasSubstr("x.csv: no column \"memory_mib\""));
  EXPECT_THAT(ParsePodCsv("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,1,1500\n", "x.csv").status().message(),
              HasSubstr("gpu_milli 1500 out of range"));
  EXPECT_EQ(LoadPodCsv("/nonexistent.csv").status().code(), StatusCode::kNotFound);
}

TEST(OpenbTrace, SpecModelsDropEmptyTokensAndKeepDuplicates) {
  EXPECT_THAT(SpecModels("V100M16|V100M32|V100M32"), ::testing::ElementsAre("V100M16", "V100M32", "V100M32"));
  EXPECT_TRUE(SpecModels("").empty());
  EXPECT_THAT(SpecModels("|T4|"), ::testing::ElementsAre("T4"));
}

// A small generated trace: 12 nodes of two shapes, pods of every class.
PreparedTrace SmallTrace(int pod_count = 300, uint64_t seed = 7) {
  std::vector<TraceNode> nodes;
  for (int i = 0; i < 8; ++i) nodes.push_back({fmt::format("n{:02}", i), 96000, 393216, 8, "G2"});
  for (int i = 8; i < 12; ++i) nodes.push_back({fmt::format("n{:02}", i), 104000, 524288, 2, "T4"});
  std::vector<TracePod> pods;
  Rng rng(seed);
  constexpr int32_t kShares[] = {230, 320, 470, 650, 810};
  for (int i = 0; i < pod_count; ++i) {
    TracePod p{.name = fmt::format("p{:04}", i), .cpu_milli = 2000 + static_cast<int64_t>(rng.Below(8)) * 1000,
               .memory_mib = 4096};
    uint64_t kind = rng.Below(10);
    if (kind < 2) {
      // CPU-only
    } else if (kind < 6) {
      p.num_gpu = 1;
      p.gpu_milli = kShares[rng.Below(5)];
    } else if (kind < 9) {
      p.num_gpu = 1;
      p.gpu_milli = 1000;
    } else {
      p.num_gpu = rng.Below(2) == 0 ? 2 : 4;
      p.gpu_milli = 1000;
      p.gpu_spec = "G2";
    }
    pods.push_back(p);
  }
  return PrepareTrace(nodes, pods).value();
}

ReplayResult Replay(const PreparedTrace& t, std::string_view policy, uint64_t seed,
                 Selection selection = Selection::kPolicy) {
  auto scorer = scoring::MakeScorer(policy, &t.workload);
  EXPECT_TRUE(scorer.ok());
  return RunReplay(t, **scorer, ReplayOptions{.seed = seed, .selection = selection});
}

TEST(OpenbReplay, InflatesOrThinsToTheTuneRatio) {
  PreparedTrace few = SmallTrace(40);
  EXPECT_EQ(few.capacity_milli, 8 * 8000 + 4 * 2000);
  ReplayResult up = Replay(few, "fgd", 42);
  EXPECT_GT(up.pods, 40);  // clones appended
  EXPECT_GE(up.curve.back().arrived_pct, 125);
  PreparedTrace t = SmallTrace();
  ReplayResult r = Replay(t, "fgd", 42);
  EXPECT_LT(r.pods, 300);  // 300 pods ask for far more than 130%: thinned
  ASSERT_FALSE(r.curve.empty());
  EXPECT_GE(r.curve.back().arrived_pct, 125);  // tuned to 130%, minus at most one pod
  EXPECT_LE(r.curve.back().arrived_pct, 135);
  for (const CurvePoint& p : r.curve) {
    EXPECT_LE(p.allocated_pct, std::min(100.0, static_cast<double>(p.arrived_pct) + 1.5));
  }
  EXPECT_GT(r.failed_pods, 0);  // 130% cannot fit
}

TEST(OpenbReplay, IsDeterministicPerSeed) {
  PreparedTrace t = SmallTrace();
  ReplayResult a = Replay(t, "random", 42);
  ReplayResult b = Replay(t, "random", 42);
  ReplayResult c = Replay(t, "random", 43);
  EXPECT_EQ(a.unallocated_pct_at_100, b.unallocated_pct_at_100);
  EXPECT_EQ(a.failed_pods, b.failed_pods);
  EXPECT_EQ(a.curve.size(), b.curve.size());
  EXPECT_TRUE(a.pods != c.pods || a.failed_pods != c.failed_pods || a.unallocated_pct_at_100 != c.unallocated_pct_at_100);
}

TEST(OpenbReplay, RankMappingCarriesThePolicysOrderThroughTheExtender) {
  // kube-scheduler sees 0-10 scores; with gpusched's rank mapping the best node still scores 10
  // alone, so the result is the policy's own.
  PreparedTrace t = SmallTrace();
  for (std::string_view policy : {"fgd", "bestfit", "softmix"}) {
    ReplayResult direct = Replay(t, policy, 42);
    ReplayResult rank = Replay(t, policy, 42, Selection::kExtenderRank);
    EXPECT_EQ(direct.unallocated_pct_at_100, rank.unallocated_pct_at_100) << policy;
    EXPECT_EQ(direct.failed_pods, rank.failed_pods) << policy;
  }
}

TEST(OpenbReplay, FragmentationAwarePoliciesBeatRandomOnASmallTrace) {
  PreparedTrace t = SmallTrace(400, 11);
  double random = 0, fgd = 0, softmix = 0;
  for (uint64_t seed = 42; seed < 47; ++seed) {
    random += Replay(t, "random", seed).unallocated_pct_at_100;
    fgd += Replay(t, "fgd", seed).unallocated_pct_at_100;
    softmix += Replay(t, "softmix", seed).unallocated_pct_at_100;
  }
  EXPECT_LT(fgd, random);
  EXPECT_LT(softmix, random);
}

TEST(Grid, ParsesSeedsAndNamesTraces) {
  EXPECT_THAT(*ParseSeeds("42-44,50"), ::testing::ElementsAre(42, 43, 44, 50));
  EXPECT_FALSE(ParseSeeds("9-3").ok());
  EXPECT_FALSE(ParseSeeds("x").ok());
  EXPECT_EQ(TraceName("/d/openb_pod_list_gpushare40.csv"), "gpushare40");
}

TEST(Grid, WritesSummaryCurveAndReport) {
  std::vector<NamedTrace> traces;
  traces.push_back({"small", SmallTrace(200)});
  GridOptions o{.policies = {"fgd", "binpack"}, .seeds = {1, 2}, .threads = 2};
  size_t calls = 0;
  auto runs = RunGrid(traces, o, [&](size_t done, size_t total) {
    ++calls;
    EXPECT_LE(done, total);
  });
  ASSERT_TRUE(runs.ok());
  EXPECT_EQ(runs->size(), 4u);
  EXPECT_EQ(calls, 4u);
  std::string summary = SummaryCsv(*runs);
  EXPECT_THAT(summary, HasSubstr("trace,policy,selection,seed,pods,failed_pods,unallocated_pct_at_100,frag_pct_at_100"));
  EXPECT_THAT(summary, HasSubstr("small,fgd,policy,1,"));
  EXPECT_THAT(CurveCsv(*runs), HasSubstr("small,binpack,2,100,"));
  std::string html = ReportHtml(*runs);
  EXPECT_THAT(html, HasSubstr("<svg"));
  EXPECT_THAT(html, HasSubstr("polyline"));
  std::string dir = testing::TestTempDir("grid-test");
  ASSERT_TRUE(WriteReport(*runs, dir).ok());
  EXPECT_TRUE(std::filesystem::exists(dir + "/report.html"));
  EXPECT_FALSE(RunGrid(traces, GridOptions{.policies = {"tetris"}, .seeds = {1}}, nullptr).ok());
}

// The paper's numbers, when the trace is present (shared/data/openb; its terms keep it out of
// this repository): each of the six policies within 0.5 pp of the artifact's 10-seed mean on the
// default trace, and softmix below FGD. scripts/check-paper.sh checks every trace present.
TEST(OpenbPaper, DefaultTraceMatchesTheArtifactAndSoftmixBeatsFgd) {
  std::string dir = GPUSCHED_OPENB_DIR;
  if (!std::filesystem::exists(dir + "/openb_pod_list_default.csv")) GTEST_SKIP() << "no openb trace at " << dir;
  auto nodes = LoadNodeCsv(dir + "/openb_node_list_gpu_node.csv");
  auto pods = LoadPodCsv(dir + "/openb_pod_list_default.csv");
  ASSERT_TRUE(nodes.ok() && pods.ok());
  std::vector<NamedTrace> traces;
  traces.push_back({"default", PrepareTrace(*nodes, std::move(pods).value()).value()});
  GridOptions o{.policies = {"random", "dotprod", "clustering", "packing", "bestfit", "fgd", "softmix"}};
  for (uint64_t s = 42; s <= 51; ++s) o.seeds.push_back(s);
  auto runs = RunGrid(traces, o, nullptr);
  ASSERT_TRUE(runs.ok());
  for (std::string_view policy : scoring::PaperPolicies()) {
    MeanSd m = UnallocatedAt100(*runs, "default", std::string(policy));
    double paper = PaperUnallocatedAt100("default", std::string(policy));
    EXPECT_NEAR(m.mean, paper, 0.5) << policy;
  }
  EXPECT_LT(UnallocatedAt100(*runs, "default", "softmix").mean, UnallocatedAt100(*runs, "default", "fgd").mean);
  EXPECT_LE(UnallocatedAt100(*runs, "default", "softmix").mean, 4.05);
}

}  // namespace openb_replay_test
}  // namespace gpusched::replay
