// bind for real: the extender's service with the live binder against the in-process API server.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <thread>

#include "cluster_json.h"
#include "fake_apiserver.h"
#include "fake_clock.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/node_bookings.h"
#include "live_replica.h"

namespace gpusched {
namespace live_bind_test {

using testing::BindJson;
using testing::Eventually;
using testing::FakeApiServer;
using testing::LiveReplica;
using testing::PodJson;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kNow = 1'764'470'000'000;  // a fixed wall clock (Unix ms) for exact bodies

struct Fixture {
  FakeApiServer api;
  testing::FakeClock clock{kNow};
  std::unique_ptr<LiveReplica> replica;

  void Start(extender::ServiceOptions options = {}) {
    replica = std::make_unique<LiveReplica>(api.url(), std::move(options), inventory::InventoryOptions{.clock = &clock},
                                            kubeapi::ApiBinderOptions{.clock = &clock});
    ASSERT_TRUE(replica->sync->WaitSynced(std::chrono::seconds(10)));
  }

  // Node w1 with `node_gpus` whole GPUs, pod ml/p (uid u-p) asking for `pod_gpus` (stored in the
  // API server unless `stored` is false), synced and filtered: ready for bind.
  void StartWithPodP(int node_gpus, int pod_gpus, bool stored = true);
};

std::string PendingPod(const std::string& name, const std::string& uid, testing::ContainerJson c) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = uid, .resource_version = "5", .containers = {std::move(c)}}.ToJson();
}

void Fixture::StartWithPodP(int node_gpus, int pod_gpus, bool stored) {
  api.Put("nodes", testing::NvidiaNode("w1", node_gpus).ToJson());
  std::string pod = PendingPod("p", "u-p", testing::WholeGpus("c", pod_gpus));
  if (stored) api.Put("pods", pod);
  Start();
  replica->service->Filter(testing::ArgsWithNames(pod, {"w1"}));
}

std::string BindError(const std::string& reply) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(reply, &d).ok()) << reply;
  return d["Error"].GetString();
}

std::vector<testing::RecordedRequest> Writes(const FakeApiServer& api) {
  std::vector<testing::RecordedRequest> out;
  for (auto& r : api.Requests()) {
    if (r.method != "GET") out.push_back(r);
  }
  return out;
}

TEST(LiveBind, BooksTheNodeThenBindsWithTheAnnotations) {
  Fixture f;
  f.api.Put("nodes", testing::MgpuNode("m1", 2, 24576).ToJson());
  std::string pod = f.api.Put("pods", PendingPod("train", "u-train", testing::Mgpu("main", 30, 8192)));
  std::string pod_rv = f.api.resource_version();  // kube-scheduler sends the pod as stored
  f.Start();
  std::string node_rv = f.replica->inventory->Snapshot()->FindNode("m1")->node.resource_version;
  ASSERT_FALSE(node_rv.empty());
  f.api.ClearRequests();
  f.replica->service->Filter(testing::ArgsWithNames(pod, {"m1"}));
  EXPECT_EQ(BindError(f.replica->service->Bind(BindJson("train", "ml", "u-train", "m1"))), "");

  std::vector<testing::RecordedRequest> w = Writes(f.api);
  ASSERT_EQ(w.size(), 2u);  // no pod PATCH: the Binding carries the annotations
  EXPECT_EQ(w[0].method, "PATCH");
  EXPECT_EQ(w[0].target, "/api/v1/nodes/m1");
  EXPECT_EQ(w[0].content_type, "application/merge-patch+json");
  EXPECT_EQ(w[0].body,
            R"({"metadata":{"resourceVersion":")" + node_rv +
                R"(","annotations":{"gpusched.io/bookings":"{\"u-train\":{\"pod\":\"ml/train\",\"at\":1764470000000,)"
                R"(\"mode\":\"mgpu\",\"containers\":[{\"name\":\"main\",\"gpus\":[0],\"milli\":300,\"mib\":8192}]}}"}}})");
  EXPECT_EQ(w[1].method, "POST");
  EXPECT_EQ(w[1].target, "/api/v1/namespaces/ml/pods/train/binding");
  EXPECT_EQ(w[1].body,
            R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"train","namespace":"ml","uid":"u-train",)"
            R"("annotations":{"vke.volcengine.com/assumed":"true","vke.volcengine.com/gpu-index-container-main":"0"}},)"
            R"("target":{"apiVersion":"v1","kind":"Node","name":"m1"}})");
  // The API server now has the pod bound with its annotations; the watch brings it back observed.
  EXPECT_THAT(*f.api.Get("pods", "ml", "train"), HasSubstr(R"("nodeName":"m1")"));
  ASSERT_TRUE(Eventually([&] {
    auto a = f.replica->inventory->AllocationOf("u-train");
    return a && a->origin == AllocationOrigin::kObserved;
  }));
  EXPECT_EQ(f.replica->inventory->Snapshot()->FindNode("m1")->FindGpu(0)->used_milli, 300);
}

