// Preemption end to end against the in-process API server, as kube-scheduler drives it: a full
// mGPU cluster, a high-priority pod that fits nowhere, preempt answers the one victim that frees a
// usable GPU, kube-scheduler deletes it and nominates the pod, and the pod binds to the GPU it
// freed, while a lower-priority pod arriving in between is refused that GPU (but not the others).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "fake_apiserver.h"
#include "gpusched/json/json.h"
#include "gpusched/placement/nomination.h"
#include "live_replica.h"

namespace gpusched {
namespace live_preempt_test {

using testing::ArgsWithNames;
using testing::Eventually;
using testing::FakeApiServer;
using testing::LiveReplica;
using testing::Mgpu;
using testing::PodJson;
using ::testing::HasSubstr;

PodJson Running(std::string name, std::string node, int core, int gpu, int32_t priority) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .node = std::move(node), .phase = "Running",
                 .containers = {Mgpu("s", core, 4096)},
                 .annotations = {{"vke.volcengine.com/gpu-index-container-s", std::to_string(gpu)}},
                 .priority = priority};
}

PodJson Pending(std::string name, int core, int32_t priority) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .phase = "Pending",
                 .containers = {Mgpu("s", core, 4096)}, .priority = priority};
}

class LivePreempt : public ::testing::Test {
 protected:
  // m1: GPU 0 holds lo-a (60%, priority 0); GPU 1 holds lo-b (50%, priority 0) and lo-c (40%,
  // priority 100). m2: both GPUs 80% used by priority-100 pods. No GPU has 60% free.
  void SetUp() override {
    api_.Put("nodes", testing::MgpuNode("m1", 2, 24576).ToJson());
    api_.Put("nodes", testing::MgpuNode("m2", 2, 24576).ToJson());
    for (const PodJson& p : {Running("lo-a", "m1", 60, 0, 0), Running("lo-b", "m1", 50, 1, 0), Running("lo-c", "m1", 40, 1, 100),
                             Running("hi-x", "m2", 80, 0, 100), Running("hi-y", "m2", 80, 1, 100)}) {
      api_.Put("pods", p.ToJson());
    }
    api_.Put("pods", urgent_.ToJson());
    replica_ = std::make_unique<LiveReplica>(api_.url());
    ASSERT_TRUE(replica_->sync->WaitSynced(std::chrono::seconds(10)));
  }

  std::string Filter(const PodJson& pod) { return replica_->service->Filter(ArgsWithNames(pod.ToJson(), {"m1", "m2"})); }
  const placement::NodeState& M1() { return *replica_->inventory->Snapshot()->FindNode("m1"); }

  FakeApiServer api_;
  PodJson urgent_ = Pending("urgent", 60, 50);
  std::unique_ptr<LiveReplica> replica_;
};

TEST_F(LivePreempt, ThePreemptorBindsToTheGpuItsVictimFreedAndALowerPriorityPodIsRefusedIt) {
  EXPECT_TRUE(testing::KeptNodes(Filter(urgent_)).empty());
  // kube-scheduler, which sees node totals only, offers lo-a on m1, and m2 as a placeholder.
  // Evicting either lo-a or lo-b frees 60% on one GPU; gpusched gives candidates back in its
  // order (priority, then UID: lo-a first) and keeps lo-b. Nothing on m2 has a lower priority.
  StatusOr<std::string> answer = replica_->service->Preempt(
      testing::PreemptMetaJson(urgent_.ToJson(), {{"m1", {"uid-lo-a"}}, {"m2", {}}}));
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_EQ(*answer, R"({"NodeNameToMetaVictims":{"m1":{"Pods":[{"UID":"uid-lo-b"}],"NumPDBViolations":0}}})");

  // kube-scheduler deletes the victim (graceful: it terminates first) and nominates the pod.
  PodJson dying = Running("lo-b", "m1", 50, 1, 0);
  dying.deletion_timestamp = "2026-11-30T10:05:00Z";
  api_.Put("pods", dying.ToJson());
  urgent_.nominated_node = "m1";
  api_.Put("pods", urgent_.ToJson());
  ASSERT_TRUE(Eventually([&] { return placement::FindHold(M1(), "uid-urgent") != nullptr; }));
  std::string debug = replica_->service->DebugInventory("m1");
  EXPECT_THAT(debug, ::testing::ContainsRegex(R"("holds": \[\s*\{\s*"pod": "ml/urgent")"));
  EXPECT_THAT(debug, ::testing::ContainsRegex(R"("uid": "uid-lo-b",[^}]*"priority": 0,\s*"terminating": true)"));
  // While lo-b terminates, nothing fits yet, the preemptor included.
  EXPECT_TRUE(testing::KeptNodes(Filter(urgent_)).empty());

  api_.Remove("pods", "ml", "lo-b");
  ASSERT_TRUE(Eventually([&] { return M1().allocations.size() == 2; }));
  // A lower-priority pod arriving now is refused GPU 1 (held), and fits nowhere at 50%...
  PodJson sneaky = Pending("sneaky", 50, 10);
  std::string refused = Filter(sneaky);
  EXPECT_TRUE(testing::KeptNodes(refused).empty()) << refused;
  // ...but GPU 0's 40% is not held: a 30% pod still gets it.
  EXPECT_EQ(testing::KeptNodes(Filter(Pending("small", 30, 10))), std::vector<std::string>{"m1"});
  // A pod of higher priority than the holder is not bound by the hold (kube-scheduler counts a
  // nominated pod only against pods of equal or lower priority), in filter and in preempt.
  EXPECT_EQ(testing::KeptNodes(Filter(Pending("vip", 50, 100))), std::vector<std::string>{"m1"});
  StatusOr<std::string> vip = replica_->service->Preempt(testing::PreemptMetaJson(Pending("vip", 90, 100).ToJson(), {{"m1", {}}}));
  ASSERT_TRUE(vip.ok());
  EXPECT_EQ(*vip, R"({"NodeNameToMetaVictims":{"m1":{"Pods":[{"UID":"uid-lo-a"}],"NumPDBViolations":0}}})");

  // The preemptor fits on its nominated node and binds to GPU 1.
  EXPECT_EQ(testing::KeptNodes(Filter(urgent_)), std::vector<std::string>{"m1"});
  std::string bound = replica_->service->Bind(testing::BindJson("urgent", "ml", "uid-urgent", "m1"));
  EXPECT_THAT(bound, HasSubstr(R"("Error":"")"));
  std::optional<std::string> stored = api_.Get("pods", "ml", "urgent");
  ASSERT_TRUE(stored.has_value());
  EXPECT_THAT(*stored, HasSubstr(R"("vke.volcengine.com/gpu-index-container-s":"1")"));
  // Bound: its hold is gone, and its GPU is simply used.
  EXPECT_EQ(placement::FindHold(M1(), "uid-urgent"), nullptr);
}

