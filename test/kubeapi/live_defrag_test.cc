// An applied defrag plan against the in-process API server: the moved pod is evicted through the
// Eviction API, its replacement (a new pod of the same controller) gets the GPUs held for it
// while any other pod is refused them, the pending pod's room is held for it; an eviction the
// API server refuses (a PodDisruptionBudget) stops the plan and drops its holds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "cluster_json.h"
#include "dra_json.h"
#include "fake_apiserver.h"
#include "gpusched/json/json.h"
#include "gpusched/placement/nomination.h"
#include "live_replica.h"

namespace gpusched {
namespace {

using testing::ArgsWithNames;
using testing::Eventually;
using testing::PodJson;
using testing::WholeGpus;
using ::testing::HasSubstr;

PodJson Running(std::string name, std::string node, int gpus, std::string controller = "") {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .node = std::move(node), .phase = "Running",
                 .containers = {WholeGpus("s", gpus)}, .labels = {{"app", name}}, .priority = 0,
                 .controller_uid = std::move(controller)};
}

PodJson Pending(std::string name, int gpus, std::string controller = "") {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .phase = "Pending",
                 .containers = {WholeGpus("s", gpus)}, .controller_uid = std::move(controller)};
}

rapidjson::Document Parse(const std::string& body) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(body, &d).ok()) << body;
  return d;
}

class LiveDefrag : public ::testing::Test {
 protected:
  // w0: a4 (4 GPUs) and a2 (2, of ReplicaSet rs-a2) of 8; w1: b6 (6) of 8. A 4-GPU pod fits after
  // a2 moves to w1.
  void SetUp() override {
    api_.Put("nodes", testing::NvidiaNode("w0", 8).ToJson());
    api_.Put("nodes", testing::NvidiaNode("w1", 8).ToJson());
    for (const PodJson& p : {Running("a4", "w0", 4, "rs-a4"), Running("a2", "w0", 2, "rs-a2"), Running("b6", "w1", 6, "rs-b6")}) {
      api_.Put("pods", p.ToJson());
    }
    api_.Put("pods", train_.ToJson());
    replica_ = std::make_unique<testing::LiveReplica>(api_.url());
    ASSERT_TRUE(replica_->sync->WaitSynced(std::chrono::seconds(10)));
  }

  bool Fits(const PodJson& pod, const std::string& node) {
    std::string reply = replica_->service->Filter(ArgsWithNames(pod.ToJson(), {node}));
    return reply.find(R"("NodeNames":[")" + node) != std::string::npos;
  }

  testing::FakeApiServer api_;
  PodJson train_ = Pending("train", 4);
  std::unique_ptr<testing::LiveReplica> replica_;
};

TEST_F(LiveDefrag, TheMovedPodIsEvictedAndItsReplacementGetsTheHeldGpus) {
  StatusOr<std::string> answer = replica_->service->Defrag(train_.ToJson(), 0, 8, false, /*apply=*/true);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  rapidjson::Document d = Parse(*answer);
  ASSERT_TRUE(d["fits"].GetBool()) << *answer;
  ASSERT_EQ(d["applied"].Size(), 1u) << *answer;
  EXPECT_EQ(std::string(d["applied"][0]["pod"].GetString()), "ml/a2");
  EXPECT_TRUE(d["applied"][0]["evicted"].GetBool());
  EXPECT_TRUE(d["held"].GetBool());
  EXPECT_FALSE(api_.Get("pods", "ml", "a2").has_value());  // evicted (no finalizers: deleted)
  ASSERT_TRUE(Eventually([&] { return replica_->inventory->Snapshot()->FindNode("w0")->allocations.size() == 1; }));
  // w1 holds 2 GPUs for rs-a2's next pod; w0 holds 4 for train.
  const placement::NodeState* w1 = replica_->inventory->Snapshot()->FindNode("w1");
  ASSERT_EQ(w1->holds.size(), 1u);
  EXPECT_EQ(w1->holds[0].pod_uid, placement::ControllerHoldKey("rs-a2"));
  EXPECT_TRUE(Fits(Pending("a2-x7k2p", 2, "rs-a2"), "w1"));  // the replacement: new name and UID
  EXPECT_FALSE(Fits(Pending("other", 2), "w1"));
  EXPECT_FALSE(Fits(Pending("other", 2), "w0"));
  EXPECT_TRUE(Fits(train_, "w0"));
  // The replacement binds there; its hold ends with it.
  PodJson replacement = Pending("a2-x7k2p", 2, "rs-a2");
  api_.Put("pods", replacement.ToJson());
  ASSERT_TRUE(Eventually([&] { return replica_->inventory->FindPod("uid-a2-x7k2p").has_value(); }));
  replica_->service->Filter(ArgsWithNames(replacement.ToJson(), {"w1"}));
  EXPECT_THAT(replica_->service->Bind(testing::BindJson("a2-x7k2p", "ml", "uid-a2-x7k2p", "w1")), HasSubstr(R"("Error":"")"));
  EXPECT_TRUE(replica_->inventory->Snapshot()->FindNode("w1")->holds.empty());
}

