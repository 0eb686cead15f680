#include "gpusched/placement/gpu_links.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpusched/placement/planner.h"
#include "test_nodes.h"

namespace gpusched::placement {
namespace gpu_links_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// `n` GPUs of 10000 MiB with the NVLink peers `peers` (by index).
std::vector<GpuDevice> Devices(int n, const std::vector<std::vector<int>>& peers) {
  std::vector<GpuDevice> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(GpuDevice{.index = i, .memory_mib = 10000});
    if (i < static_cast<int>(peers.size())) out.back().nvlink_peers = peers[i];
  }
  return out;
}

// Two NVLink pairs on four PCIe cards (dra-driver-nvidia-gpu #214).
std::vector<GpuDevice> TwoPairs() { return Devices(4, {{1}, {0}, {3}, {2}}); }
// The V100 hybrid cube mesh (DGX-1): two fully linked quads, each GPU also linked across.
std::vector<GpuDevice> CubeMesh() {
  return Devices(8, {{1, 2, 3, 4}, {0, 2, 3, 5}, {0, 1, 3, 6}, {0, 1, 2, 7}, {0, 5, 6, 7}, {1, 4, 6, 7}, {2, 4, 5, 7}, {3, 4, 5, 6}});
}
// NVSwitch: every pair linked.
std::vector<GpuDevice> Switched(int n) {
  std::vector<std::vector<int>> peers(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i != j) peers[i].push_back(j);
    }
  }
  return Devices(n, peers);
}

NodeState MgpuNode(std::vector<GpuDevice> devices, std::vector<Allocation> allocations = {}) {
  Node n = SharedNode("n", 0, 0);
  n.allocatable = {.mgpu_core_percent = 100 * static_cast<int64_t>(devices.size()),
                   .mgpu_memory_mib = 10000 * static_cast<int64_t>(devices.size())};
  n.published_gpus = std::move(devices);
  return BuildNodeState(n, std::move(allocations));
}

std::vector<int> Placed(const Pod& pod, const NodeState& node) {
  PodRequest r = AnalyzePod(pod);
  Planner planner(PlacementOptions{});
  NodeVerdict v = planner.Evaluate(r, node);
  EXPECT_TRUE(v.fits()) << v.reason;
  return v.fits() ? v.placement.containers.at(0).gpu_indices : std::vector<int>{};
}

TEST(GpuLinks, NodesWithoutIslandsHaveNoLinksToPreferBy) {
  EXPECT_EQ(LinksOf(Devices(4, {})), nullptr);
  EXPECT_EQ(LinksOf(Switched(8)), nullptr) << "NVSwitch: every set is connected";
  EXPECT_EQ(LinksOf(Devices(2, {{7}, {}})), nullptr) << "a peer the node does not have";
  auto links = LinksOf(TwoPairs());
  ASSERT_NE(links, nullptr);
  EXPECT_TRUE(links->islands);
  EXPECT_THAT(links->nvlink, ElementsAre(0b0010, 0b0001, 0b1000, 0b0100));
}

TEST(GpuLinks, APeerNamedOnOneSideLinksBoth) {
  auto links = LinksOf(Devices(4, {{1}, {}, {3}, {}}));
  ASSERT_NE(links, nullptr);
  EXPECT_THAT(links->nvlink, ElementsAre(0b0010, 0b0001, 0b1000, 0b0100));
}

