// A gang's plan (placement/gang_planner.h): every member placed on the cluster as the members
// before it left it, all or nothing, on as few nodes as the members fit, with their other
// resources counted; members with claims judged by the DRA planner.
#include "gpusched/placement/gang_planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/placement/planner.h"
#include "test_nodes.h"

namespace gpusched::placement {
namespace gang_planner_test {

using ::testing::HasSubstr;

struct Gang {
  // Adds a member `name` (uid = name) of namespace ml.
  void Add(std::string name, Pod pod) {
    pod.uid = name;
    pod.name = std::move(name);
    pod.namespace_name = "ml";
    pods.push_back(std::move(pod));
  }
  GangPlan Plan(const std::vector<NodeState>& states, const GangDra& dra = {}) {
    std::vector<GangMember> members;
    for (const Pod& p : pods) members.push_back(GangMember{.pod = &p, .request = AnalyzePod(p)});
    std::vector<const NodeState*> nodes;
    for (const NodeState& s : states) nodes.push_back(&s);
    std::unique_ptr<scoring::Scorer> scorer = std::move(scoring::MakeScorer("binpack", nullptr)).value();
    return PlanGang(members, nodes, PlacementOptions{}, *scorer, dra);
  }
  std::deque<Pod> pods;  // stable addresses
};

Pod WithCpu(Pod p, int64_t milli) {
  p.containers[0].other_requests.Add("cpu", milli);
  return p;
}

Node WithCpu(Node n, int64_t milli) {
  n.other_allocatable.Add("cpu", milli);
  n.other_allocatable.Add("pods", 110);
  return n;
}

// Issue 33's example: GPU 0 all free, GPU 1 30% free. Each 60% member fits alone (on GPU 0), so
// a scheduler judging members one by one binds both there and the second bind fails; the plan
// places them together or not at all.
TEST(GangPlanner, TwoSharesThatEachFitAloneDoNotFitTogetherOnOneGpu) {
  std::vector<NodeState> one = {BuildNodeState(SharedNode("m", 2, 24576), {SharedAlloc("busy", "m", {1}, 700, 1000)})};
  Gang g;
  g.Add("a", MgpuPod({MgpuC("c", 60, 4096)}));
  g.Add("b", MgpuPod({MgpuC("c", 60, 4096)}));
  Planner planner{PlacementOptions{}};
  for (const Pod& p : g.pods) EXPECT_TRUE(planner.Evaluate(AnalyzePod(p), one[0]).fits()) << p.name << " alone";
  GangPlan plan = g.Plan(one);
  EXPECT_FALSE(plan.fits);
  EXPECT_EQ(plan.placed, 1u);
  EXPECT_EQ(plan.reason, "1 of 2 members fit; ml/b fits on no node beside them");

  std::vector<NodeState> two = {one[0], BuildNodeState(SharedNode("m2", 1, 24576), {})};
  plan = g.Plan(two);
  ASSERT_TRUE(plan.fits) << plan.reason;
  EXPECT_EQ(plan.nodes, 2u);
  EXPECT_NE(plan.slots[0].node, plan.slots[1].node);
  for (const GangSlot& s : plan.slots) {
    ASSERT_EQ(s.placement.containers.size(), 1u);
    if (s.node == "m") {
      EXPECT_EQ(s.placement.containers[0].gpu_indices, std::vector<int>{0});
    }
  }
}

TEST(GangPlanner, MembersShareTheFewestNodesTheyFitOn) {
  std::vector<NodeState> nodes = {BuildNodeState(WholeNode("a", 8), {}), BuildNodeState(WholeNode("b", 8), {}),
                                  BuildNodeState(WholeNode("c", 8), {WholeAlloc("x", "c", 2)})};
  Gang g;
  for (std::string name : {"w0", "w1", "w2", "w3"}) g.Add(name, WholePod(2));
  GangPlan plan = g.Plan(nodes);
  ASSERT_TRUE(plan.fits) << plan.reason;
  EXPECT_EQ(plan.nodes, 1u);
  for (const GangSlot& s : plan.slots) EXPECT_EQ(s.placement.whole_gpus, 2);
  // Five do not fit on one node: the fifth goes to a second, and no GPU is counted twice.
  g.Add("w4", WholePod(2));
  plan = g.Plan(nodes);
  ASSERT_TRUE(plan.fits) << plan.reason;
  EXPECT_EQ(plan.nodes, 2u);
  std::map<std::string, int64_t> taken;
  for (const GangSlot& s : plan.slots) taken[s.node] += s.placement.whole_gpus;
  for (const auto& [node, gpus] : taken) EXPECT_LE(gpus, node == "c" ? 6 : 8) << node;
}

TEST(GangPlanner, AMembersOtherResourcesCountForTheMembersAfterIt) {
  std::vector<NodeState> nodes = {BuildNodeState(WithCpu(WholeNode("a", 8), 8000), {}),
                                  BuildNodeState(WithCpu(WholeNode("b", 8), 8000), {})};
  Gang g;
  g.Add("w0", WithCpu(WholePod(1), 6000));
  g.Add("w1", WithCpu(WholePod(1), 6000));
  GangPlan plan = g.Plan(nodes);
  ASSERT_TRUE(plan.fits) << plan.reason;
  EXPECT_NE(plan.slots[0].node, plan.slots[1].node);  // 12 of 8 CPUs on one node otherwise
  g.Add("w2", WithCpu(WholePod(1), 6000));
  plan = g.Plan(nodes);
  EXPECT_FALSE(plan.fits);
  EXPECT_EQ(plan.placed, 2u);
}

TEST(GangPlanner, ALauncherWithoutGpusJoinsANodeOfThePlanWhereItFits) {
  std::vector<NodeState> nodes = {BuildNodeState(WithCpu(Node{.name = "cpu-only"}, 64000), {}),
                                  BuildNodeState(WithCpu(WholeNode("a", 8), 64000), {})};
  Gang g;
  Pod launcher{.containers = {Container{.name = "c"}}};
  g.Add("launcher", WithCpu(launcher, 1000));
  g.Add("w0", WholePod(4));
  g.Add("w1", WholePod(4));
  GangPlan plan = g.Plan(nodes);
  ASSERT_TRUE(plan.fits) << plan.reason;
  EXPECT_EQ(plan.slots[0], (GangSlot{.pod_uid = "launcher", .node = "a"}));
  EXPECT_EQ(plan.nodes, 1u);
}

TEST(GangPlanner, AClaimMemberWithoutTheDraStateMakesTheGangUnplannable) {
  std::vector<NodeState> nodes = {BuildNodeState(WholeNode("a", 8), {})};
  Gang g;
  g.Add("w0", WholePod(1));
  Pod claims{.containers = {Container{.name = "c"}}, .resource_claims = {PodClaimRef{.name = "gpus", .claim_name = "c1"}}};
  g.Add("w1", claims);
  GangPlan plan = g.Plan(nodes);
  EXPECT_FALSE(plan.fits);
  EXPECT_TRUE(plan.unplannable);
  EXPECT_THAT(plan.reason, HasSubstr("ml/w1 has ResourceClaims, and no DRA state is known"));
}

// A cluster read from Kubernetes JSON (DRA objects and nodes), and members whose claims it holds.
struct DraCluster {
  explicit DraCluster(std::vector<std::string> objects) {
    objects.push_back(std::string(testing::kGpuClass));
    ClusterObjects c;
    for (const std::string& o : objects) EXPECT_TRUE(kubejson::AppendClusterJson(o, &c).ok()) << o;
    inv.ReplaceCluster(std::move(c));
    snapshot = inv.Snapshot();
    for (const inventory::NodeStatePtr& n : snapshot->nodes()) nodes.push_back(*n);
  }
  GangPlan Plan(Gang& g) { return g.Plan(nodes, GangDra{.state = &snapshot->dra(), .programs = &programs}); }

