// gpusched as Kueue's admission check against the in-process API server, with Kueue's objects as
// Kueue 0.19 serves them (kueue.x-k8s.io/v1beta2; apis/kueue/v1beta2/workload_types.go,
// admissioncheck_types.go): kueue #4329 (aggregate quota, no topology scheduling): an 8-GPU pod
// over 4 + 4 free GPUs is Retry, then, once a node drains and Kueue has reserved quota again,
// Ready with the plan held on the node, and the pod Kueue starts binds into the held GPUs. A
// replica that does not hold the leader's Lease writes nothing; a replica started afterwards
// (a restart) finds the hold on the node.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "cluster_json.h"
#include "dra_json.h"
#include "fake_apiserver.h"
#include "fake_clock.h"
#include "gpusched/common/clock.h"
#include "gpusched/common/time_format.h"
#include "gpusched/json/json.h"
#include "live_replica.h"

namespace gpusched {
namespace live_kueue_test {

using ::testing::HasSubstr;
using testing::ArgsWithNames;
using testing::BindJson;
using testing::Eventually;
using testing::KeptNodes;
using testing::PodJson;

// ml/job-big: one pod of 8 GPUs, quota reserved in gpu-cq on flavor "default", gpusched's check
// Pending (as Kueue leaves it after it reserves quota, and again after an eviction).
std::string Workload(const std::string& extra_status = "") {
  return R"({"metadata":{"name":"job-big","namespace":"ml","uid":"w-uid","generation":1,
  "ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"big","uid":"job-uid","controller":true}]},
  "spec":{"active":true,"queueName":"team","priority":0,"podSets":[{"name":"main","count":1,"template":{"spec":{
   "containers":[{"name":"c","image":"trainer","resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}}]},
  "status":{"conditions":[{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"Quota reserved in ClusterQueue gpu-cq",
   "lastTransitionTime":"2026-12-05T00:00:00Z"}],
  "admission":{"clusterQueue":"gpu-cq","podSetAssignments":[{"name":"main","flavors":{"nvidia.com/gpu":"default"},
   "resourceUsage":{"nvidia.com/gpu":"8"},"count":1}]},
  "admissionChecks":[{"name":"gpu-placement","state":"Pending","message":"","lastTransitionTime":"2026-12-05T00:00:00Z","retryCount":2},
   {"name":"provisioning","state":"Ready","message":"capacity is there","lastTransitionTime":"2026-12-05T00:00:00Z"}])" +
         extra_status + "}}";
}

std::string Lease(const std::string& holder, int64_t renewed_ms) {
  return fmt::format(R"({{"metadata":{{"name":"gpu-scheduler","namespace":"kube-system"}},"spec":{{"holderIdentity":"{}",)"
                     R"("leaseDurationSeconds":15,"renewTime":"{}"}}}})",
                     holder, FormatRfc3339(renewed_ms));
}

// The state, message and other fields of check `name` in the stored Workload.
struct CheckSeen {
  std::string state, message, annotations;
  int64_t requeue_after = -1;
  int64_t retry_count = -1;  // Kueue's, kept as read
  size_t entries = 0;
};
CheckSeen Seen(const testing::FakeApiServer& api, const std::string& name = "gpu-placement") {
  CheckSeen out;
  std::optional<std::string> w = api.Get("workloads.kueue.x-k8s.io", "ml", "job-big");
  rapidjson::Document d;
  if (!w || !json::Parse(*w, &d).ok()) return out;
  const rapidjson::Value& checks = d["status"]["admissionChecks"];
  out.entries = checks.Size();
  for (const rapidjson::Value& c : checks.GetArray()) {
    if (c["name"].GetString() != name) continue;
    out.state = c["state"].GetString();
    out.message = c["message"].GetString();
    if (c.HasMember("requeueAfterSeconds")) out.requeue_after = c["requeueAfterSeconds"].GetInt64();
    if (c.HasMember("retryCount")) out.retry_count = c["retryCount"].GetInt64();
    if (c.HasMember("podSetUpdates")) {
      for (const auto& m : c["podSetUpdates"][0]["annotations"].GetObject()) {
        out.annotations += fmt::format("{}={};", m.name.GetString(), m.value.GetString());
      }
    }
  }
  return out;
}

class LiveKueue : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Put("nodes", testing::NvidiaNode("g1", 8).ToJson());
    api_.Put("nodes", testing::NvidiaNode("g2", 8).ToJson());
    for (const char* node : {"g1", "g2"}) {
      api_.Put("pods", PodJson{.name = fmt::format("busy-{}", node), .uid = fmt::format("busy-{}", node), .node = node,
                               .phase = "Running", .containers = {testing::WholeGpus("c", 4)}}
                           .ToJson());
    }
    api_.Put("resourceflavors", R"({"metadata":{"name":"default"},"spec":{}})");
    api_.Put("admissionchecks", R"({"metadata":{"name":"gpu-placement"},"spec":{"controllerName":"gpusched.io/gpu-placement"}})");
    api_.Put("admissionchecks", R"({"metadata":{"name":"provisioning"},"spec":{"controllerName":"kueue.x-k8s.io/provisioning-request"}})");
    api_.Put("clusterqueues", R"({"metadata":{"name":"gpu-cq"},"spec":{"admissionChecksStrategy":{"admissionChecks":[
      {"name":"gpu-placement"},{"name":"provisioning"}]}}})");
    api_.Put("workloads.kueue.x-k8s.io", Workload());
    api_.Put("leases", Lease("gpusched-0_5f1c", RealClock().WallMs()));
  }

  // A replica whose pod is named `host`, synced, the Workload read.
  std::unique_ptr<testing::LiveReplica> Start(const std::string& host) {
    auto r = std::make_unique<testing::LiveReplica>(api_.url(), extender::ServiceOptions{}, inventory::InventoryOptions{},
                                                    kubeapi::ApiBinderOptions{}, false, extender::ServiceCollaborators{.clock = &clock_},
                                                    kubeapi::ApiKueueWriterOptions{.identity = host});
    EXPECT_TRUE(r->sync->WaitSynced(std::chrono::seconds(10)));
    EXPECT_EQ(r->sync->kueue_version(), "v1beta2");
    EXPECT_TRUE(Eventually([&] { return r->inventory->kueue().State()->FindWorkload("ml/job-big") != nullptr; }));
    return r;
  }

  // Waits until replica `r` has read the Workload at the API server's current resourceVersion.
  void CatchUp(const testing::LiveReplica& r) {
    rapidjson::Document d;
    ASSERT_TRUE(json::Parse(*api_.Get("workloads.kueue.x-k8s.io", "ml", "job-big"), &d).ok());
    std::string rv = d["metadata"]["resourceVersion"].GetString();
    EXPECT_TRUE(Eventually([&] {
      const kueue::Workload* w = r.inventory->kueue().State()->FindWorkload("ml/job-big");
      return w != nullptr && w->resource_version == rv;
    }));
  }

  size_t StatusWrites() const {
    size_t n = 0;
    for (const testing::RecordedRequest& r : api_.Requests()) n += r.method == "PATCH" && r.target.ends_with("/status") ? 1 : 0;
    return n;
  }

  testing::FakeApiServer api_{testing::FakeApiServerOptions{.kueue_version = "v1beta2"}};
  testing::FakeClock clock_{RealClock().WallMs()};  // the service's: Retry verdicts at most once per minute
};

TEST_F(LiveKueue, FourAndFourFreeIsRetryThenAfterADrainReadyAndThePodBindsIntoTheHold) {
  std::unique_ptr<testing::LiveReplica> a = Start("gpusched-0");
  EXPECT_EQ(a->service->SweepKueue(), 1u);
  CheckSeen retry = Seen(api_);
  EXPECT_EQ(retry.state, "Retry");
  EXPECT_THAT(retry.message, HasSubstr("job-big-main-0 fits on 0 of 2 nodes: insufficient nvidia.com/gpu: pod needs 8, node has 4 of 8 free"));
  EXPECT_EQ(retry.requeue_after, 60);
  EXPECT_EQ(retry.retry_count, 2) << "Kueue's field, kept as read";
  EXPECT_EQ(retry.entries, 2u) << "the other check's entry is kept";
  EXPECT_EQ(Seen(api_, "provisioning").state, "Ready");
  EXPECT_THAT(*api_.Get("admissionchecks", "", "gpu-placement"), HasSubstr(R"("type":"Active","status":"True")"));
  EXPECT_THAT(*api_.Get("admissionchecks", "", "provisioning"), ::testing::Not(HasSubstr("Active"))) << "not gpusched's";

  // Kueue evicts on Retry, requeues after requeueAfterSeconds, and reserves quota again: the
  // check is Pending again. g2 drained.
  clock_.Advance(std::chrono::seconds(61));
  ASSERT_TRUE(api_.Remove("pods", "default", "busy-g2"));
  api_.Put("workloads.kueue.x-k8s.io", Workload());
  CatchUp(*a);
  EXPECT_TRUE(Eventually([&] { return a->inventory->Snapshot()->FindNode("g2")->whole_used == 0; }));
  EXPECT_EQ(a->service->SweepKueue(), 1u);
  CheckSeen ready = Seen(api_);
  EXPECT_EQ(ready.state, "Ready");
  EXPECT_EQ(ready.message, "1 pod fit on 1 node: g2 (1)");
  EXPECT_EQ(ready.annotations, "gpusched.io/kueue-podset=main;gpusched.io/kueue-workload=ml/job-big;");
  EXPECT_THAT(*api_.Get("nodes", "", "g2"), HasSubstr("kueue/ml/job-big/main/0")) << "held on the node";
  // Another pod asking 8 GPUs is refused g2: the plan holds it.
  PodJson other{.name = "other", .uid = "uid-other", .containers = {testing::WholeGpus("c", 8)}};
  EXPECT_TRUE(Eventually([&] { return KeptNodes(a->service->Filter(ArgsWithNames(other.ToJson(), {"g1", "g2"}))).empty(); }));

  // Kueue admits; the Job's pod carries the podSetUpdates' annotations, and binds into the hold.
  PodJson pod{.name = "big-abcde", .namespace_name = "ml", .uid = "uid-big", .containers = {testing::WholeGpus("c", 8)},
              .annotations = {{"gpusched.io/kueue-workload", "ml/job-big"}, {"gpusched.io/kueue-podset", "main"}}};
  api_.Put("pods", pod.ToJson());
  EXPECT_THAT(KeptNodes(a->service->Filter(ArgsWithNames(pod.ToJson(), {"g1", "g2"}))), ::testing::ElementsAre("g2"));
  std::string bound = a->service->Bind(BindJson("big-abcde", "ml", "uid-big", "g2"));
  EXPECT_THAT(bound, ::testing::Not(HasSubstr("error"))) << bound;
  EXPECT_THAT(*api_.Get("pods", "ml", "big-abcde"), HasSubstr(R"("nodeName":"g2")"));
}

TEST_F(LiveKueue, AReplicaThatDoesNotHoldTheLeaseWritesNothing) {
  api_.Put("leases", Lease("gpusched-1_77aa", RealClock().WallMs()));
  std::unique_ptr<testing::LiveReplica> standby = Start("gpusched-0");
  EXPECT_EQ(standby->service->SweepKueue(), 0u);
  api_.Put("leases", Lease("gpusched-0_5f1c", RealClock().WallMs() - 60'000));  // ours, but run out
  EXPECT_EQ(standby->service->SweepKueue(), 0u);
  EXPECT_EQ(StatusWrites(), 0u);
  EXPECT_EQ(Seen(api_).state, "Pending");
}

TEST_F(LiveKueue, ARestartedReplicaFindsTheHoldOnTheNode) {
  ASSERT_TRUE(api_.Remove("pods", "default", "busy-g2"));
  std::unique_ptr<testing::LiveReplica> a = Start("gpusched-0");
  EXPECT_TRUE(Eventually([&] { return a->inventory->Snapshot()->FindNode("g2")->whole_used == 0; }));
  EXPECT_EQ(a->service->SweepKueue(), 1u);
  ASSERT_EQ(Seen(api_).state, "Ready");
  a.reset();
  std::unique_ptr<testing::LiveReplica> b = Start("gpusched-0");
  PodJson other{.name = "other", .uid = "uid-other", .containers = {testing::WholeGpus("c", 8)}};
  EXPECT_THAT(KeptNodes(b->service->Filter(ArgsWithNames(other.ToJson(), {"g1", "g2"}))), ::testing::IsEmpty());
  CatchUp(*b);
  EXPECT_EQ(b->service->SweepKueue(), 0u) << "decided already: Ready, and its hold kept";
  EXPECT_THAT(*api_.Get("nodes", "", "g2"), HasSubstr("kueue/ml/job-big/main/0"));
}

// While a watch of Kueue's objects has not listed (here: ClusterQueues refused), the check must
// not act: a ClusterQueue not read looks like one without gpusched's check, and a Workload not
// read like one deleted, whose holds would be ended. The rest of the sync is healthy meanwhile.
TEST_F(LiveKueue, TheCheckWaitsUntilEveryWatchOfKueuesObjectsHasListed) {
  api_.FailNext("GET", "/apis/kueue.x-k8s.io/v1beta2/clusterqueues", 403, 1000);
  std::unique_ptr<testing::LiveReplica> a = Start("gpusched-0");
  EXPECT_TRUE(a->sync->healthy());
  EXPECT_FALSE(a->sync->kueue_healthy());
  api_.ClearFaults();
  EXPECT_TRUE(Eventually([&] { return a->sync->kueue_healthy(); }));
}

// A Workload of `count` pods of pod set "main" with `spec` as the template's spec, quota reserved,
// gpusched's check Pending.
std::string WorkloadOf(int count, const std::string& spec) {
  return fmt::format(R"({{"metadata":{{"name":"job-big","namespace":"ml","uid":"w-uid"}},"spec":{{"queueName":"team","podSets":[)"
                     R"({{"name":"main","count":{},"template":{{"spec":{}}}}}]}},"status":{{"conditions":[{{"type":"QuotaReserved",)"
                     R"("status":"True","reason":"QuotaReserved","message":"","lastTransitionTime":"2026-12-05T00:00:00Z"}}],)"
                     R"("admission":{{"clusterQueue":"gpu-cq","podSetAssignments":[{{"name":"main","flavors":{{"nvidia.com/gpu":"default"}},)"
                     R"("count":{}}}]}},"admissionChecks":[{{"name":"gpu-placement","state":"Pending","message":"",)"
                     R"("lastTransitionTime":"2026-12-05T00:00:00Z"}}]}}}})",
                     count, spec, count);
}

// mGPU: four pods of 60% core each; six one-GPU nodes 40% free add up to what they ask, all
// Kueue's aggregate quota counts. No GPU holds one: Retry.
TEST_F(LiveKueue, SharesSplitFortyFortyFortyAreRetryThoughTheyAddUp) {
  for (const char* node : {"g1", "g2"}) ASSERT_TRUE(api_.Remove("nodes", "", node));
  for (int i = 0; i < 6; ++i) {
    std::string node = fmt::format("m{}", i);
    api_.Put("nodes", testing::MgpuNode(node, 1, 24576).ToJson());
    api_.Put("pods", PodJson{.name = "busy-" + node, .uid = "busy-" + node, .node = node, .phase = "Running",
                             .containers = {testing::Mgpu("s", 60, 4096)},
                             .annotations = {{"vke.volcengine.com/gpu-index-container-s", "0"}}}
                         .ToJson());
  }
  api_.Put("workloads.kueue.x-k8s.io",
           WorkloadOf(4, R"({"containers":[{"name":"c","image":"x","resources":{"limits":{"vke.volcengine.com/mgpu-core":"60",)"
                         R"("vke.volcengine.com/mgpu-memory":"4096"}}}]})"));
  std::unique_ptr<testing::LiveReplica> a = Start("gpusched-0");
  CatchUp(*a);
  EXPECT_TRUE(Eventually([&] { return a->inventory->Snapshot()->nodes().size() == 6; }));
  EXPECT_EQ(a->service->SweepKueue(), 1u);
  CheckSeen seen = Seen(api_);
  EXPECT_EQ(seen.state, "Retry");
  EXPECT_THAT(seen.message, HasSubstr("fits on 0 of 6 nodes: GPU 0: 40% core free, needs 60%"));
}

// kueue PR #15577: 3 replicas, each needing one device through a ResourceClaimTemplate; one node
// with 2 matching devices and nothing else: Retry. With a second such node: Ready, the plan held
// across both.
TEST_F(LiveKueue, ThreeReplicasOfOneDeviceOnANodeWithTwoAreRetryThenReadyAcrossTwoNodes) {
  for (const char* node : {"g1", "g2"}) ASSERT_TRUE(api_.Remove("nodes", "", node));
  auto put_dra_node = [&](const std::string& name) {
    api_.Put("nodes", testing::DraNode(name));
    api_.Put("resourceslices", testing::GpuSlice(name, 2));
  };
  put_dra_node("d1");
  api_.Put("deviceclasses", std::string(testing::kGpuClass));
  api_.Put("resourceclaimtemplates", R"({"metadata":{"name":"one-gpu","namespace":"ml"},"spec":{"spec":)" + testing::ClaimSpec(1, "") + "}}");
  api_.Put("workloads.kueue.x-k8s.io",
           WorkloadOf(3, R"({"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}],"containers":[{"name":"c",)"
                         R"("image":"x","resources":{"claims":[{"name":"gpu"}]}}]})"));
  std::unique_ptr<testing::LiveReplica> a = Start("gpusched-0");
  CatchUp(*a);
  EXPECT_TRUE(Eventually([&] { return a->inventory->kueue().State()->claim_templates.size() == 1; }));
  EXPECT_TRUE(Eventually([&] { return a->inventory->Snapshot()->dra().slices().all().size() == 1; }));
  EXPECT_EQ(a->service->SweepKueue(), 1u);
  EXPECT_EQ(Seen(api_).state, "Retry");
  put_dra_node("d2");
  api_.Put("workloads.kueue.x-k8s.io",
           WorkloadOf(3, R"({"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}],"containers":[{"name":"c",)"
                         R"("image":"x","resources":{"claims":[{"name":"gpu"}]}}]})"));
  CatchUp(*a);
  EXPECT_TRUE(Eventually([&] { return a->inventory->Snapshot()->dra().slices().all().size() == 2; }));
  // The Node comes through its own watch: its slice may be read first.
  EXPECT_TRUE(Eventually([&] { return a->inventory->Snapshot()->FindNode("d2") != nullptr; }));
  clock_.Advance(std::chrono::seconds(61));
  EXPECT_EQ(a->service->SweepKueue(), 1u);
  CheckSeen ready = Seen(api_);
  EXPECT_EQ(ready.state, "Ready") << ready.message;
  EXPECT_THAT(ready.message, HasSubstr("3 pods fit on 2 nodes: d1 (2), d2 (1)"));
  EXPECT_THAT(*api_.Get("nodes", "", "d1"), HasSubstr("kueue/ml/job-big/main/"));
  EXPECT_THAT(*api_.Get("nodes", "", "d2"), HasSubstr("kueue/ml/job-big/main/"));
}

}  // namespace live_kueue_test
}  // namespace gpusched
