#include "gpusched/replay/cluster_replay.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::replay {
namespace {

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

}  // namespace
}  // namespace gpusched::replay
