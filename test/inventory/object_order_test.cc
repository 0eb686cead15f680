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

}  // namespace object_order_test
}  // namespace gpusched::inventory
