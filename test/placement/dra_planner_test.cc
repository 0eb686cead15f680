// The DRA planner (placement/dra_planner.h) on one node: GPU claims only on ready nvidia-dra nodes,
// the compatible choice kube-scheduler's allocator would make beside gpusched's ranked one (a
// multi-GPU request inside one PCIe root), and the devices a nominated pod holds there.
#include "gpusched/placement/dra_planner.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::placement {
namespace dra_planner_test {

using ::testing::HasSubstr;
using namespace gpusched::testing;

// The devices of a choice, by name ("gpu-2").
std::set<std::string> Devices(const std::vector<dra::AllocationResult>& choice) {
  std::set<std::string> out;
  for (const dra::AllocationResult& r : choice) {
    for (const dra::DeviceResult& d : r.results) out.insert(d.id.device);
  }
  return out;
}

// dra-a: 4 GPUs in two PCIe roots (gpu-0 and gpu-1, gpu-2 and gpu-3), gpu-0 taken by claim
// "other". plain: the same 4 GPUs on a node in mode nvidia (device plugin). Claim "pair" asks 2.
struct Cluster {
  Cluster() {
    ClusterObjects c;
    for (const std::string& o : {DraNode("dra-a"), GpuSlice("dra-a", 4), DraNode("plain", "nvidia"), GpuSlice("plain", 4),
                                 std::string(kGpuClass), Claim("pair", ClaimSpec(2, "")),
                                 Claim("other", ClaimSpec(1, ""), {"dra-a/gpu-0"}, {"o"})}) {
      EXPECT_TRUE(kubejson::AppendClusterJson(o, &c).ok()) << o;
    }
    inventory.ReplaceCluster(std::move(c));
    snapshot = inventory.Snapshot();
  }
  const NodeState& Node(const std::string& name) const { return *snapshot->FindNode(name); }

