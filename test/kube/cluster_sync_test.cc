// The inventory kept in sync with the in-process API server.
#include "gpusched/kube/cluster_sync.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "fake_apiserver.h"
#include "live_replica.h"

namespace gpusched::kube {
namespace {

using testing::Eventually;
using testing::FakeApiServer;
using testing::PodJson;

std::unique_ptr<ApiClient> Client(const FakeApiServer& server) {
  ApiConfig c;
  EXPECT_TRUE(ParseServerUrl(server.url(), &c).ok());
  return std::move(ApiClient::Create(c)).value();
}

ClusterSyncOptions Fast() {
  return ClusterSyncOptions{.reflector = {.backoff_initial = std::chrono::milliseconds(10),
                                          .backoff_max = std::chrono::milliseconds(50)},
                            .expire_interval = std::chrono::milliseconds(50),
                            .unhealthy_after = std::chrono::seconds(1)};
}

std::string BoundPod(const std::string& name, const std::string& node, int gpus, const std::string& phase = "Running") {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "u-" + name, .node = node, .phase = phase,
                 .containers = {testing::WholeGpus("c", gpus)}}
      .ToJson();
}

TEST(ClusterSync, TheInventoryFollowsNodesAndBoundPods) {
  FakeApiServer api;
  api.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  api.Put("nodes", testing::MgpuNode("m1", 2, 24576).ToJson());
  api.Put("pods", BoundPod("a", "w1", 3));
  api.Put("pods", PodJson{.name = "pending", .namespace_name = "ml", .uid = "u-pending", .containers = {testing::WholeGpus("c", 1)}}.ToJson());
  api.Put("deviceclasses", R"({"metadata":{"name":"gpu.nvidia.com"},"spec":{}})");
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSync sync(client.get(), &inv, Fast());
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  EXPECT_EQ(inv.Snapshot()->nodes().size(), 2u);
  EXPECT_EQ(inv.Snapshot()->FindNode("w1")->whole_used, 3);
  EXPECT_FALSE(inv.FindPod("u-pending"));  // only bound pods are watched
  EXPECT_EQ(inv.Stats().dra_objects, 1u);

  api.Put("pods", BoundPod("b", "w1", 2));
  ASSERT_TRUE(Eventually([&] { return inv.Snapshot()->FindNode("w1")->whole_used == 5; }));
  api.Put("pods", BoundPod("a", "w1", 3, "Succeeded"));  // leaves the selection: DELETED
  ASSERT_TRUE(Eventually([&] { return inv.Snapshot()->FindNode("w1")->whole_used == 2; }));
  api.Remove("nodes", "", "m1");
  ASSERT_TRUE(Eventually([&] { return inv.Snapshot()->FindNode("m1") == nullptr; }));
  // A relist after 410 replaces everything: b was deleted while the watch was gone.
  api.CompactHistory();
  api.DropWatches();
  api.Remove("pods", "ml", "b");
  api.CompactHistory();
  ASSERT_TRUE(Eventually([&] { return inv.Snapshot()->FindNode("w1")->whole_used == 0; }));
  EXPECT_EQ(inv.Stats().ledger_size, 0u);
}

TEST(ClusterSync, AWatchFailingForLongMakesItUnhealthyUntilItRecovers) {
  FakeApiServer api;
  api.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSync sync(client.get(), &inv, Fast());
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  ASSERT_TRUE(Eventually([&] { return sync.healthy(); }));
  api.FailNext("GET", "/api/v1/pods", 503, 1000000);
  api.DropWatches();
  ASSERT_TRUE(Eventually([&] { return !sync.healthy(); }));
  EXPECT_TRUE(sync.synced());  // it did sync once; it is the present view that is in doubt
  api.ClearFaults();  // the pods reflector gets through again
  ASSERT_TRUE(Eventually([&] { return sync.healthy(); }));
}

}  // namespace
}  // namespace gpusched::kube