TEST(LiveBind, AWholeGpuPodIsBookedAndBoundWithoutAnAnnotationPatch) {
  Fixture f;
  f.api.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  std::string pod = PendingPod("infer", "u-infer", testing::WholeGpus("c", 2));
  f.api.Put("pods", pod);
  f.Start();
  f.api.ClearRequests();
  f.replica->service->Filter(testing::ArgsWithNames(pod, {"w1"}));
  EXPECT_EQ(BindError(f.replica->service->Bind(BindJson("infer", "ml", "u-infer", "w1"))), "");
  std::vector<testing::RecordedRequest> w = Writes(f.api);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_THAT(w[0].body, HasSubstr(R"(\"mode\":\"nvidia\",\"gpus\":2)"));
  EXPECT_EQ(w[1].body,
            R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"infer","namespace":"ml","uid":"u-infer"},)"
            R"("target":{"apiVersion":"v1","kind":"Node","name":"w1"}})");
}

TEST(LiveBind, ANodeThatChangedIsReadAgainAndTheBindPlannedAgain) {
  Fixture f;
  f.StartWithPodP(8, 1);
  f.api.FailNext("PATCH", "/api/v1/nodes/w1", 409);
  f.api.ClearRequests();
  EXPECT_EQ(BindError(f.replica->service->Bind(BindJson("p", "ml", "u-p", "w1"))), "");
  std::vector<std::string> seq;
  for (const auto& r : f.api.Requests()) {
    if (r.target.find("watch=1") == std::string::npos) seq.push_back(r.method + " " + r.target);
  }
  EXPECT_THAT(seq, ::testing::ElementsAre("PATCH /api/v1/nodes/w1", "GET /api/v1/nodes/w1", "PATCH /api/v1/nodes/w1",
                                          "POST /api/v1/namespaces/ml/pods/p/binding"));
}

TEST(LiveBind, ARefusedBindingReleasesTheLedgerAndTheNodesBooking) {
  Fixture f;
  f.StartWithPodP(8, 4);
  f.api.FailNext("POST", "/api/v1/namespaces/ml/pods/p/binding", 409);
  std::string error = BindError(f.replica->service->Bind(BindJson("p", "ml", "u-p", "w1")));
  EXPECT_THAT(error, HasSubstr("bind ml/p to w1 failed: binding: 409 injected fault"));
  EXPECT_FALSE(f.replica->inventory->AllocationOf("u-p"));
  EXPECT_EQ(f.replica->inventory->Snapshot()->FindNode("w1")->whole_used, 0);
  EXPECT_THAT(*f.api.Get("nodes", "", "w1"), HasSubstr(R"("gpusched.io/bookings":"{}")"));
  ASSERT_TRUE(Eventually([&] { return f.replica->inventory->Snapshot()->FindNode("w1")->node.bookings.empty(); }));
  EXPECT_EQ(f.replica->inventory->Snapshot()->FindNode("w1")->whole_used, 0);
}