TEST_F(LiveDefrag, AnEvictionTheApiServerRefusesStopsThePlanAndDropsItsHolds) {
  api_.FailNext("POST", "/api/v1/namespaces/ml/pods/a2/eviction", 429);
  StatusOr<std::string> answer = replica_->service->Defrag(train_.ToJson(), 0, 8, false, /*apply=*/true);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  rapidjson::Document d = Parse(*answer);
  ASSERT_EQ(d["applied"].Size(), 1u) << *answer;
  EXPECT_FALSE(d["applied"][0]["evicted"].GetBool());
  EXPECT_THAT(std::string(d["applied"][0]["error"].GetString()), HasSubstr("429"));
  EXPECT_FALSE(d["held"].GetBool());
  EXPECT_TRUE(api_.Get("pods", "ml", "a2").has_value());
  EXPECT_TRUE(replica_->inventory->Snapshot()->FindNode("w0")->holds.empty());
  EXPECT_TRUE(replica_->inventory->Snapshot()->FindNode("w1")->holds.empty());
}

TEST_F(LiveDefrag, APodThatNothingRecreatesIsNeverEvicted) {
  api_.Put("pods", Running("a2", "w0", 2).ToJson());  // the same pod, now without a controller
  ASSERT_TRUE(Eventually([&] {
    const placement::NodeState* w0 = replica_->inventory->Snapshot()->FindNode("w0");
    const PodUse* use = w0->uses ? w0->uses->Find("uid-a2") : nullptr;
    return use != nullptr && use->labels && use->labels->controller_uid.empty();
  }));
  rapidjson::Document d = Parse(*replica_->service->Defrag(train_.ToJson(), 0, 8, false, /*apply=*/true));
  ASSERT_EQ(d["applied"].Size(), 1u);
  EXPECT_FALSE(d["applied"][0]["evicted"].GetBool());
  EXPECT_THAT(std::string(d["applied"][0]["error"].GetString()), HasSubstr("has no controller"));
  EXPECT_TRUE(api_.Get("pods", "ml", "a2").has_value());
}

TEST_F(LiveDefrag, TheApiServerHonoursBudgetsOnEviction) {
  // The fake API server's eviction: a budget allowing none answers 429; allowing one, the pod goes
  // and the allowance drops to 0.
  api_.Put("poddisruptionbudgets", testing::BudgetJson("ml", "pdb-b6", {{"app", "b6"}}, 0));
  kubeapi::ApiEvictor evictor(replica_->client.get());
  Status refused = evictor.Evict("ml", "b6", "uid-b6");
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted) << refused.message();
  EXPECT_EQ(evictor.Evict("ml", "a4", "wrong-uid").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(evictor.Evict("ml", "nobody", "u").code(), StatusCode::kNotFound);
  api_.Put("poddisruptionbudgets", testing::BudgetJson("ml", "pdb-b6", {{"app", "b6"}}, 1));
  EXPECT_TRUE(evictor.Evict("ml", "b6", "uid-b6").ok());
  EXPECT_THAT(*api_.Get("poddisruptionbudgets", "ml", "pdb-b6"), HasSubstr(R"("disruptionsAllowed":0)"));
}

// ClaimPod's pod with label app=<name> and, when given, a ReplicaSet controller.
std::string ClaimPodOf(const std::string& name, const std::string& claim, const std::string& node, const std::string& controller) {
  std::string pod = testing::ClaimPod(name, claim, node);
  std::string meta = fmt::format(R"("labels":{{"app":"{}"}},)", name);
  if (!controller.empty()) {
    meta += fmt::format(R"("ownerReferences":[{{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"owner","uid":"{}",)"
                        R"("controller":true,"blockOwnerDeletion":true}}],)", controller);
  }
  return pod.insert(pod.find(R"("resourceVersion":"7")"), meta);
}