  inventory::Inventory inv;
  std::shared_ptr<const inventory::InventorySnapshot> snapshot;
  std::vector<NodeState> nodes;
  dra::cel::ProgramCache programs;
};

// Two members of 2 GPUs each through claims, on an nvidia-dra node of 4: the first's devices are
// held on the plan's copy of the node, so the second gets the other two; a third finds none.
TEST(GangPlanner, ClaimMembersTakeDisjointDevicesAndAThirdFindsNone) {
  DraCluster cluster({testing::DraNode("dra-a"), testing::GpuSlice("dra-a", 4), testing::Claim("c-w0", testing::ClaimSpec(2, "")),
                      testing::Claim("c-w1", testing::ClaimSpec(2, "")), testing::Claim("c-w2", testing::ClaimSpec(2, ""))});
  Gang g;
  for (const std::string& w : {std::string("w0"), std::string("w1")}) g.Add(w, testing::DecodedPod(testing::ClaimPod(w, "c-" + w)));
  GangPlan two = cluster.Plan(g);
  ASSERT_TRUE(two.fits) << two.reason;
  std::set<std::string> devices;
  for (const GangSlot& s : two.slots) {
    EXPECT_EQ(s.node, "dra-a");
    EXPECT_EQ(s.placement.kind, ClaimsKind());
    devices.insert(s.placement.devices.begin(), s.placement.devices.end());
  }
  EXPECT_THAT(devices, ::testing::SizeIs(4));
  g.Add("w2", testing::DecodedPod(testing::ClaimPod("w2", "c-w2")));
  GangPlan three = cluster.Plan(g);
  EXPECT_FALSE(three.fits);
  EXPECT_EQ(three.reason, "2 of 3 members fit; ml/w2 fits on no node beside them");
}

// Members of 2, 3 and 3 GPUs through claims on nodes of 4, 4 and 2: placed in the members' order
// the 2 takes a node of 4 and the second 3 fits nowhere; largest first (their claims' device
// counts are their demand) the plan fits.
TEST(GangPlanner, ClaimMembersArePlacedLargestClaimFirst) {
  DraCluster cluster({testing::DraNode("a"), testing::GpuSlice("a", 4), testing::DraNode("b"), testing::GpuSlice("b", 4),
                      testing::DraNode("c"), testing::GpuSlice("c", 2), testing::Claim("c-w0", testing::ClaimSpec(2, "")),
                      testing::Claim("c-w1", testing::ClaimSpec(3, "")), testing::Claim("c-w2", testing::ClaimSpec(3, ""))});
  Gang g;
  for (const std::string& w : {std::string("w0"), std::string("w1"), std::string("w2")}) {
    g.Add(w, testing::DecodedPod(testing::ClaimPod(w, "c-" + w)));
  }
  GangPlan plan = cluster.Plan(g);
  ASSERT_TRUE(plan.fits) << plan.reason;
  EXPECT_EQ(plan.slots[0].node, "c");
  EXPECT_EQ(plan.nodes, 3u);
}

}  // namespace gang_planner_test
}  // namespace gpusched::placement
