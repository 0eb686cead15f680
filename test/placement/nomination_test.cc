// The holds of nominated pods (placement/nomination.h) through NominationHolds, the one the
// inventory asks at each rebuild: planned in decreasing priority on the node without its
// terminating pods, a pod that does not fit holding nothing, and a claim pod holding the devices
// its claim would get.
#include "gpusched/placement/nomination.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/objects.h"
#include "test_nodes.h"

namespace gpusched::placement {
namespace nomination_test {

using ::testing::ElementsAre;
using ::testing::SizeIs;

Pod Nominated(std::string uid, int64_t gpus, int32_t priority, std::string node) {
  Pod p = WholePod(gpus);
  p.uid = uid;
  p.name = uid;
  p.priority = priority;
  p.nominated_node = std::move(node);
  return p;
}

TEST(NominationHolds, HoldsArePlannedByPriorityOnTheNodeWithoutItsTerminatingPods) {
  // 4 GPUs: 2 taken by a pod still running, 2 by a victim being deleted.
  Allocation victim = WholeAlloc("victim", "w", 2);
  victim.terminating = true;
  NodeState state = BuildNodeState(WholeNode("w", 4), {WholeAlloc("stays", "w", 2), victim});
  Pod low = Nominated("low", 2, 1, "w"), high = Nominated("high", 1, 10, "w");
  std::vector<const Pod*> nominated = {&low, &high};
  dra::ClusterState no_dra({}, {}, {}, {});
  NominationHolds holds(DraOptions{});
  holds.Add(no_dra, nominated, &state);
  // high first takes 1 of the 2 the victim frees; low's 2 no longer fit: it holds nothing.
  ASSERT_THAT(state.holds, SizeIs(1));
  EXPECT_EQ(state.holds[0].pod_uid, "high");
  EXPECT_EQ(state.holds[0].placement.whole_gpus, 1);
  EXPECT_NE(FindHold(state, "high"), nullptr);
  EXPECT_EQ(FindHold(state, "low"), nullptr);
}

TEST(NominationHolds, AClaimPodHoldsTheDevicesItsClaimWouldGet) {
  ClusterObjects c;
  for (const std::string& o : {testing::DraNode("dra-a"), testing::GpuSlice("dra-a", 2), std::string(testing::kGpuClass),
                               testing::Claim("pair", testing::ClaimSpec(2, ""))}) {
    ASSERT_TRUE(kubejson::AppendClusterJson(o, &c).ok()) << o;
  }
  inventory::Inventory inventory;
  inventory.ReplaceCluster(std::move(c));
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory.Snapshot();
  NodeState state = *snapshot->FindNode("dra-a");
  Pod pod = testing::DecodedPod(testing::ClaimPod("p", "pair", "", 5));
  pod.nominated_node = "dra-a";
  std::vector<const Pod*> nominated = {&pod};
  NominationHolds holds(DraOptions{});
  holds.Add(snapshot->dra(), nominated, &state);
  ASSERT_THAT(state.holds, SizeIs(1));
  EXPECT_EQ(state.holds[0].pod_uid, "p");
  EXPECT_THAT(state.holds[0].placement.devices, ElementsAre("gpu.nvidia.com/dra-a/gpu-0", "gpu.nvidia.com/dra-a/gpu-1"));
}

}  // namespace nomination_test
}  // namespace gpusched::placement