// Two nvidia-dra nodes of two GPUs, one held on each (pa, of ReplicaSet rs-pa, on a; pb on b); a
// pod asking two fits once pa's claim moves to b.
class LiveDraDefrag : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::string node : {"a", "b"}) {
      api_.Put("nodes", testing::DraNode(node));
      api_.Put("resourceslices", testing::GpuSlice(node, 2));
    }
    api_.Put("deviceclasses", std::string(testing::kGpuClass));
    api_.Put("resourceclaims", testing::Claim("c-pa", testing::ClaimSpec(1, ""), {"a/gpu-0"}, {"pa"}));
    api_.Put("resourceclaims", testing::Claim("c-pb", testing::ClaimSpec(1, ""), {"b/gpu-0"}, {"pb"}));
    for (const std::string claim : {"big", "c-pa-x7k2p", "c-other"}) {
      api_.Put("resourceclaims", testing::Claim(claim, testing::ClaimSpec(claim == "big" ? 2 : 1, "")));
    }
    api_.Put("pods", ClaimPodOf("pa", "c-pa", "a", "rs-pa"));
    api_.Put("pods", ClaimPodOf("pb", "c-pb", "b", "rs-pb"));
    api_.Put("pods", train_);
    replica_ = std::make_unique<testing::LiveReplica>(api_.url());
    ASSERT_TRUE(replica_->sync->WaitSynced(std::chrono::seconds(10)));
    ASSERT_TRUE(Eventually([&] { return replica_->inventory->Snapshot()->dra().FindClaim("ml", "c-other") != nullptr; }));
  }

  bool Fits(const std::string& pod, const std::string& node) {
    std::string reply = replica_->service->Filter(ArgsWithNames(pod, {node}));
    return reply.find(R"("NodeNames":[")" + node) != std::string::npos;
  }

  testing::FakeApiServer api_;
  std::string train_ = ClaimPodOf("train", "big", "", "");
  std::unique_ptr<testing::LiveReplica> replica_;
};

TEST_F(LiveDraDefrag, TheMovedPodIsEvictedAndItsReplacementGetsTheHeldDevice) {
  StatusOr<std::string> answer = replica_->service->Defrag(train_, 0, 8, false, /*apply=*/true);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  rapidjson::Document d = Parse(*answer);
  ASSERT_TRUE(d["fits"].GetBool()) << *answer;
  ASSERT_EQ(d["applied"].Size(), 1u) << *answer;
  EXPECT_EQ(std::string(d["applied"][0]["pod"].GetString()), "ml/pa");
  EXPECT_TRUE(d["applied"][0]["evicted"].GetBool()) << *answer;
  EXPECT_TRUE(d["held"].GetBool());
  EXPECT_FALSE(api_.Get("pods", "ml", "pa").has_value());
  // The resourceclaim controller deallocates the claim its pod no longer reserves.
  api_.Put("resourceclaims", testing::Claim("c-pa", testing::ClaimSpec(1, "")));
  ASSERT_TRUE(Eventually([&] { return !replica_->inventory->Snapshot()->dra().FindClaim("ml", "c-pa")->allocation.has_value(); }));
  const placement::NodeState* b = replica_->inventory->Snapshot()->FindNode("b");
  ASSERT_EQ(b->holds.size(), 1u);
  EXPECT_EQ(b->holds[0].pod_uid, placement::ControllerHoldKey("rs-pa"));
  EXPECT_THAT(b->holds[0].placement.devices, ::testing::ElementsAre("gpu.nvidia.com/b/gpu-1"));
  std::string replacement = ClaimPodOf("pa-x7k2p", "c-pa-x7k2p", "", "rs-pa");  // new name, UID and claim
  std::string other = ClaimPodOf("other", "c-other", "", "");
  EXPECT_TRUE(Fits(replacement, "b"));
  EXPECT_FALSE(Fits(other, "b"));
  EXPECT_FALSE(Fits(other, "a"));  // a's two GPUs are held for train
  EXPECT_TRUE(Fits(train_, "a"));
  EXPECT_FALSE(Fits(replacement, "a"));
  // kube-scheduler binds the replacement there: its hold ends when the pod is seen bound.
  api_.Put("resourceclaims", testing::Claim("c-pa-x7k2p", testing::ClaimSpec(1, ""), {"b/gpu-1"}, {"pa-x7k2p"}));
  api_.Put("pods", ClaimPodOf("pa-x7k2p", "c-pa-x7k2p", "b", "rs-pa"));
  EXPECT_TRUE(Eventually([&] { return replica_->inventory->Snapshot()->FindNode("b")->holds.empty(); }));
  EXPECT_EQ(replica_->inventory->Snapshot()->FindNode("a")->holds.size(), 1u);  // train's stays
}

}  // namespace
}  // namespace gpusched