TEST(LiveBind, ARecreatedPodOfTheSameNameIsNeverBound) {
  Fixture f;
  f.api.Put("nodes", testing::MgpuNode("m1", 1, 24576).ToJson());
  std::string old_pod = PendingPod("p", "u-old", testing::Mgpu("main", 50, 4096));
  f.api.Put("pods", PendingPod("p", "u-new", testing::Mgpu("main", 50, 4096)));  // deleted and recreated
  f.Start();
  f.replica->service->Filter(testing::ArgsWithNames(old_pod, {"m1"}));
  std::string error = BindError(f.replica->service->Bind(BindJson("p", "ml", "u-old", "m1")));
  // The Binding's UID precondition refuses the new pod of the same name: not bound, not annotated.
  EXPECT_THAT(error, HasSubstr("bind ml/p to m1 failed: binding: 409"));
  EXPECT_THAT(error, HasSubstr("Precondition failed: UID in precondition: u-old, UID in object meta: u-new"));
  EXPECT_THAT(*f.api.Get("pods", "ml", "p"), ::testing::Not(HasSubstr("nodeName")));
  EXPECT_THAT(*f.api.Get("pods", "ml", "p"), ::testing::Not(HasSubstr("gpu-index-container")));
  EXPECT_FALSE(f.replica->inventory->AllocationOf("u-old"));
}

TEST(LiveBind, APodAnotherReplicaBoundMeanwhileKeepsItsAnnotations) {
  Fixture f;
  f.api.Put("nodes", testing::MgpuNode("m1", 2, 24576).ToJson());
  std::string pod = f.api.Put("pods", PendingPod("p", "u-p", testing::Mgpu("main", 50, 4096)));
  std::string seen = PodJson{.name = "p", .namespace_name = "ml", .uid = "u-p", .resource_version = f.api.resource_version(),
                             .containers = {testing::Mgpu("main", 50, 4096)}}
                         .ToJson();
  f.Start();
  f.replica->service->Filter(testing::ArgsWithNames(seen, {"m1"}));
  // Another replica bound it to GPU 1 after kube-scheduler read it.
  f.api.Put("pods", PodJson{.name = "p", .namespace_name = "ml", .uid = "u-p", .node = "m1", .phase = "Pending",
                            .containers = {testing::Mgpu("main", 50, 4096)},
                            .annotations = {{"vke.volcengine.com/gpu-index-container-main", "1"},
                                            {"vke.volcengine.com/assumed", "true"}}}
                        .ToJson());
  // Either the watch already showed it bound to m1 (bind answers success: it is bound there) or
  // the annotation's preconditions refuse to touch it.
  std::string error = BindError(f.replica->service->Bind(BindJson("p", "ml", "u-p", "m1")));
  if (!error.empty()) {
    EXPECT_THAT(error, HasSubstr("annotating the pod: 409"));
  }
  EXPECT_THAT(*f.api.Get("pods", "ml", "p"), HasSubstr(R"("vke.volcengine.com/gpu-index-container-main":"1")"));
  ASSERT_TRUE(Eventually([&] {
    auto a = f.replica->inventory->AllocationOf("u-p");
    return a && a->origin == AllocationOrigin::kObserved && a->placement.containers[0].gpu_indices == std::vector<int>{1};
  }));
}

TEST(LiveBind, AnUnknownOutcomeKeepsTheBookingAndTheRetryFinishesTheBind) {
  Fixture f;
  f.StartWithPodP(2, 2);
  f.api.FailNext("POST", "/api/v1/namespaces/ml/pods/p/binding", 503);
  EXPECT_THAT(BindError(f.replica->service->Bind(BindJson("p", "ml", "u-p", "w1"))), HasSubstr("outcome unknown"));
  // Still booked: another pod cannot take the GPUs meanwhile.
  EXPECT_TRUE(f.replica->inventory->AllocationOf("u-p"));
  EXPECT_EQ(f.replica->inventory->Snapshot()->FindNode("w1")->whole_used, 2);
  // kube-scheduler retries the bind: it goes through.
  EXPECT_EQ(BindError(f.replica->service->Bind(BindJson("p", "ml", "u-p", "w1"))), "");
  EXPECT_THAT(*f.api.Get("pods", "ml", "p"), HasSubstr(R"("nodeName":"w1")"));
}

