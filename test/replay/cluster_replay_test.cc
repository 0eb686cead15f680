#include "gpusched/replay/cluster_replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "cluster_json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::replay {
namespace cluster_replay_test {

using ::testing::HasSubstr;
using testing::Mgpu;
using testing::PodJson;
using testing::WholeGpus;

ClusterObjects Cluster() {
  ClusterObjects c;
  EXPECT_TRUE(kubejson::AppendClusterJson(testing::ListJson({testing::NvidiaNode("w1", 8).ToJson(),
                                                        testing::NvidiaNode("w2", 8).ToJson(),
                                                        testing::MgpuNode("m1", 2, 20000).ToJson(),
                                                        testing::NvidiaNode("bad", 8, "nope").ToJson()}),
                                     &c)
                  .ok());
  return c;
}

std::vector<std::string> Pods() {
  std::vector<std::string> pods;
  for (int i = 0; i < 6; ++i) {
    pods.push_back(PodJson{.name = "w" + std::to_string(i), .uid = "uw" + std::to_string(i), .resource_version = "1",
                           .containers = {WholeGpus("c", 2)}}
                       .ToJson());
  }
  for (int i = 0; i < 5; ++i) {
    pods.push_back(PodJson{.name = "m" + std::to_string(i), .uid = "um" + std::to_string(i), .resource_version = "1",
                           .containers = {Mgpu("c", 40, 8000)}}
                       .ToJson());
  }
  return pods;
}

TEST(ClusterReplay, PlacesThroughFilterPrioritizeAndBind) {
  ClusterReplayResult r = RunClusterReplay(Cluster(), Pods(), ClusterReplayOptions{});
  EXPECT_EQ(r.pods, 11);
  EXPECT_EQ(r.placed, 6 + 4);  // 12 of 16 whole GPUs; four 40%/8000 MiB slices on two 20000 MiB GPUs
  EXPECT_EQ(r.failed, 1);
  EXPECT_DOUBLE_EQ(r.whole_gpu_used_pct, 100.0 * 12 / 16);
  EXPECT_DOUBLE_EQ(r.mgpu_core_used_pct, 80.0);
  EXPECT_EQ(r.placements.back().node, "");
  EXPECT_THAT(r.placements.back().error, HasSubstr("m1: "));
  // Binpack fills one whole-GPU node before the other.
  EXPECT_EQ(r.placements[0].node, r.placements[1].node);
}

TEST(ClusterReplay, TheNodePolicyDecides) {
  ClusterReplayOptions spread;
  spread.service.node_policy = "spread";
  ClusterReplayResult r = RunClusterReplay(Cluster(), Pods(), spread);
  EXPECT_NE(r.placements[0].node, r.placements[1].node);  // spread alternates
  EXPECT_EQ(r.policy, "spread");
  std::string csv = PlacementsCsv({r});
  EXPECT_THAT(csv, HasSubstr("spread,42,default/w0,"));
  EXPECT_THAT(ClusterSummaryCsv({r}), HasSubstr("spread,42,11,10,1,"));
}

// Where every policy places the same pods, the summary tells them apart: binpack keeps a node's
// worth of GPUs together (4 free on one node), spread leaves 2 free on each; both leave 4 idle.
// The mGPU node has 20% of a GPU and 4000 MiB left on its GPUs either way.
TEST(ClusterReplay, TheSummaryShowsIdleGpusFragmentationAndTheLargestPodThatStillFits) {
  ClusterReplayResult packed = RunClusterReplay(Cluster(), Pods(), ClusterReplayOptions{});
  ClusterReplayOptions spread_options;
  spread_options.service.node_policy = "spread";
  ClusterReplayResult spread = RunClusterReplay(Cluster(), Pods(), spread_options);
  EXPECT_EQ(packed.placed, spread.placed);
  EXPECT_EQ(packed.idle_gpus, 4);
  EXPECT_EQ(spread.idle_gpus, 4);
  EXPECT_EQ(packed.largest_whole_fit, 4);
  EXPECT_EQ(spread.largest_whole_fit, 2);
  // FGD's F(M) for these pods (2-GPU and 40% classes): only the mGPU node's two 20% slivers,
  // 400 milli of 18 GPUs, in both layouts.
  EXPECT_NEAR(packed.gpu_fragmented_pct, 100.0 * 400 / 18000, 0.01);
  EXPECT_NEAR(spread.gpu_fragmented_pct, 100.0 * 400 / 18000, 0.01);
  EXPECT_EQ(packed.largest_mgpu_core_pct, 20);
  EXPECT_EQ(packed.largest_mgpu_mib, 4000);
  EXPECT_THAT(ClusterSummaryCsv({packed}), HasSubstr(",4,"));
  EXPECT_THAT(ClusterSummaryCsv({packed}).substr(0, ClusterSummaryCsv({packed}).find('\n')),
              ::testing::EndsWith("idle_gpus,gpu_fragmented_pct,largest_whole_fit,largest_mgpu_core_pct,largest_mgpu_mib"));
}

// A small replay through filter, prioritize and bind, pinned pod by pod: a change to the request
// path (caches, lookups, answers) must not move a single pod. The expected nodes were recorded
// before the score cache and the name lookup memo existed.
TEST(ClusterReplay, PinnedPlacementsOfASmallMixedReplay) {
  std::vector<std::string> nodes;
  std::vector<std::string> pods;
  for (int i = 0; i < 6; ++i) {
    nodes.push_back(testing::NvidiaNode("w" + std::to_string(i), 8).ToJson());
    nodes.push_back(testing::MgpuNode("m" + std::to_string(i), 4, 20000).ToJson());
    // Some of each node already in use, differently on each.
    pods.push_back(PodJson{.name = "bw" + std::to_string(i), .uid = "bw" + std::to_string(i),
                           .node = "w" + std::to_string(i), .phase = "Running", .containers = {WholeGpus("c", i % 4)}}
                       .ToJson());
    pods.push_back(PodJson{.name = "bm" + std::to_string(i), .uid = "bm" + std::to_string(i),
                           .node = "m" + std::to_string(i), .phase = "Running",
                           .containers = {Mgpu("c", 10 * (i + 1), 2000 * (i + 1))},
                           .annotations = {{"vke.volcengine.com/gpu-index-container-c", std::to_string(i % 4)}}}
                       .ToJson());
  }
  ClusterObjects cluster;
  ASSERT_TRUE(kubejson::AppendClusterJson(testing::ListJson(nodes), &cluster).ok());
  ASSERT_TRUE(kubejson::AppendClusterJson(testing::ListJson(pods), &cluster).ok());
  // Runs of equal shapes (what the score cache reuses), interleaved with others.
  std::vector<std::string> pending;
  const int64_t gpus[] = {1, 1, 2, 1, 4, 1, 1, 2};
  const int64_t cores[] = {30, 30, 20, 50, 30, 10, 30, 60};
  for (int i = 0; i < 32; ++i) {
    std::string n = std::to_string(i);
    pending.push_back(PodJson{.name = "w" + n, .uid = "uw" + n, .resource_version = "1",
                              .containers = {WholeGpus("c", gpus[i % 8])}}
                          .ToJson());
    pending.push_back(PodJson{.name = "m" + n, .uid = "um" + n, .resource_version = "1",
                              .containers = {Mgpu("c", cores[i % 8], 1000 * (1 + i % 3))}}
                          .ToJson());
  }
  std::map<std::string, std::string> got;
  for (std::string policy : {"binpack", "fgd", "softmix", "spread"}) {
    ClusterReplayOptions options;
    options.service.node_policy = policy;
    ClusterReplayResult r = RunClusterReplay(ClusterObjects(cluster), pending, options);
    std::string line;
    for (const Placed& p : r.placements) line += (p.node.empty() ? "-" : p.node) + " ";
    got[policy] = line;
  }
  std::map<std::string, std::string> want = {
      {"binpack",
       "w3 m5 w3 m5 w3 m5 w3 m5 w2 m5 w2 m5 w2 m5 w1 m5 w1 m5 w1 m5 w1 m4 w1 m4 w5 m4 w5 m5 "
       "w5 m4 w0 m4 w5 m4 w0 m4 w0 m4 w0 m4 w4 m3 w0 m5 w0 m3 w4 m3 w4 m3 w4 m3 - m4 - m3 - "
       "m3 - m4 - m3 - m2 "},
      {"fgd",
       "w0 m5 w0 m0 w0 m1 w0 m4 w1 m0 w2 m5 w2 m0 w3 m1 w2 m2 w4 m2 w4 m3 w4 m0 w4 m3 w5 m2 "
       "w5 m0 w5 m0 w0 m0 w0 m0 w1 m0 w0 m0 - m1 w1 m0 w2 m1 w2 m1 w3 m1 w3 m1 w5 m1 w3 m1 "
       "- m1 w5 m0 - m2 - m2 "},
      {"softmix",
       "w2 m5 w2 m2 w0 m2 w2 m1 w0 m1 w0 m5 w0 m5 w2 m5 w2 m5 w5 m5 w5 m5 w5 m5 w3 m5 w3 m5 "
       "w5 m0 w5 m0 w4 m4 w4 m3 w4 m5 w4 m2 w1 m2 w4 m5 w4 m3 w1 m2 w4 m2 w1 m2 - m2 - m2 - "
       "m1 - m5 - m1 - m1 "},
      {"spread",
       "w0 m0 w4 m1 w0 m2 w1 m0 w4 m3 w5 m1 w1 m2 w2 m4 w5 m1 w0 m5 w1 m3 w3 m2 w5 m0 w0 m1 "
       "w2 m3 w3 m5 w0 m1 w1 m4 w2 m0 w4 m3 - m1 w0 m2 w1 m0 w3 m2 w4 m4 w0 m5 - m1 w1 m0 - "
       "m3 w2 m4 w4 m1 - m4 "},
  };
  EXPECT_EQ(got, want);
}

}  // namespace cluster_replay_test
}  // namespace gpusched::replay