TEST(GpuLinks, ConnectedSetsAreThoseJoinedInsideTheSet) {
  auto pairs = LinksOf(TwoPairs());
  std::vector<GpuSet> sets;
  ConnectedSets(pairs->nvlink, 0b1111, 2, 100, &sets);
  EXPECT_THAT(sets, ElementsAre(0b0011, 0b1100));
  sets.clear();
  ConnectedSets(pairs->nvlink, 0b1110, 2, 100, &sets);
  EXPECT_THAT(sets, ElementsAre(0b1100));
  EXPECT_FALSE(Connected(pairs->nvlink, 0b0110));
  EXPECT_EQ(LargestConnected(pairs->nvlink, 0b1110), 2);

  auto mesh = LinksOf(CubeMesh());
  EXPECT_EQ(LinksInside(mesh->nvlink, 0xF0), 6);
  EXPECT_EQ(LinksInside(mesh->nvlink, 0xFF), 16);
  sets.clear();
  ConnectedSets(mesh->nvlink, 0xFF, 8, 100, &sets);
  EXPECT_THAT(sets, ElementsAre(0xFF));
  sets.clear();
  ConnectedSets(mesh->nvlink, 0xFE, 4, 3, &sets);
  EXPECT_EQ(sets.size(), 3u) << "at most the cap";
  // Review finding: with a cap of 1, the pairs were cut to {0,1}, which cannot grow to 3 here,
  // and {4,5,6} was never found.
  std::vector<std::vector<int>> quads = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}, {5, 6, 7}, {4, 6, 7}, {4, 5, 7}, {4, 5, 6}};
  auto two_quads = LinksOf(Devices(8, quads));
  sets.clear();
  ConnectedSets(two_quads->nvlink, 0b01110011, 3, 1, &sets);
  EXPECT_THAT(sets, ElementsAre(0b01110000));
}

// HoldsConnectedSet answers as ConnectedSets finds: on the cube mesh and on two quads, for every
// set of free GPUs and every size.
TEST(GpuLinks, HoldsConnectedSetAgreesWithConnectedSetsEverywhere) {
  std::vector<std::vector<int>> quads = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}, {5, 6, 7}, {4, 6, 7}, {4, 5, 7}, {4, 5, 6}};
  for (const auto& links : {LinksOf(CubeMesh()), LinksOf(Devices(8, quads))}) {
    for (GpuSet among = 0; among < 256; ++among) {
      for (int k = 1; k <= 8; ++k) {
        std::vector<GpuSet> sets;
        ConnectedSets(links->nvlink, among, k, 1, &sets);
        ASSERT_EQ(HoldsConnectedSet(links->nvlink, among, k), !sets.empty()) << "among " << among << " k " << k;
      }
    }
  }
}

// dra-driver-nvidia-gpu #214: with one GPU of a pair busy, a 2-card pod gets the other pair, not
// the lowest idle cards (GPU0+GPU2, GPU1+GPU2), which no NVLink bridge joins.
TEST(MgpuLinks, AMultiCardPodGetsAnNvlinkPairAndLeavesTheOtherWhole) {
  NodeState busy2 = MgpuNode(TwoPairs(), {SharedAlloc("a", "n", {1}, 300, 1000)});
  EXPECT_THAT(Placed(MgpuPod({MgpuC("c", 200, std::nullopt)}), busy2), ElementsAre(2, 3));
  NodeState busy0 = MgpuNode(TwoPairs(), {SharedAlloc("a", "n", {0}, 300, 1000)});
  EXPECT_THAT(Placed(MgpuPod({MgpuC("c", 200, std::nullopt)}), busy0), ElementsAre(2, 3));
}

TEST(MgpuLinks, AOneCardPodTakesTheGpuWhosePartnerIsBusy) {
  NodeState node = MgpuNode(TwoPairs(), {SharedAlloc("a", "n", {2}, 300, 1000)});
  EXPECT_THAT(Placed(MgpuPod({MgpuC("c", 100, std::nullopt)}), node), ElementsAre(3)) << "GPU0+GPU1 stay a free pair";
}

TEST(MgpuLinks, SharedCardsTakeAPairRatherThanTheTightestGpus) {
  // GPU0 and GPU2 are 60% used: binpack alone would put two 40% cards on them, across the pairs.
  NodeState node = MgpuNode(TwoPairs(), {SharedAlloc("a", "n", {0}, 600, 1000), SharedAlloc("b", "n", {2}, 600, 1000)});
  Pod pod = MgpuPod({MgpuC("c", 80, 4096)}, {{"vke.volcengine.com/container-multiple-gpu", "2"}});
  EXPECT_THAT(Placed(pod, node), ElementsAre(0, 1));
}