TEST(LiveBind, ABookingWhoseAnswerWasLostIsTakenBackAndTheBindFails) {
  Fixture f;
  f.StartWithPodP(8, 2, /*stored=*/false);
  f.api.Inject({.method = "PATCH", .path_prefix = "/api/v1/nodes/w1", .status = 0, .apply_first = true});
  EXPECT_THAT(BindError(f.replica->service->Bind(BindJson("p", "ml", "u-p", "w1"))), HasSubstr("bind ml/p to w1 failed"));
  EXPECT_THAT(*f.api.Get("nodes", "", "w1"), HasSubstr(R"("gpusched.io/bookings":"{}")"));
  EXPECT_FALSE(f.replica->inventory->AllocationOf("u-p"));
  ASSERT_TRUE(Eventually([&] { return f.replica->inventory->Snapshot()->FindNode("w1")->node.bookings.empty(); }));
  EXPECT_EQ(f.replica->inventory->Snapshot()->FindNode("w1")->whole_used, 0);
}

TEST(LiveBind, ABindingStoredButAnswered503IsSeenBoundAndNotDoubleCounted) {
  Fixture f;
  f.StartWithPodP(2, 2);
  f.api.Inject({.method = "POST", .path_prefix = "/api/v1/namespaces/ml/pods/p/binding", .status = 503, .apply_first = true});
  EXPECT_THAT(BindError(f.replica->service->Bind(BindJson("p", "ml", "u-p", "w1"))), HasSubstr("outcome unknown"));
  ASSERT_TRUE(Eventually([&] {
    auto a = f.replica->inventory->AllocationOf("u-p");
    return a && a->origin == AllocationOrigin::kObserved;
  }));
  EXPECT_EQ(f.replica->inventory->Snapshot()->FindNode("w1")->whole_used, 2);
  // kube-scheduler's retry: the pod is bound there.
  EXPECT_EQ(BindError(f.replica->service->Bind(BindJson("p", "ml", "u-p", "w1"))), "");
}

TEST(LiveBind, ALeftoverBookingOfThePodDoesNotPassForABind) {
  // A booking of this very pod, left by an attempt that died (another replica, or ours before a
  // restart), must not make bind answer success without a Binding.
  Fixture f;
  NodeBooking left{.allocation = {.pod_uid = "u-p", .pod_namespace = "ml", .pod_name = "p", .node_name = "w1",
                                  .mode = NodeMode::kNvidia, .placement = {.kind = RequestKind::kWholeGpu, .whole_gpus = 1},
                                  .origin = AllocationOrigin::kBooked},
                   .booked_at_ms = kNow - 1000};
  testing::NodeJson w1 = testing::NvidiaNode("w1", 8);
  w1.extra_annotations["gpusched.io/bookings"] = kubejson::EncodeNodeBookings({left});
  f.api.Put("nodes", w1.ToJson());
  std::string pod = PendingPod("p", "u-p", testing::WholeGpus("c", 1));
  f.api.Put("pods", pod);
  f.Start();
  ASSERT_EQ(f.replica->inventory->AllocationOf("u-p")->origin, AllocationOrigin::kBooked);
  f.replica->service->Filter(testing::ArgsWithNames(pod, {"w1"}));
  EXPECT_EQ(BindError(f.replica->service->Bind(BindJson("p", "ml", "u-p", "w1"))), "");
  EXPECT_THAT(*f.api.Get("pods", "ml", "p"), HasSubstr(R"("nodeName":"w1")"));
  ASSERT_TRUE(Eventually([&] { return f.replica->inventory->AllocationOf("u-p")->origin == AllocationOrigin::kObserved; }));
  EXPECT_EQ(f.replica->inventory->Snapshot()->FindNode("w1")->whole_used, 1);
}