  inventory::Inventory inventory;
  std::shared_ptr<const inventory::InventorySnapshot> snapshot;
  dra::cel::ProgramCache programs;
};

// `inventory` holding the objects of `json`, and its snapshot.
std::shared_ptr<const inventory::InventorySnapshot> SnapshotOf(const std::vector<std::string>& json, inventory::Inventory* inventory) {
  ClusterObjects objects;
  for (const std::string& o : json) EXPECT_TRUE(kubejson::AppendClusterJson(o, &objects).ok()) << o;
  inventory->ReplaceCluster(std::move(objects));
  return inventory->Snapshot();
}

TEST(DraPlanner, AGpuClaimIsRefusedOnANodeOutsideModeNvidiaDraWhateverItPublishes) {
  Cluster c;
  Pod pod = DecodedPod(ClaimPod("p", "pair"));
  DraPlanner planner(c.snapshot->dra(), pod, &c.programs);
  ASSERT_TRUE(planner.problem().empty()) << planner.problem();
  DraVerdict v = planner.Evaluate(c.Node("plain"), /*rank=*/false);
  EXPECT_EQ(v.node.outcome, Outcome::kUnresolvable);  // evictions cannot change a node's mode
  EXPECT_EQ(v.node.reject, Reject::kModeMismatch);
}

TEST(DraPlanner, TheRankedChoiceKeepsAPairInOnePcieRootWhereUpstreamsNeedNot) {
  Cluster c;
  Pod pod = DecodedPod(ClaimPod("p", "pair"));
  DraPlanner planner(c.snapshot->dra(), pod, &c.programs);
  DraVerdict v = planner.Evaluate(c.Node("dra-a"), /*rank=*/true);
  ASSERT_TRUE(v.fits()) << v.node.reason;
  // Upstream's allocator takes the first free devices in order: gpu-1 and gpu-2, across roots.
  EXPECT_EQ(Devices(v.compat), (std::set<std::string>{"gpu-1", "gpu-2"}));
  // gpusched's choice keeps the pair on one root, and leaves gpu-1 beside the taken gpu-0.
  EXPECT_EQ(Devices(v.ranked), (std::set<std::string>{"gpu-2", "gpu-3"}));
  EXPECT_TRUE(v.topology_aligned);
  EXPECT_EQ(v.gpus_taken, 2);
}

// Issue 34 §1: dra-l's GPUs are NVLink pairs across the PCIe roots (gpu-0+gpu-2, gpu-1+gpu-3),
// as the node agent publishes them; gpu-0 is taken. The ranked choice is the free pair.
TEST(DraPlanner, TheRankedChoiceGivesAPairNvlinkConnectedGpus) {
  std::string node = DraNodeWithLinks("dra-l", {{2}, {3}, {0}, {1}});
  inventory::Inventory inventory;
  auto snapshot = SnapshotOf({node, GpuSlice("dra-l", 4), std::string(kGpuClass), Claim("pair", ClaimSpec(2, "")),
                              Claim("other", ClaimSpec(1, ""), {"dra-l/gpu-0"}, {"o"})},
                             &inventory);
  dra::cel::ProgramCache programs;
  Pod pod = DecodedPod(ClaimPod("p", "pair"));
  DraPlanner planner(snapshot->dra(), pod, &programs);
  const NodeState& state = *snapshot->FindNode("dra-l");
  ASSERT_TRUE(state.ready()) << state.condition_reason;
  DraVerdict v = planner.Evaluate(state, /*rank=*/true);
  ASSERT_TRUE(v.fits()) << v.node.reason;
  EXPECT_EQ(Devices(v.compat), (std::set<std::string>{"gpu-1", "gpu-2"}));  // upstream: the first free
  EXPECT_EQ(Devices(v.ranked), (std::set<std::string>{"gpu-1", "gpu-3"}));  // not one PCIe root's gpu-2+gpu-3
  EXPECT_TRUE(v.nvlink_connected);
  EXPECT_EQ(v.gpus_taken, 2);
  // Where kube-scheduler allocates, upstream's first free pair is what the node will get: scattered.
  EXPECT_EQ(v.links.standing, LinkedStanding::kScattered);
  EXPECT_EQ(DescribeChosenLinks(v.links, planner.to_allocate()[v.links.claim]->name),
            "the devices allocated here for claim pair request gpus would be GPU1+GPU2, not NVLink-connected");
  EXPECT_EQ(planner.Evaluate(state, /*rank=*/false).links.standing, LinkedStanding::kScattered) << "filter judges it too";
  // Where gpusched allocates (owner mode), its ranked choice: connected, also without ranking.
  DraPlanner owner(snapshot->dra(), pod, &programs, DraOptions{.ranked_allocated = true});
  EXPECT_EQ(owner.Evaluate(state, /*rank=*/false).links.standing, LinkedStanding::kConnected);
  // The allocator still applies the request's rules: a selector that refuses gpu-3 leaves no
  // connected pair, and the choice falls back to upstream's.
  ClusterObjects with_selector;
  std::string selector = Quoted("device.attributes['gpu.nvidia.com'].uuid != 'GPU-dra-l-3'");
  for (const std::string& o : {node, GpuSlice("dra-l", 4), std::string(kGpuClass), Claim("pair", ClaimSpec(2, selector)),
                               Claim("other", ClaimSpec(1, ""), {"dra-l/gpu-0"}, {"o"})}) {
    ASSERT_TRUE(kubejson::AppendClusterJson(o, &with_selector).ok()) << o;
  }
  inventory.ReplaceCluster(std::move(with_selector));
  auto picky_snapshot = inventory.Snapshot();
  DraPlanner picky_planner(picky_snapshot->dra(), pod, &programs);
  DraVerdict fallback = picky_planner.Evaluate(*picky_snapshot->FindNode("dra-l"), /*rank=*/true);
  ASSERT_TRUE(fallback.fits()) << fallback.node.reason;
  EXPECT_FALSE(fallback.nvlink_connected);
  EXPECT_EQ(Devices(fallback.ranked), (std::set<std::string>{"gpu-1", "gpu-2"}));
}

// Review finding: upstream takes a node's pools in map order and gpusched by name, so where a
// node's GPUs come from two slices upstream's first fit is not known exactly; its links are not
// judged (filter refuses nothing for them) unless gpusched allocates.
TEST(DraPlanner, TheLinksOfUpstreamsChoiceAreUnknownWhereTheGpusComeFromTwoSlices) {
  std::string one = GpuSlice("dra-l", 4);
  std::string first = one, second = one;
  first.replace(first.find(R"("resourceSliceCount":1)"), 22, R"("resourceSliceCount":2)");
  second.replace(second.find(R"("resourceSliceCount":1)"), 22, R"("resourceSliceCount":2)");
  second.replace(second.find("-gpu.nvidia.com-x"), 17, "-gpu.nvidia.com-y");
  // The first slice keeps gpu-0 and gpu-1, the second gpu-2 and gpu-3.
  first.erase(first.find(R"(,{"name":"gpu-2")"), first.find(R"(]}})") - first.find(R"(,{"name":"gpu-2")"));
  second.erase(second.find(R"({"name":"gpu-0")"), second.find(R"({"name":"gpu-2")") - second.find(R"({"name":"gpu-0")"));
  inventory::Inventory inventory;
  auto snapshot = SnapshotOf({DraNodeWithLinks("dra-l", {{2}, {3}, {0}, {1}}), first, second, std::string(kGpuClass),
                              Claim("pair", ClaimSpec(2, "")), Claim("other", ClaimSpec(1, ""), {"dra-l/gpu-0"}, {"o"})},
                             &inventory);
  dra::cel::ProgramCache programs;
  Pod pod = DecodedPod(ClaimPod("p", "pair"));
  const NodeState& state = *snapshot->FindNode("dra-l");
  DraVerdict v = DraPlanner(snapshot->dra(), pod, &programs).Evaluate(state, /*rank=*/true);
  ASSERT_TRUE(v.fits()) << v.node.reason;
  EXPECT_EQ(v.links.standing, LinkedStanding::kUnknown);
  EXPECT_TRUE(v.nvlink_connected) << "gpusched's own choice still takes a pair";
  DraPlanner owner(snapshot->dra(), pod, &programs, DraOptions{.ranked_allocated = true});
  EXPECT_EQ(owner.Evaluate(state, /*rank=*/false).links.standing, LinkedStanding::kConnected);
}

// A prioritized list (firstAvailable): the subrequest upstream chose is judged, its results named
// "gpus/pair"; a list whose chosen subrequest asks one GPU has nothing to judge.
TEST(DraPlanner, TheChosenSubrequestOfAPrioritizedListIsJudgedOnTheLinks) {
  auto spec = [](int first, int second) {
    return fmt::format(R"({{"devices":{{"requests":[{{"name":"gpus","firstAvailable":[)"
                       R"({{"name":"pair","deviceClassName":"gpu.nvidia.com","count":{}}},)"
                       R"({{"name":"one","deviceClassName":"gpu.nvidia.com","count":{}}}]}}]}}}})",
                       first, second);
  };
  inventory::Inventory inventory;
  auto snapshot = SnapshotOf({DraNodeWithLinks("dra-l", {{2}, {3}, {0}, {1}}), GpuSlice("dra-l", 4), std::string(kGpuClass),
                              Claim("listed", spec(2, 1)), Claim("small", spec(5, 1)),
                              Claim("other", ClaimSpec(1, ""), {"dra-l/gpu-0"}, {"o"})},
                             &inventory);
  dra::cel::ProgramCache programs;
  const NodeState& state = *snapshot->FindNode("dra-l");
  Pod listed = DecodedPod(ClaimPod("p", "listed"));
  DraPlanner planner(snapshot->dra(), listed, &programs);
  DraVerdict v = planner.Evaluate(state, /*rank=*/false);
  ASSERT_TRUE(v.fits()) << v.node.reason;
  EXPECT_EQ(v.links.standing, LinkedStanding::kScattered);
  EXPECT_EQ(DescribeChosenLinks(v.links, "listed"),
            "the devices allocated here for claim listed request gpus/pair would be GPU1+GPU2, not NVLink-connected");
  Pod small = DecodedPod(ClaimPod("q", "small"));  // 5 GPUs do not fit: the one-GPU subrequest is chosen
  DraVerdict one = DraPlanner(snapshot->dra(), small, &programs).Evaluate(state, /*rank=*/false);
  ASSERT_TRUE(one.fits()) << one.node.reason;
  EXPECT_EQ(one.links.standing, LinkedStanding::kUnknown);
}

TEST(DraPlanner, DevicesHeldForANominatedPodOfHigherPriorityAreTakenForOthers) {
  Cluster c;
  Pod pod = DecodedPod(ClaimPod("p", "pair", "", /*priority=*/5));
  DraPlanner planner(c.snapshot->dra(), pod, &c.programs);
  // A pod of priority 10 nominated here holds gpu-2 and gpu-3: the pair no longer fits.
  Allocation hold{.pod_uid = "nominee", .pod_namespace = "ml", .pod_name = "nominee", .node_name = "dra-a",
                  .mode = NodeMode::kNvidiaDra, .origin = AllocationOrigin::kHeld, .priority = 10};
  hold.placement = Placement{.kind = RequestKind::kDra, .devices = {"gpu.nvidia.com/dra-a/gpu-2", "gpu.nvidia.com/dra-a/gpu-3"}};
  NodeState held = c.Node("dra-a");
  AddHold(hold, &held);
  DraVerdict refused = planner.Evaluate(held, /*rank=*/false);
  EXPECT_EQ(refused.node.outcome, Outcome::kUnschedulable);
  EXPECT_THAT(refused.node.reason, HasSubstr("1 of 2 devices available"));
  // Held for a pod of lower priority, the devices are room for this one.
  hold.priority = 1;
  NodeState lower = c.Node("dra-a");
  AddHold(hold, &lower);
  EXPECT_TRUE(planner.Evaluate(lower, /*rank=*/false).fits());
}

}  // namespace dra_planner_test
}  // namespace gpusched::placement