TEST(MgpuLinks, TheCubeMeshGivesFourCardsAWholeQuad) {
  // GPU0 busy: the lowest idle cards 1, 2, 3, 4 are not connected (4 links only to 0 among them).
  NodeState node = MgpuNode(CubeMesh(), {SharedAlloc("a", "n", {0}, 300, 1000)});
  EXPECT_THAT(Placed(MgpuPod({MgpuC("c", 400, std::nullopt)}), node), ElementsAre(4, 5, 6, 7));
}

TEST(MgpuLinks, AnNvswitchNodeIsPlacedAsWithoutLinks) {
  for (int busy = 0; busy < 4; ++busy) {
    NodeState switched = MgpuNode(Switched(4), {SharedAlloc("a", "n", {busy}, 300, 1000)});
    NodeState plain = MgpuNode(Devices(4, {}), {SharedAlloc("a", "n", {busy}, 300, 1000)});
    Pod pod = MgpuPod({MgpuC("c", 200, std::nullopt)});
    EXPECT_EQ(Placed(pod, switched), Placed(pod, plain)) << busy;
  }
}

// Review finding: on a node of two NUMA nodes the NUMA sets were sorted over the linked ones, and
// binpack's tightest pair, GPU0+GPU2, crossed the bridges.
TEST(MgpuLinks, NumaSetsComeAfterTheConnectedOnes) {
  std::vector<GpuDevice> devices = Devices(8, {{1}, {0}, {3}, {2}, {5}, {4}, {7}, {6}});
  for (int i = 0; i < 8; ++i) devices[i].numa_node = i / 4;
  NodeState node = MgpuNode(devices, {SharedAlloc("a", "n", {0}, 600, 1000), SharedAlloc("b", "n", {2}, 600, 1000)});
  Pod pod = MgpuPod({MgpuC("c", 80, 4096)}, {{"vke.volcengine.com/container-multiple-gpu", "2"}});
  EXPECT_THAT(Placed(pod, node), ElementsAre(0, 1));
}

// A node with PCIe switches and no NVLink places a single whole card as before (NUMA binpack).
TEST(MgpuLinks, PcieSwitchesAloneLeaveASingleCardsChoiceAsItWas) {
  for (int busy = 0; busy < 8; ++busy) {
    std::vector<GpuDevice> plain = Devices(8, {});
    for (int i = 0; i < 8; ++i) plain[i].numa_node = i / 4;
    std::vector<GpuDevice> switched = plain;
    for (int i = 0; i < 8; ++i) switched[i].pcie_peers = {i ^ 1};
    std::vector<Allocation> used = {SharedAlloc("a", "n", {busy}, 300, 1000)};
    Pod pod = MgpuPod({MgpuC("c", 100, std::nullopt)});
    EXPECT_EQ(Placed(pod, MgpuNode(switched, used)), Placed(pod, MgpuNode(plain, used))) << busy;
  }
}

TEST(MgpuLinks, WithoutAFreeConnectedSetThePodStillFits) {
  NodeState node = MgpuNode(TwoPairs(), {SharedAlloc("a", "n", {0}, 300, 1000), SharedAlloc("b", "n", {3}, 300, 1000)});
  EXPECT_THAT(Placed(MgpuPod({MgpuC("c", 200, std::nullopt)}), node), ElementsAre(1, 2));
}

TEST(GpuLinks, DescribeSaysWhySetWasTaken) {
  auto links = LinksOf(TwoPairs());
  std::vector<int> indices = {0, 1, 2, 3};
  EXPECT_EQ(DescribeSet(*links, indices, 0b1100, 0b1110),
            "NVLink-connected GPU2+GPU3; largest NVLink-connected idle set left: GPU1");
  EXPECT_EQ(DescribeSet(*links, indices, 0b0110, 0b0110),
            "GPU1+GPU2 not NVLink-connected: no connected set of 2 was free; no idle GPU left");
}

}  // namespace gpu_links_test
}  // namespace gpusched::placement
