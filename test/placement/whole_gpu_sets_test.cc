// Whole GPUs and NVLink islands (placement/whole_gpu_sets.h): which GPUs of a whole-GPU node are
// free, from the agent's PodResources reading, and which fitting nodes filter refuses.
#include "gpusched/placement/whole_gpu_sets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_nodes.h"

namespace gpusched::placement {
namespace whole_gpu_sets_test {

using ::testing::ElementsAre;
using ::testing::Pair;

// A 4-GPU nvidia node of two NVLink pairs (0-1, 2-3); `pods[i]` the pods the kubelet gave GPU i
// (nullopt: no PodResources reading); `bound` whole-GPU pods "ns/<uid>" of one GPU each.
NodeState PairsNode(std::vector<std::optional<std::vector<std::string>>> pods, std::vector<std::string> bound,
                    std::vector<std::vector<int>> peers = {{1}, {0}, {3}, {2}}) {
  Node n = WholeNode("n", 4);
  std::vector<GpuDevice> devices;
  for (int i = 0; i < 4; ++i) {
    devices.push_back(GpuDevice{.index = i, .uuid = "GPU-" + std::to_string(i), .nvlink_peers = peers[i]});
    devices.back().pods = pods[i];
  }
  n.published_gpus = devices;
  std::vector<Allocation> allocations;
  for (const std::string& uid : bound) allocations.push_back(WholeAlloc(uid, "n", 1));
  return BuildNodeState(n, std::move(allocations));
}

using Pods = std::vector<std::optional<std::vector<std::string>>>;

TEST(WholeGpuSets, AGpuIsBusyWhileAPodTheKubeletGaveItIsBound) {
  NodeState node = PairsNode(Pods{std::vector<std::string>{"ns/a"}, std::vector<std::string>{}, std::vector<std::string>{"ns/gone"},
                                  std::vector<std::string>{}},
                             {"a"});
  ASSERT_TRUE(node.ready()) << node.condition_reason;
  EXPECT_EQ(KnownFreeGpus(node), GpuSet{0b1110}) << "ns/gone no longer runs: GPU2 is free";
}

TEST(WholeGpuSets, FreeGpusAreUnknownUntilEveryBoundPodIsPublished) {
  Pods empty(4, std::vector<std::string>{});
  EXPECT_EQ(KnownFreeGpus(PairsNode(empty, {"a"})), std::nullopt) << "ns/a is bound, its GPU not published yet";
  Pods unread = empty;
  unread[3] = std::nullopt;
  EXPECT_EQ(KnownFreeGpus(PairsNode(unread, {})), std::nullopt) << "no PodResources reading for GPU3";
  EXPECT_EQ(KnownFreeGpus(PairsNode(empty, {})), GpuSet{0b1111});
}

TEST(WholeGpuSets, ANodeStandsByWhetherItsFreeGpusFormAConnectedSet) {
  std::vector<std::string> none;
  // GPU0 and GPU2 busy: GPU1 and GPU3 are free but in different pairs.
  NodeState scattered = PairsNode(Pods{std::vector<std::string>{"ns/a"}, none, std::vector<std::string>{"ns/b"}, none}, {"a", "b"});
  LinkedFit fit = LinkedFitOf(scattered, 2);
  EXPECT_EQ(fit.standing, LinkedStanding::kScattered);
  EXPECT_EQ(fit.reason, "no NVLink-connected set of 2 free GPUs (free: GPU1, GPU3)");
  NodeState paired = PairsNode(Pods{std::vector<std::string>{"ns/a"}, std::vector<std::string>{"ns/b"}, none, none}, {"a", "b"});
  EXPECT_EQ(LinkedFitOf(paired, 2).standing, LinkedStanding::kConnected);
  EXPECT_EQ(LinkedFitOf(scattered, 1).standing, LinkedStanding::kUnknown) << "one GPU is always connected";
  // NVSwitch: every pair linked, so no set is better than another.
  NodeState switched =
      PairsNode(Pods{std::vector<std::string>{"ns/a"}, none, std::vector<std::string>{"ns/b"}, none}, {"a", "b"},
                {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}});
  EXPECT_EQ(LinkedFitOf(switched, 2).standing, LinkedStanding::kUnknown);
}

TEST(WholeGpuSets, ScatteredNodesAreRefusedOnlyWhereAnotherHasAConnectedSet) {
  std::vector<std::string> none;
  NodeState scattered = PairsNode(Pods{std::vector<std::string>{"ns/a"}, none, std::vector<std::string>{"ns/b"}, none}, {"a", "b"});
  NodeState paired = PairsNode(Pods{std::vector<std::string>{"ns/a"}, std::vector<std::string>{"ns/b"}, none, none}, {"a", "b"});
  NodeState unknown = PairsNode(Pods(4, std::nullopt), {"a", "b"});
  EXPECT_THAT(ScatteredNodes({&scattered, &paired, &unknown}, 2),
              ElementsAre(Pair(0u, "no NVLink-connected set of 2 free GPUs (free: GPU1, GPU3); other nodes offered have one")));
  EXPECT_TRUE(ScatteredNodes({&scattered, &unknown}, 2).empty()) << "no offered node is better";
}

}  // namespace whole_gpu_sets_test
}  // namespace gpusched::placement
