// A pending pod's judge (placement/pod_judge.h), made by its kind: a claim pod chooses victims and
// moves by the devices its claims would get, a device-plugin pod by its GPUs except on the nodes
// where DRA serves its extended resources (KEP 5004), and a pod whose claim is missing cannot be
// judged anywhere.
#include "gpusched/placement/pod_judge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::placement {
namespace pod_judge_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace gpusched::testing;

// dra-a: 2 GPUs, both held by claim "other" of pod "o" (priority 0, bound there). dra-b: 1 free
// GPU. whole-1: a device-plugin node with 2 free GPUs. The GPU class maps nvidia.com/gpu.
struct Cluster {
  Cluster() {
    ClusterObjects c;
    for (const std::string& o :
         {DraNode("dra-a"), GpuSlice("dra-a", 2), DraNode("dra-b"), GpuSlice("dra-b", 1), NvidiaNode("whole-1", 2, "nvidia").ToJson(),
          std::string(kGpuClass), Claim("other", ClaimSpec(2, ""), {"dra-a/gpu-0", "dra-a/gpu-1"}, {"o"}),
          ClaimPod("o", "other", "dra-a"), Claim("one", ClaimSpec(1, ""))}) {
      EXPECT_TRUE(kubejson::AppendClusterJson(o, &c).ok()) << o;
    }
    inventory.ReplaceCluster(std::move(c));
    snapshot = inventory.Snapshot();
  }
  const NodeState& Node(const std::string& name) const { return *snapshot->FindNode(name); }
  JudgeContext Context(bool extended = true) {
    return JudgeContext{.dra = &snapshot->dra(), .programs = &programs, .dra_extended_resources = extended};
  }
  DefragInput Nodes() const {
    DefragInput in;
    for (const auto& n : snapshot->nodes()) in.nodes.push_back(n.get());
    return in;
  }

  inventory::Inventory inventory;
  std::shared_ptr<const inventory::InventorySnapshot> snapshot;
  dra::cel::ProgramCache programs;
};

std::vector<std::string> Uids(const VictimChoice& choice) {
  std::vector<std::string> out;
  for (const Allocation* a : choice.victims) out.push_back(a->pod_uid);
  return out;
}

TEST(PodJudge, AClaimPodEvictsThePodWhoseClaimHoldsTheDevicesItNeeds) {
  Cluster c;
  Pod pod = DecodedPod(ClaimPod("p", "one", "", /*priority=*/10));
  PodRequest request = AnalyzePod(pod);
  std::unique_ptr<PodJudge> judge = JudgeOf(pod, request, c.Context());
  ASSERT_TRUE(judge->Problem().ok()) << judge->Problem().message();
  EXPECT_EQ(judge->ModeOn(c.Node("dra-a")), ClaimsMode());
  VictimChoice choice = judge->ChooseVictims(c.Node("dra-a"), VictimRules{.priority = 10, .viewer = Viewer::Of(pod)});
  ASSERT_TRUE(choice.helps) << choice.reason;
  EXPECT_THAT(Uids(choice), ElementsAre("o"));
  // Its moves are planned by the devices its claim gets: dra-b takes it as it is.
  DefragPlan plan = judge->MakeRoom(c.Nodes(), DefragOptions{});
  ASSERT_TRUE(plan.fits) << plan.reason;
  EXPECT_EQ(plan.node, "dra-b");
  EXPECT_TRUE(plan.moves.empty());
  EXPECT_EQ(plan.placement.kind, ClaimsKind());
  EXPECT_EQ(plan.placement.devices.size(), 1u);
}

TEST(PodJudge, AGpuPodChoosesByDraOnlyWhereDraServesItsExtendedResources) {
  Cluster c;
  Pod pod = DecodedPod(ExtendedGpuPod("w", 1));
  pod.priority = 10;
  PodRequest request = AnalyzePod(pod);
  VictimRules rules{.priority = 10, .viewer = Viewer::Of(pod)};
  std::unique_ptr<PodJudge> judge = JudgeOf(pod, request, c.Context());
  EXPECT_TRUE(judge->Problem().ok());
  EXPECT_EQ(judge->ModeOn(c.Node("whole-1")), NodeMode::kNvidia);
  EXPECT_EQ(judge->ModeOn(c.Node("dra-a")), ClaimsMode());
  VictimChoice through_dra = judge->ChooseVictims(c.Node("dra-a"), rules);
  ASSERT_TRUE(through_dra.helps) << through_dra.reason;
  EXPECT_THAT(Uids(through_dra), ElementsAre("o"));
  // On the device-plugin node its GPUs are chosen by the device plugin's rules: free, no victim
  // (DRA's planner refuses a node of mode nvidia).
  VictimChoice plugin = judge->ChooseVictims(c.Node("whole-1"), rules);
  ASSERT_TRUE(plugin.helps) << plugin.reason;
  EXPECT_TRUE(plugin.victims.empty());
  // Its moves are planned both ways; with nothing to move, it fits as it is.
  DefragPlan plan = judge->MakeRoom(c.Nodes(), DefragOptions{});
  ASSERT_TRUE(plan.fits) << plan.reason;
  EXPECT_TRUE(plan.moves.empty());
  // With DRA serving no extended resources, an nvidia-dra node is the wrong mode for it.
  std::unique_ptr<PodJudge> plain = JudgeOf(pod, request, c.Context(/*extended=*/false));
  EXPECT_EQ(plain->ModeOn(c.Node("dra-a")), NodeMode::kNvidia);
  EXPECT_FALSE(plain->ChooseVictims(c.Node("dra-a"), rules).helps);
}

TEST(PodJudge, AClaimPodWhoseClaimDoesNotExistCannotBeJudgedYet) {
  Cluster c;
  Pod pod = DecodedPod(ClaimPod("p", "missing"));
  std::unique_ptr<PodJudge> judge = JudgeOf(pod, AnalyzePod(pod), c.Context());
  EXPECT_EQ(judge->Problem().code(), StatusCode::kUnavailable);
  EXPECT_THAT(judge->Problem().message(), HasSubstr("missing"));
}

}  // namespace pod_judge_test
}  // namespace gpusched::placement
