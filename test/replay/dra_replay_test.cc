// The DRA snapshot replay: gpusched's placement against kube-scheduler's own (NodeResourcesFit
// picks the node, the allocator takes devices in published order) on replay/dra_example.h's
// cluster, claim pods and nvidia.com/gpu pods mixed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "gpusched/kubejson/objects.h"
#include "gpusched/model/node_uses.h"
#include "gpusched/kubejson/snapshot_source.h"
#include "gpusched/replay/cluster_replay.h"
#include "gpusched/replay/dra_example.h"

namespace gpusched::replay {
namespace dra_replay_test {

struct Loaded {
  ClusterObjects cluster;
  std::vector<std::string> pods;
};

Loaded Load(const DraExampleOptions& options) {
  DraExample example = MakeDraExample(options);
  Loaded out;
  EXPECT_TRUE(kubejson::AppendClusterJson(example.cluster_json, &out.cluster).ok());
  StatusOr<std::vector<std::string>> pods = kubejson::ObjectsOfKind(example.pods_json, "Pod");
  EXPECT_TRUE(pods.ok()) << pods.status().message();
  out.pods = std::move(pods).value();
  return out;
}

TEST(DraExample, IsTheSameForTheSameSeedAndAsksWhatItSays) {
  DraExampleOptions o{.nodes = 10, .demand = 0.9};
  EXPECT_EQ(MakeDraExample(o).pods_json, MakeDraExample(o).pods_json);
  Loaded l = Load(o);
  EXPECT_EQ(l.cluster.nodes.size(), 10u);
  EXPECT_EQ(l.cluster.errors.size(), 0u) << l.cluster.errors.front();
  EXPECT_GE(l.pods.size(), 20u);  // 72 GPUs at 2.4 per pod on average
}

// At 90% demand on 40 nodes: gpusched (binpack, and fgd) places every pod, leaves nothing
// fragmented and no pod across PCIe roots it could have kept in one; kube-scheduler's own choice
// spreads the pods by CPU and memory, so pods of 8 no longer fit anywhere, and it takes devices in
// published order, splitting pairs and quads across roots.
TEST(DraReplay, GpuschedLeavesFewerGpusFragmentedThanUpstreamsOwnChoice) {
  Loaded l = Load(DraExampleOptions{.nodes = 40, .demand = 0.9});
  ClusterReplayResult upstream = RunClusterReplay(l.cluster, l.pods, ClusterReplayOptions{.upstream = FitStrategy::kLeastAllocated});
  for (const char* policy : {"binpack", "fgd"}) {
    ClusterReplayOptions o;
    o.service.node_policy = policy;
    ClusterReplayResult ours = RunClusterReplay(l.cluster, l.pods, o);
    EXPECT_EQ(ours.failed, 0) << policy;
    EXPECT_EQ(ours.dra_gpus, 320);
    EXPECT_LT(ours.dra_fragmented_pct, upstream.dra_fragmented_pct) << policy;
    EXPECT_GT(ours.dra_gpu_used_pct, upstream.dra_gpu_used_pct) << policy;
    EXPECT_EQ(ours.largest_free, 8) << policy;
    EXPECT_EQ(ours.split_pods, 0) << policy;
    EXPECT_GT(ours.multi_gpu_pods, 0);
  }
  EXPECT_EQ(upstream.policy, "upstream");
  EXPECT_GT(upstream.failed, 0);
  EXPECT_LT(upstream.largest_free, 8);
  EXPECT_GT(upstream.dra_fragmented_pct, 0);
  EXPECT_GT(upstream.split_pods, 0);
  // Every failure is one the cluster's free GPUs could have held, were they on one node.
  for (const Placed& p : upstream.placements) {
    if (p.node.empty()) {
      EXPECT_THAT(p.error, ::testing::HasSubstr("devices available")) << p.pod;
    }
  }
}

// Claim pods and nvidia.com/gpu pods are both placed, and the claims (their own and the special
// ones bind creates) never share a device.
TEST(DraReplay, BothKindsOfPodArePlacedAndNoDeviceIsTakenTwice) {
  Loaded l = Load(DraExampleOptions{.nodes = 6, .demand = 0.8, .seed = 7});
  ClusterReplayResult r = RunClusterReplay(l.cluster, l.pods, ClusterReplayOptions{});
  EXPECT_EQ(r.failed, 0);
  bool claim = false, extended = false;
  for (const std::string& pod : l.pods) {
    claim |= pod.find("resourceClaimName") != std::string::npos;
    extended |= pod.find("nvidia.com/gpu") != std::string::npos;
  }
  EXPECT_TRUE(claim && extended);
  EXPECT_NEAR(r.dra_gpu_used_pct, 100.0 * 0.8, 100.0 * 8 / 48);  // what was asked, within one pod
  EXPECT_NEAR(static_cast<double>(r.dra_pod_gpus), r.dra_gpu_used_pct * 48 / 100, 1e-9);
}

// kube-scheduler's default scores: LeastAllocated and BalancedAllocation over cpu and memory.
TEST(UpstreamScore, LeastAllocatedPlusBalancedAllocationAsKubeScheduler) {
  placement::NodeState node;
  node.node.other_allocatable.Add("cpu", 100'000);
  node.node.other_allocatable.Add("memory", int64_t{1000} << 30);
  ResourceList pod;
  pod.Add("cpu", 50'000);
  pod.Add("memory", int64_t{250} << 30);
  // cpu: (100 - 50) * 100 / 100 = 50; memory: 75; LeastAllocated = (50 + 75) / 2 = 62.
  // Balanced: fractions 0.5 and 0.25, deviation 0.125: (1 - 0.125) * 100 = 87.
  EXPECT_EQ(UpstreamScore(node, pod), 62 + 87);
  // A pod asking nothing counts 100m and 200 MiB in LeastAllocated (nearly free); BalancedAllocation
  // reads its requests as they are, none: perfectly balanced (the fourth review: it was 99 + 99).
  EXPECT_EQ(UpstreamScore(node, ResourceList{}), 99 + 100);
  // MostAllocated, the bin-packing setup: cpu 50, memory 25.
  EXPECT_EQ(UpstreamScore(node, pod, FitStrategy::kMostAllocated), (50 + 25) / 2 + 87);
}

// The node's bound pods count as NodeResourcesFit counts them, one asking nothing at 100m and
// 200 MiB, and as BalancedAllocation does, at what they ask (fifth review: untested).
TEST(UpstreamScore, BoundPodsCountAtTheDefaultsInFitAndAsTheyAskInBalance) {
  placement::NodeState node;
  node.node.other_allocatable.Add("cpu", 1'000);
  node.node.other_allocatable.Add("memory", int64_t{1000} << 20);
  auto uses = std::make_shared<NodeUses>();
  for (const char* uid : {"a", "b"}) uses->Put(PodUse{.uid = uid, .name = uid});
  ResourceList cpu_only;
  cpu_only.Add("cpu", 250);
  uses->Put(PodUse{.uid = "c", .name = "c", .requests = cpu_only});
  node.uses = uses;
  ResourceList pod;
  pod.Add("cpu", 500);
  pod.Add("memory", int64_t{250} << 20);
  // Fit: cpu 500 + 100 + 100 + 250 = 950 of 1000: 5; memory 250 + 3 x 200 = 850 MiB of 1000: 15.
  // Balanced: cpu 750 of 1000 and memory 250 of 1000: deviation 0.25, 75.
  EXPECT_EQ(UpstreamScore(node, pod), (5 + 15) / 2 + 75);
}

// kube-scheduler set up for bin packing (MostAllocated) fills nodes as gpusched does, but takes
// devices in published order: pods of two and four GPUs end up across PCIe roots.
TEST(DraReplay, UpstreamsBinPackingSetupStillSplitsPodsAcrossPcieRoots) {
  Loaded l = Load(DraExampleOptions{.nodes = 40, .demand = 0.9});
  ClusterReplayResult packing = RunClusterReplay(l.cluster, l.pods, ClusterReplayOptions{.upstream = FitStrategy::kMostAllocated});
  ClusterReplayResult ours = RunClusterReplay(l.cluster, l.pods, ClusterReplayOptions{});
  EXPECT_EQ(packing.policy, "upstream-packing");
  EXPECT_GT(packing.split_pods, 0);
  EXPECT_EQ(ours.split_pods, 0);
  EXPECT_LE(ours.dra_fragmented_pct, packing.dra_fragmented_pct);
}

}  // namespace dra_replay_test
}  // namespace gpusched::replay