TEST(LiveBind, TwoReplicasRacingForTheLastGpuBindOnlyOnePod) {
  FakeApiServer api;
  api.Put("nodes", testing::NvidiaNode("w1", 1).ToJson());
  std::string p1 = PendingPod("p1", "u-1", testing::WholeGpus("c", 1));
  std::string p2 = PendingPod("p2", "u-2", testing::WholeGpus("c", 1));
  api.Put("pods", p1);
  api.Put("pods", p2);
  // Both replicas plan on the same view of w1 before either books it.
  std::barrier both(2);
  std::atomic<int> arrivals{0};
  auto with = [&] {
    extender::ServiceCollaborators w;
    w.before_commit = [&] {
      if (arrivals.fetch_add(1) < 2) both.arrive_and_wait();
    };
    return w;
  };
  LiveReplica a(api.url(), {}, {}, {}, false, with());
  LiveReplica b(api.url(), {}, {}, {}, false, with());
  ASSERT_TRUE(a.sync->WaitSynced(std::chrono::seconds(10)));
  ASSERT_TRUE(b.sync->WaitSynced(std::chrono::seconds(10)));
  a.service->Filter(testing::ArgsWithNames(p1, {"w1"}));
  b.service->Filter(testing::ArgsWithNames(p2, {"w1"}));
  std::string ea, eb;
  std::thread ta([&] { ea = BindError(a.service->Bind(BindJson("p1", "ml", "u-1", "w1"))); });
  std::thread tb([&] { eb = BindError(b.service->Bind(BindJson("p2", "ml", "u-2", "w1"))); });
  ta.join();
  tb.join();
  EXPECT_NE(ea.empty(), eb.empty()) << "a: " << ea << "\nb: " << eb;
  EXPECT_THAT(ea + eb, HasSubstr("insufficient"));
  int bound = 0;
  for (const std::string& p : api.Objects("pods")) bound += p.find(R"("nodeName":"w1")") != std::string::npos;
  EXPECT_EQ(bound, 1);
  // Both replicas converge on the same ledger.
  ASSERT_TRUE(Eventually([&] {
    return a.inventory->Snapshot()->FindNode("w1")->whole_used == 1 && b.inventory->Snapshot()->FindNode("w1")->whole_used == 1 &&
           a.inventory->Stats().ledger_size == 1 && b.inventory->Stats().ledger_size == 1;
  }));
}

TEST(LiveBind, APodThatFitsNowhereGetsOneEventPerInterval) {
  Fixture f;
  f.api.Put("nodes", testing::NvidiaNode("w1", 2).ToJson());
  f.api.Put("nodes", testing::MgpuNode("m1", 2, 24576).ToJson());
  std::string pod = PendingPod("big", "u-big", testing::WholeGpus("c", 4));
  f.Start();
  f.replica->service->Filter(testing::ArgsWithNames(pod, {"w1", "m1"}));
  f.replica->service->Filter(testing::ArgsWithNames(pod, {"w1", "m1"}));
  ASSERT_TRUE(f.replica->events->WaitIdle(std::chrono::seconds(10)));
  std::vector<std::string> events = f.api.Objects("events");
  ASSERT_EQ(events.size(), 1u);
  rapidjson::Document e;
  ASSERT_TRUE(json::Parse(events[0], &e).ok());
  EXPECT_EQ(std::string(e["reason"].GetString()), "FailedGPUPlacement");
  EXPECT_EQ(std::string(e["type"].GetString()), "Warning");
  EXPECT_EQ(std::string(e["involvedObject"]["uid"].GetString()), "u-big");
  EXPECT_EQ(std::string(e["involvedObject"]["kind"].GetString()), "Pod");
  EXPECT_THAT(e["message"].GetString(), HasSubstr("0/2 nodes fit the GPU request:"));
  EXPECT_THAT(e["message"].GetString(), HasSubstr("node mode mgpu; pod requests nvidia.com/gpu"));
  EXPECT_EQ(f.replica->events->stats().posted, 1u);
  EXPECT_THAT(Writes(f.api).back().target, "/api/v1/namespaces/ml/events");
}


TEST(LiveBind, APodWithoutGpusIsBoundToTheNodeKubeSchedulerChose) {
  // Nothing to book: the Binding still names the node (it once went out with an empty target).
  Fixture f;
  f.api.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
  std::string pod = PendingPod("web", "u-web", testing::ContainerJson{.name = "c"});
  f.api.Put("pods", pod);
  f.Start();
  f.replica->service->Filter(testing::ArgsWithNames(pod, {"w1"}));
  EXPECT_EQ(BindError(f.replica->service->Bind(BindJson("web", "ml", "u-web", "w1"))), "");
  EXPECT_THAT(*f.api.Get("pods", "ml", "web"), HasSubstr(R"("nodeName":"w1")"));
}

}  // namespace live_bind_test
}  // namespace gpusched
