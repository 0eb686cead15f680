// The meaning of an object never depends on the order objects arrive in: one cluster read cold,
// reloaded, or assembled watch event by watch event in every order gives the same inventory.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::inventory {
namespace object_order_test {

using testing::Claim;
using testing::ClaimSpec;
using testing::DraNode;
using testing::ExtendedGpuPod;
using testing::GpuSlice;
using testing::ListJson;

// What the inventory says of each node: its condition and reason, and every allocation on it
// (pod, mode, devices or GPU count).
std::string Summary(const Inventory& inv) {
  std::string out;
  for (const auto& node : inv.Snapshot()->nodes()) {
    out += node->node.name + " " + std::string(placement::ConditionName(node->condition)) + " [" + node->condition_reason + "]";
    for (const Allocation& a : node->allocations) {
      out += " " + a.pod_uid + ":" + std::string(ModeName(a.mode));
      for (const std::string& d : a.placement.devices) out += "," + d;
    }
    out += "\n";
  }
  return out;
}

ClusterObjects Decode(const std::vector<std::string>& items) {
  ClusterObjects objects;
  EXPECT_TRUE(kubejson::AppendClusterJson(ListJson(items), &objects).ok());
  EXPECT_THAT(objects.errors, ::testing::IsEmpty());
  return objects;
}

// Hands `inv` one object as a watch event of its kind.
void Event(const std::string& item, dra::DraObjectSet* dra_objects, Inventory* inv) {
  ClusterObjects one = Decode({item});
  ClusterDelta delta{.upsert_nodes = std::move(one.nodes), .upsert_pods = std::move(one.pods)};
  if (!one.dra_objects.empty()) {
    dra_objects->Apply(dra::DraDelta{.upserts = std::move(one.dra_objects)});
    delta.dra_state = dra_objects->Build();
  }
  inv->Apply(std::move(delta));
}

// A nvidia-dra node running a pod that got nvidia.com/gpu: 4 through DRA (KEP 5004): its special
// claim allocated and reserved for it, its status naming the claim, a class mapping the resource.
std::vector<std::string> Kep5004Cluster() {
  std::vector<std::string> devices = {"dra-a/gpu-0", "dra-a/gpu-1", "dra-a/gpu-2", "dra-a/gpu-3"};
  return {DraNode("dra-a"), GpuSlice("dra-a", 8), std::string(testing::kGpuClass),
          Claim("w-extended-resources-x7k2q", ClaimSpec(4, ""), devices, {"w"}),
          ExtendedGpuPod("w", 4, "dra-a", "w-extended-resources-x7k2q")};
}

constexpr char kExpected[] =
    "dra-a ready [] w:nvidia-dra,gpu.nvidia.com/dra-a/gpu-0,gpu.nvidia.com/dra-a/gpu-1,gpu.nvidia.com/dra-a/gpu-2,"
    "gpu.nvidia.com/dra-a/gpu-3\n";

// Fails before the fix: the pod was observed before the claim, booked as a device-plugin pod, and
// the node turned switching ("1 GPU pod of the old mode still runs (ml/w)").
TEST(ObjectOrder, AKep5004PodReadColdHoldsItsSpecialClaimsDevicesAndTheNodeStaysReady) {
  Inventory inv;
  inv.ReplaceCluster(Decode(Kep5004Cluster()));
  EXPECT_EQ(Summary(inv), kExpected);
}

TEST(ObjectOrder, AReloadGivesTheSameInventoryAsTheColdRead) {
  Inventory inv;
  std::vector<std::string> items = Kep5004Cluster();
  inv.ReplaceCluster(Decode({items[0], items[4]}));  // the pod first, without its claim
  inv.ReplaceCluster(Decode(items));
  EXPECT_EQ(Summary(inv), kExpected);
  inv.ReplaceCluster(Decode(items));
  EXPECT_EQ(Summary(inv), kExpected);
}

TEST(ObjectOrder, WatchEventsInEveryOrderGiveTheSameInventoryAsTheColdRead) {
  std::vector<std::string> items = Kep5004Cluster();
  std::vector<size_t> order = {0, 1, 2, 3, 4};
  int orders = 0;
  do {
    Inventory inv;
    dra::DraObjectSet dra_objects;
    std::string sequence;
    for (size_t i : order) {
      Event(items[i], &dra_objects, &inv);
      sequence += std::to_string(i);
    }
    EXPECT_EQ(Summary(inv), kExpected) << "events in the order " << sequence;
    ++orders;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(orders, 120);
}

// A gang: its PodGroup, one member pending and one bound on a whole-GPU node. Each object
// arrives as the watch of its kind delivers it (the pending member through the watch of pending
// pods); in every order the inventory says what the cold read says.
std::vector<std::string> GangCluster() {
  auto member = [](std::string name, std::string node) {
    return testing::PodJson{.name = name, .namespace_name = "ml", .uid = name, .node = node,
                            .phase = node.empty() ? "Pending" : "Running", .containers = {testing::WholeGpus("c", 2)},
                            .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"}
        .ToJson();
  };
  return {testing::NvidiaNode("w", 8).ToJson(),
          R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"train","namespace":"ml"},)"
          R"("spec":{"schedulingPolicy":{"gang":{"minCount":2}}}})",
          member("p", ""), member("b", "w")};
}

std::string GangSummary(const Inventory& inv) {
  std::string out = Summary(inv);
  for (const auto& [key, g] : inv.Snapshot()->groups()) out += key + " minCount " + std::to_string(g.min_count) + "\n";
  const GroupTable::Members& members = inv.Snapshot()->MembersOf("PodGroup/ml/train");
  for (const auto& p : members.pending) out += "pending " + p->uid + "\n";
  return out + "bound " + std::to_string(members.bound) + "\n";
}

TEST(ObjectOrder, AGangsGroupAndMembersInEveryOrderGiveTheSameInventoryAsTheColdRead) {
  std::vector<std::string> items = GangCluster();
  Inventory cold;
  cold.ReplaceCluster(Decode(items));
  std::string expected = GangSummary(cold);
  EXPECT_EQ(expected, "w ready [] b:nvidia\nPodGroup/ml/train minCount 2\npending p\nbound 1\n");
  std::vector<size_t> order = {0, 1, 2, 3};
  int orders = 0;
  do {
    Inventory inv;
    std::string sequence;
    for (size_t i : order) {
      ClusterObjects one = Decode({items[i]});
      ClusterDelta delta{.upsert_nodes = std::move(one.nodes), .upsert_groups = std::move(one.pod_groups)};
      for (Pod& p : one.pods) (p.bound() ? delta.upsert_pods : delta.upsert_pending).push_back(std::move(p));
      inv.Apply(std::move(delta));
      sequence += std::to_string(i);
    }
    EXPECT_EQ(GangSummary(inv), expected) << "events in the order " << sequence;
    ++orders;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(orders, 24);
}

}  // namespace object_order_test
}  // namespace gpusched::inventory
