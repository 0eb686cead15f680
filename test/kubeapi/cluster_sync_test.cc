// The inventory kept in sync with the in-process API server.
#include "gpusched/kubeapi/cluster_sync.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/kubejson/dra_objects.h"
#include "fake_apiserver.h"
#include "live_replica.h"

namespace gpusched::kubeapi {
namespace cluster_sync_test {

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

// Issue "Real cluster input": live sync dropped a bound pod it could not read, so its GPUs looked
// free. It is kept, and its node is inconsistent, naming it, until it is fixed.
TEST(ClusterSync, AnUnreadableBoundPodFencesItsNodeInsteadOfVanishing) {
  FakeApiServer api;
  api.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  PodJson odd{.name = "odd", .namespace_name = "ml", .uid = "u-odd", .node = "w1", .phase = "Running",
              .containers = {testing::ContainerJson{.name = "c", .limits = {{"nvidia.com/gpu", "1500m"}}}}};
  api.Put("pods", odd.ToJson());
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSync sync(client.get(), &inv, Fast());
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  const placement::NodeState* w1 = inv.Snapshot()->FindNode("w1");
  EXPECT_EQ(w1->condition, placement::NodeCondition::kInconsistent);
  EXPECT_THAT(w1->condition_reason, ::testing::HasSubstr("pod ml/odd is bound with an invalid GPU request"));
  EXPECT_THAT(w1->condition_reason, ::testing::HasSubstr("\"1500m\": 1.5 is not a whole number"));
  EXPECT_EQ(inv.Stats().unreadable, 1u);
  // Fixed (the pod is replaced): the node serves again and the pod's GPUs are counted.
  odd.containers = {testing::WholeGpus("c", 2)};
  api.Put("pods", odd.ToJson());
  ASSERT_TRUE(Eventually([&] { return inv.Snapshot()->FindNode("w1")->ready(); }));
  EXPECT_EQ(inv.Snapshot()->FindNode("w1")->whole_used, 2);
  EXPECT_EQ(inv.Stats().unreadable, 0u);
}

TEST(ClusterSync, CanonicalQuantitiesAreCounted) {
  FakeApiServer api;
  api.Put("nodes", R"({"metadata":{"name":"m1","labels":{"vke.node.gpu.schedule":"mgpu"}},"status":{"allocatable":)"
                   R"({"vke.volcengine.com/mgpu-core":"400","vke.volcengine.com/mgpu-memory":"96k"}}})");
  api.Put("pods", PodJson{.name = "s", .namespace_name = "ml", .uid = "u-s", .node = "m1", .phase = "Running",
                          .containers = {testing::ContainerJson{.name = "c",
                                                                .limits = {{"vke.volcengine.com/mgpu-core", "50"},
                                                                           {"vke.volcengine.com/mgpu-memory", "8k"}}}},
                          .annotations = {{"vke.volcengine.com/gpu-index-container-c", "1"}}}
                      .ToJson());
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSync sync(client.get(), &inv, Fast());
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  const placement::NodeState* m1 = inv.Snapshot()->FindNode("m1");
  ASSERT_TRUE(m1->ready()) << m1->condition_reason;
  EXPECT_EQ(m1->capacity_mib, 96000);
  EXPECT_EQ(m1->gpus[1].used_mib, 8000);
}

// Kubernetes 1.32 serves resource.k8s.io/v1beta1 only, 1.33 adds v1beta2: gpusched watches the
// newest the cluster serves, and a cluster without the group at all still syncs.
TEST(ClusterSync, WatchesDraAtTheVersionTheClusterServes) {
  FakeApiServer api(testing::FakeApiServerOptions{.dra_version = "v1beta1", .taint_rule_version = ""});
  api.Put("nodes", testing::NvidiaNode("d1", 0, "nvidia-dra").ToJson());
  api.Put("resourceslices", R"({"metadata":{"name":"d1-gpu"},"spec":{"driver":"gpu.nvidia.com","nodeName":"d1",)"
                            R"("pool":{"name":"d1","generation":1,"resourceSliceCount":1},"devices":[{"name":"gpu-0",)"
                            R"("basic":{"attributes":{"index":{"int":0}},"capacity":{"memory":{"value":"80Gi"}}}}]}})");
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSync sync(client.get(), &inv, Fast());
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  EXPECT_EQ(sync.dra_version(), "v1beta1");
  ASSERT_TRUE(Eventually([&] { return inv.Stats().dra_objects == 1; }));
  EXPECT_THAT(inv.Snapshot()->dra().errors(), ::testing::IsEmpty());
  std::vector<testing::RecordedRequest> requests = api.Requests();
  EXPECT_TRUE(std::any_of(requests.begin(), requests.end(), [](const testing::RecordedRequest& r) {
    return r.target.starts_with("/apis/resource.k8s.io/v1beta1/resourceslices");
  }));

  FakeApiServer none(testing::FakeApiServerOptions{.dra_version = "", .taint_rule_version = ""});
  none.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  auto none_client = Client(none);
  inventory::Inventory none_inv;
  ClusterSync none_sync(none_client.get(), &none_inv, Fast());
  none_sync.Start();
  ASSERT_TRUE(none_sync.WaitSynced(std::chrono::seconds(10)));
  EXPECT_EQ(none_sync.dra_version(), "");
  EXPECT_EQ(none_inv.Snapshot()->nodes().size(), 1u);
}

// DeviceTaintRules are watched at the newest version that serves them (1.36: v1beta2 beside DRA's
// v1), their taints merged into the slices; a cluster that serves none (the gate off) is synced
// and healthy without them.
TEST(ClusterSync, WatchesDeviceTaintRulesWhereTheClusterServesThem) {
  FakeApiServer api(testing::FakeApiServerOptions{.dra_version = "v1", .taint_rule_version = "v1beta2"});
  api.Put("nodes", testing::DraNode("d1"));
  api.Put("resourceslices", testing::GpuSlice("d1", 2));
  api.Put("devicetaintrules", R"({"metadata":{"name":"xid"},"spec":{"deviceSelector":{"driver":"gpu.nvidia.com","pool":"d1",)"
                              R"("device":"gpu-1"},"taint":{"key":"gpu.nvidia.com/xid","value":"79","effect":"NoExecute"}}})");
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSync sync(client.get(), &inv, Fast());
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  EXPECT_EQ(sync.dra_version(), "v1");
  EXPECT_EQ(sync.taint_rule_version(), "v1beta2");
  auto taints = [&] {
    dra::ClusterStatePtr state = inv.Snapshot()->dra_ptr();
    for (const auto& s : state->slices().all()) return s->slice().devices[1].taints.size();
    return size_t{0};
  };
  ASSERT_TRUE(Eventually([&] { return taints() == 1; }));
  ASSERT_TRUE(api.Remove("devicetaintrules", "", "xid"));
  ASSERT_TRUE(Eventually([&] { return taints() == 0; }));

  FakeApiServer off(testing::FakeApiServerOptions{.dra_version = "v1", .taint_rule_version = ""});
  off.Put("nodes", testing::DraNode("d1"));
  auto off_client = Client(off);
  inventory::Inventory off_inv;
  ClusterSync off_sync(off_client.get(), &off_inv, Fast());
  off_sync.Start();
  ASSERT_TRUE(off_sync.WaitSynced(std::chrono::seconds(10)));
  EXPECT_EQ(off_sync.taint_rule_version(), "");
  EXPECT_TRUE(off_sync.healthy());
}

// DRA watch events arrive as typed deltas: each object decoded once, the state rebuilt from the
// typed set; an update, an unreadable copy, its repair and a deletion each reach the inventory.
TEST(ClusterSync, DraEventsUpdateTheStateObjectByObject) {
  FakeApiServer api;
  api.Put("nodes", testing::DraNode("d1"));
  api.Put("resourceslices", testing::GpuSlice("d1", 2));
  api.Put("deviceclasses", std::string(testing::kGpuClass));
  api.Put("resourceclaims", testing::Claim("train", testing::ClaimSpec(1, "")));
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSync sync(client.get(), &inv, Fast());
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  ASSERT_TRUE(Eventually([&] { return inv.Stats().dra_objects == 3; }));
  const dra::DeviceId gpu0{"gpu.nvidia.com", "d1", "gpu-0"};
  EXPECT_EQ(inv.Snapshot()->dra().Holder(gpu0), "");

  api.Put("resourceclaims", testing::Claim("train", testing::ClaimSpec(1, ""), {"d1/gpu-0"}));
  ASSERT_TRUE(Eventually([&] { return inv.Snapshot()->dra().Holder(gpu0) == "ml/train"; }));

  std::string broken = R"({"metadata":{"name":"d2-gpu.nvidia.com-x"},"spec":{"driver":"gpu.nvidia.com","nodeName":"d2",)"
                       R"("pool":{"name":"d2","generation":1,"resourceSliceCount":1},)"
                       R"("devices":[{"name":"gpu-0","capacity":{"memory":{"value":"12 apples"}}}]}})";
  api.Put("resourceslices", broken);
  ASSERT_TRUE(Eventually([&] { return inv.Snapshot()->dra().errors().size() == 1; }));
  EXPECT_THAT(inv.Snapshot()->dra().errors()[0], ::testing::HasSubstr("ResourceSlice d2-gpu.nvidia.com-x.spec.devices[0].capacity"));
  api.Put("resourceslices", testing::GpuSlice("d2", 1));
  ASSERT_TRUE(Eventually([&] { return inv.Snapshot()->dra().errors().empty() && inv.Snapshot()->dra().slices().all().size() == 2; }));

  ASSERT_TRUE(api.Remove("resourceclaims", "ml", "train"));
  ASSERT_TRUE(Eventually([&] { return inv.Snapshot()->dra().FindClaim("ml", "train") == nullptr; }));
  EXPECT_EQ(inv.Snapshot()->dra().Holder(gpu0), "");
}

// Pod groups are watched for each API the cluster serves (1.37's PodGroup v1beta1, 1.35's
// Workload v1alpha1, Coscheduling's CRD), a Workload's groups change together, and a cluster that
// serves none (the default: GenericWorkload off, no scheduler-plugins) syncs without them.
TEST(ClusterSync, WatchesThePodGroupsOfEveryApiTheClusterServes) {
  FakeApiServer api(testing::FakeApiServerOptions{.pod_group_version = "v1beta1", .workload_version = "v1alpha1",
                                                  .coscheduling_version = "v1alpha1"});
  api.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  api.Put("podgroups", R"({"metadata":{"name":"train","namespace":"ml"},"spec":{"schedulingPolicy":{"gang":{"minCount":4}}}})");
  api.Put("workloads", R"({"metadata":{"name":"job","namespace":"ml"},"spec":{"podGroups":[)"
                       R"({"name":"workers","policy":{"gang":{"minCount":8}}},{"name":"launcher","policy":{"basic":{}}}]}})");
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSync sync(client.get(), &inv, Fast());
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  EXPECT_EQ(sync.group_versions().pod_group, "v1beta1");
  EXPECT_EQ(sync.group_versions().workload, "v1alpha1");
  EXPECT_EQ(sync.group_versions().coscheduling, "v1alpha1");
  auto keys = [&] {
    std::vector<std::string> out;
    for (const auto& [key, g] : inv.Snapshot()->groups()) out.push_back(key + "=" + std::to_string(g.min_count));
    return out;
  };
  ASSERT_TRUE(Eventually([&] {
    return keys() == std::vector<std::string>{"PodGroup/ml/train=4", "Workload/ml/job/launcher=0", "Workload/ml/job/workers=8"};
  })) << ::testing::PrintToString(keys());
  api.Put("podgroups.scheduling.x-k8s.io", R"({"metadata":{"name":"mpi","namespace":"hpc"},"spec":{"minMember":3}})");
  api.Put("workloads", R"({"metadata":{"name":"job","namespace":"ml"},"spec":{"podGroups":[)"
                       R"({"name":"workers","policy":{"gang":{"minCount":6}}}]}})");
  ASSERT_TRUE(api.Remove("podgroups", "ml", "train"));
  ASSERT_TRUE(Eventually([&] {
    return keys() == std::vector<std::string>{"Coscheduling/hpc/mpi=3", "Workload/ml/job/workers=6"};
  })) << ::testing::PrintToString(keys());
  // A Workload updated to declare no group any more declares none.
  api.Put("workloads", R"({"metadata":{"name":"job","namespace":"ml"},"spec":{"podGroups":[]}})");
  ASSERT_TRUE(Eventually([&] { return keys() == std::vector<std::string>{"Coscheduling/hpc/mpi=3"}; }))
      << ::testing::PrintToString(keys());

  FakeApiServer none;
  none.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  auto none_client = Client(none);
  inventory::Inventory none_inv;
  ClusterSync none_sync(none_client.get(), &none_inv, Fast());
  none_sync.Start();
  ASSERT_TRUE(none_sync.WaitSynced(std::chrono::seconds(10)));
  EXPECT_EQ(none_sync.group_versions().pod_group, "");
  EXPECT_TRUE(none_sync.healthy());
}

// A gang member filtered before its PodGroup is read would be placed alone: a pod-group watch
// holds readiness back until its first LIST lands, however late.
TEST(ClusterSync, ASlowPodGroupListHoldsReadinessBackUntilTheGroupIsRead) {
  FakeApiServer api(testing::FakeApiServerOptions{.pod_group_version = "v1beta1"});
  api.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  api.Put("podgroups", R"({"metadata":{"name":"train","namespace":"ml"},"spec":{"schedulingPolicy":{"gang":{"minCount":4}}}})");
  api.SetDelay("/apis/scheduling.k8s.io/v1beta1/podgroups", std::chrono::milliseconds(500));
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSync sync(client.get(), &inv, Fast());
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  EXPECT_TRUE(inv.Snapshot()->groups().contains("PodGroup/ml/train"));
  EXPECT_TRUE(sync.healthy());
}

// Review finding: one transient failure of the first PodGroup LIST (a 500, a 429) made
// readiness stop waiting for it. It still waits, through the retry.
TEST(ClusterSync, ATransientPodGroupListFailureStillHoldsReadinessBack) {
  FakeApiServer api(testing::FakeApiServerOptions{.pod_group_version = "v1beta1"});
  api.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  api.Put("podgroups", R"({"metadata":{"name":"train","namespace":"ml"},"spec":{"schedulingPolicy":{"gang":{"minCount":4}}}})");
  api.FailNext("GET", "/apis/scheduling.k8s.io/v1beta1/podgroups", 500, 3);
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSync sync(client.get(), &inv, Fast());
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  EXPECT_TRUE(inv.Snapshot()->groups().contains("PodGroup/ml/train"));
}

// A pod-group watch the ClusterRole does not allow yet (403: gpusched upgraded, its RBAC not)
// keeps failing and retrying, but neither holds back readiness nor makes the sync unhealthy:
// only gangs depend on it.
TEST(ClusterSync, ARefusedPodGroupWatchStopsNoPod) {
  FakeApiServer api(testing::FakeApiServerOptions{.coscheduling_version = "v1alpha1"});
  api.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  api.FailNext("GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", 403, 1000000);
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSyncOptions options = Fast();
  options.unhealthy_after = std::chrono::seconds(0);
  ClusterSync sync(client.get(), &inv, options);
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  EXPECT_EQ(sync.group_versions().coscheduling, "v1alpha1");
  ASSERT_TRUE(Eventually([&] {
    for (const auto& [name, stats] : sync.stats()) {
      if (name == "podgroups.scheduling.x-k8s.io" && stats.failing_since) return true;
    }
    return false;
  }));
  EXPECT_TRUE(sync.healthy());
}

// Review finding: a refusal (403) followed by other errors (a 500, a 429 from flow control) made
// readiness wait again until unhealthy_after, the extender flapping unready. A refused watch
// stays given up until one of its LISTs passes.
TEST(ClusterSync, ARefusedWatchStaysGivenUpThroughLaterErrors) {
  FakeApiServer api(testing::FakeApiServerOptions{.coscheduling_version = "v1alpha1"});
  api.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  api.FailNext("GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", 403, 1);
  api.FailNext("GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", 500, 1000000);
  auto client = Client(api);
  inventory::Inventory inv;
  ClusterSyncOptions options = Fast();
  options.unhealthy_after = std::chrono::seconds(60);
  ClusterSync sync(client.get(), &inv, options);
  sync.Start();
  ASSERT_TRUE(sync.WaitSynced(std::chrono::seconds(10)));
  ASSERT_TRUE(Eventually([&] {
    for (const auto& [name, stats] : sync.stats()) {
      if (name == "podgroups.scheduling.x-k8s.io" && stats.errors >= 3) return true;
    }
    return false;
  }));
  EXPECT_TRUE(sync.synced());
}

}  // namespace cluster_sync_test
}  // namespace gpusched::kubeapi