TEST_F(LivePreempt, AHoldEndsWhenTheNominationIsClearedOrThePodIsDeleted) {
  urgent_.nominated_node = "m1";
  api_.Put("pods", urgent_.ToJson());
  // Nothing terminates on m1, so the pod does not fit even then: it holds nothing.
  ASSERT_TRUE(Eventually([&] { return replica_->inventory->FindPod("uid-lo-a").has_value(); }));
  EXPECT_EQ(placement::FindHold(M1(), "uid-urgent"), nullptr);

  PodJson dying = Running("lo-b", "m1", 50, 1, 0);
  dying.deletion_timestamp = "2026-11-30T10:05:00Z";
  api_.Put("pods", dying.ToJson());
  ASSERT_TRUE(Eventually([&] { return placement::FindHold(M1(), "uid-urgent") != nullptr; }));
  urgent_.nominated_node.clear();
  api_.Put("pods", urgent_.ToJson());
  ASSERT_TRUE(Eventually([&] { return placement::FindHold(M1(), "uid-urgent") == nullptr; }));

  urgent_.nominated_node = "m1";
  api_.Put("pods", urgent_.ToJson());
  ASSERT_TRUE(Eventually([&] { return placement::FindHold(M1(), "uid-urgent") != nullptr; }));
  api_.Remove("pods", "ml", "urgent");
  ASSERT_TRUE(Eventually([&] { return placement::FindHold(M1(), "uid-urgent") == nullptr; }));
}

TEST_F(LivePreempt, TheFailedGpuPlacementEventNamesTheCheapestEviction) {
  Filter(urgent_);
  ASSERT_TRUE(replica_->events->WaitIdle(std::chrono::seconds(10)));
  std::vector<std::string> events = api_.Objects("events");
  ASSERT_EQ(events.size(), 1u);
  rapidjson::Document e;
  ASSERT_TRUE(json::Parse(events[0], &e).ok());
  EXPECT_THAT(e["message"].GetString(), HasSubstr("0/2 nodes fit the GPU request:"));
  EXPECT_THAT(e["message"].GetString(), HasSubstr("; evicting 1 pod on m1 (ml/lo-b, priority 0) makes room"));
  // A pod no eviction helps (nothing of lower priority anywhere) gets no such sentence.
  PodJson lowest = Pending("lowest", 60, 0);
  Filter(lowest);
  ASSERT_TRUE(replica_->events->WaitIdle(std::chrono::seconds(10)));
  ASSERT_EQ(api_.Objects("events").size(), 2u);
  for (const std::string& text : api_.Objects("events")) {
    if (text.find("uid-lowest") != std::string::npos) {
      EXPECT_THAT(text, ::testing::Not(HasSubstr("evicting")));
    }
  }
}

TEST_F(LivePreempt, PodDisruptionBudgetsAreWatched) {
  api_.Put("poddisruptionbudgets", testing::BudgetJson("ml", "db", {{"app", "db"}}, 0));
  auto budgets = [&] { return replica_->inventory->Snapshot()->budgets(); };
  ASSERT_TRUE(Eventually([&] { return budgets() != nullptr && budgets()->size() == 1; }));
  EXPECT_EQ((*budgets())[0].selector.match_labels.at("app"), "db");
  api_.Remove("poddisruptionbudgets", "ml", "db");
  ASSERT_TRUE(Eventually([&] { return budgets() == nullptr; }));
}

}  // namespace live_preempt_test
}  // namespace gpusched
