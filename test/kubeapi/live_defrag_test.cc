// An applied defrag plan against the in-process API server: the moved pod is evicted through the
// Eviction API, its replacement (a new pod of the same controller) gets the GPUs held for it
// while any other pod is refused them, the pending pod's room is held for it; an eviction the
// API server refuses (a PodDisruptionBudget) stops the plan and drops its holds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <tuple>

#include "cluster_json.h"
#include "dra_json.h"
#include "fake_apiserver.h"
#include "gpusched/json/json.h"
#include "gpusched/placement/nomination.h"
#include "live_replica.h"

namespace gpusched {
namespace live_defrag_test {

using testing::AppliedPlan;
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
  StatusOr<std::string> answer = AppliedPlan(*replica_->service, train_.ToJson());
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

// The holds annotation of node `name` as the API server stores it ("" when there is none).
std::string HoldsOn(const testing::FakeApiServer& api, const std::string& name) {
  std::optional<std::string> node = api.Get("nodes", "", name);
  if (!node) return "";
  rapidjson::Document d = Parse(*node);
  const rapidjson::Value& meta = d["metadata"];
  if (!meta.HasMember("annotations") || !meta["annotations"].HasMember("gpusched.io/holds")) return "";
  return meta["annotations"]["gpusched.io/holds"].GetString();
}

TEST_F(LiveDefrag, AnotherReplicaKeepsTheHeldGpusUntilTheirPodsBind) {
  testing::LiveReplica other(api_.url());
  ASSERT_TRUE(other.sync->WaitSynced(std::chrono::seconds(10)));
  StatusOr<std::string> answer = AppliedPlan(*replica_->service, train_.ToJson());
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  ASSERT_TRUE(Parse(*answer)["held"].GetBool()) << *answer;
  EXPECT_THAT(HoldsOn(api_, "w1"), HasSubstr(R"("uid-a2":{"for":"controller/rs-a2","pod":"ml/a2")"));
  EXPECT_THAT(HoldsOn(api_, "w0"), HasSubstr(R"("uid-train":{"for":"uid-train","pod":"ml/train")"));
  auto held = [](testing::LiveReplica& r, const char* node) { return r.inventory->Snapshot()->FindNode(node)->holds.size(); };
  ASSERT_TRUE(Eventually([&] { return held(other, "w0") == 1 && held(other, "w1") == 1; }));
  auto fits = [&](const PodJson& pod, const std::string& node) {
    return other.service->Filter(ArgsWithNames(pod.ToJson(), {node})).find(R"("NodeNames":[")" + node) != std::string::npos;
  };
  ASSERT_TRUE(Eventually([&] { return other.inventory->Snapshot()->FindNode("w0")->allocations.size() == 1; }));
  EXPECT_FALSE(fits(Pending("other", 2), "w1"));
  EXPECT_FALSE(fits(Pending("other", 2), "w0"));
  EXPECT_TRUE(fits(train_, "w0"));
  // The replacement binds through the other replica: the hold ends on both.
  PodJson replacement = Pending("a2-x7k2p", 2, "rs-a2");
  api_.Put("pods", replacement.ToJson());
  EXPECT_TRUE(fits(replacement, "w1"));
  EXPECT_THAT(other.service->Bind(testing::BindJson("a2-x7k2p", "ml", "uid-a2-x7k2p", "w1")), HasSubstr(R"("Error":"")"));
  EXPECT_TRUE(Eventually([&] { return held(other, "w1") == 0 && held(*replica_, "w1") == 0; }))
      << held(other, "w1") << " " << held(*replica_, "w1");
  EXPECT_TRUE(fits(train_, "w0"));
  EXPECT_THAT(other.service->Bind(testing::BindJson("train", "ml", "uid-train", "w0")), HasSubstr(R"("Error":"")"));
  EXPECT_TRUE(Eventually([&] { return held(other, "w0") == 0 && held(*replica_, "w0") == 0; }));
}

TEST_F(LiveDefrag, AHoldWrittenAgainstAChangedNodeIsCheckedAgain) {
  api_.FailNext("PATCH", "/api/v1/nodes/w1", 409);  // the node did not change: the hold still fits
  StatusOr<std::string> answer = AppliedPlan(*replica_->service, train_.ToJson());
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  rapidjson::Document d = Parse(*answer);
  ASSERT_EQ(d["applied"].Size(), 1u) << *answer;
  EXPECT_TRUE(d["applied"][0]["evicted"].GetBool()) << *answer;
  EXPECT_THAT(HoldsOn(api_, "w1"), HasSubstr("controller/rs-a2"));
}

TEST_F(LiveDefrag, AHoldThatNoLongerFitsTheChangedNodeStopsThePlan) {
  // A peer books w1's last two GPUs; this replica has not seen it (its watches are stopped).
  replica_->sync->Stop();
  int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  testing::NodeJson w1 = testing::NvidiaNode("w1", 8);
  w1.extra_annotations["gpusched.io/bookings"] = fmt::format(R"({{"uid-peer":{{"pod":"ml/peer","at":{},"mode":"nvidia","gpus":2}}}})", now_ms);
  api_.Put("nodes", w1.ToJson());
  StatusOr<std::string> answer = AppliedPlan(*replica_->service, train_.ToJson());
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  rapidjson::Document d = Parse(*answer);
  ASSERT_EQ(d["applied"].Size(), 1u) << *answer;
  EXPECT_FALSE(d["applied"][0]["evicted"].GetBool());
  // Checked again on the node as it is now, not written and retried against the old one.
  std::string error = d["applied"][0]["error"].GetString();
  EXPECT_THAT(error, HasSubstr("hold on w1 for ml/a2: "));
  EXPECT_THAT(error, ::testing::Not(HasSubstr("not written")));
  EXPECT_TRUE(api_.Get("pods", "ml", "a2").has_value());
  EXPECT_EQ(HoldsOn(api_, "w0"), "{}");
  EXPECT_EQ(HoldsOn(api_, "w1"), "");
}

TEST_F(LiveDefrag, RoomThatCannotBeHeldIsNotMade) {
  api_.FailNext("PATCH", "/api/v1/nodes/w0", 403);  // refused (the admission policy, say)
  StatusOr<std::string> answer = AppliedPlan(*replica_->service, train_.ToJson());
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  rapidjson::Document d = Parse(*answer);
  ASSERT_EQ(d["applied"].Size(), 2u) << *answer;
  EXPECT_EQ(std::string(d["applied"][0]["pod"].GetString()), "ml/train");
  EXPECT_THAT(std::string(d["applied"][0]["error"].GetString()), HasSubstr("hold on w0 for ml/train not written"));
  EXPECT_EQ(std::string(d["applied"][1]["pod"].GetString()), "ml/a2");  // every move listed, none made
  EXPECT_EQ(std::string(d["applied"][1]["error"].GetString()), "not evicted: the plan stopped");
  EXPECT_FALSE(d["held"].GetBool());
  EXPECT_TRUE(api_.Get("pods", "ml", "a2").has_value());
  EXPECT_TRUE(replica_->inventory->Snapshot()->FindNode("w0")->holds.empty());
}

TEST_F(LiveDefrag, AHoldWhoseWriteWasLostIsTakenOutAgain) {
  // The API server stores the write but the answer is lost (5xx): the plan stops, and the hold
  // is withdrawn from the node so that no replica keeps it.
  api_.Inject(testing::Fault{.method = "PATCH", .path_prefix = "/api/v1/nodes/w1", .status = 503, .apply_first = true});
  StatusOr<std::string> answer = AppliedPlan(*replica_->service, train_.ToJson());
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  rapidjson::Document d = Parse(*answer);
  EXPECT_FALSE(d["applied"][0]["evicted"].GetBool()) << *answer;
  EXPECT_EQ(HoldsOn(api_, "w1"), "{}");
  EXPECT_EQ(HoldsOn(api_, "w0"), "{}");
}

TEST_F(LiveDefrag, AHoldThatCannotBeWrittenStopsThePlanBeforeItsEviction) {
  api_.FailNext("PATCH", "/api/v1/nodes/w1", 409, /*count=*/3);
  StatusOr<std::string> answer = AppliedPlan(*replica_->service, train_.ToJson());
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  rapidjson::Document d = Parse(*answer);
  ASSERT_EQ(d["applied"].Size(), 1u) << *answer;
  EXPECT_FALSE(d["applied"][0]["evicted"].GetBool());
  EXPECT_THAT(std::string(d["applied"][0]["error"].GetString()), HasSubstr("hold on w1 for ml/a2 not written"));
  EXPECT_TRUE(api_.Get("pods", "ml", "a2").has_value());
  EXPECT_EQ(HoldsOn(api_, "w0"), "{}");  // the pending pod's hold was withdrawn
  EXPECT_TRUE(replica_->inventory->Snapshot()->FindNode("w0")->holds.empty());
  EXPECT_TRUE(replica_->inventory->Snapshot()->FindNode("w1")->holds.empty());
}

// The dry run of every move's eviction comes before any hold or eviction: refused (a budget), the
// plan does nothing.
TEST_F(LiveDefrag, AnEvictionRefusedInTheDryRunStopsThePlanBeforeAnything) {
  api_.FailNext("POST", "/api/v1/namespaces/ml/pods/a2/eviction", 429);
  StatusOr<std::string> answer = AppliedPlan(*replica_->service, train_.ToJson());
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  rapidjson::Document d = Parse(*answer);
  ASSERT_EQ(d["applied"].Size(), 1u) << *answer;
  EXPECT_FALSE(d["applied"][0]["evicted"].GetBool());
  EXPECT_THAT(std::string(d["applied"][0]["error"].GetString()), HasSubstr("429"));
  EXPECT_THAT(std::string(d["applied"][0]["error"].GetString()), HasSubstr("dry run: nothing was evicted"));
  EXPECT_FALSE(d["held"].GetBool());
  EXPECT_TRUE(api_.Get("pods", "ml", "a2").has_value());
  EXPECT_TRUE(replica_->inventory->Snapshot()->FindNode("w0")->holds.empty());
  EXPECT_TRUE(replica_->inventory->Snapshot()->FindNode("w1")->holds.empty());
  EXPECT_EQ(HoldsOn(api_, "w0"), "");  // nothing was ever written
  EXPECT_EQ(HoldsOn(api_, "w1"), "");
  for (const testing::RecordedRequest& r : api_.Requests()) {
    if (r.target.find("/eviction") != std::string::npos) {
      EXPECT_THAT(r.target, HasSubstr("dryRun=All"));
    }
  }
}

// A real eviction refused after the dry run passed (a budget used up meanwhile) stops the plan:
// the moves made stay made, the pending pod keeps its hold, the others' holds end.
TEST_F(LiveDefrag, AnEvictionRefusedAfterItsDryRunKeepsThePendingPodsHold) {
  api_.Inject(testing::Fault{.method = "POST", .path_prefix = "/api/v1/namespaces/ml/pods/a2/eviction", .status = 429, .skip = 1});
  StatusOr<std::string> answer = AppliedPlan(*replica_->service, train_.ToJson());
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  rapidjson::Document d = Parse(*answer);
  ASSERT_EQ(d["applied"].Size(), 1u) << *answer;
  EXPECT_FALSE(d["applied"][0]["evicted"].GetBool());
  EXPECT_THAT(std::string(d["applied"][0]["error"].GetString()), HasSubstr("429"));
  EXPECT_TRUE(d["held"].GetBool());
  EXPECT_TRUE(api_.Get("pods", "ml", "a2").has_value());
  EXPECT_EQ(replica_->inventory->Snapshot()->FindNode("w0")->holds.size(), 1u);
  EXPECT_TRUE(replica_->inventory->Snapshot()->FindNode("w1")->holds.empty());
  EXPECT_THAT(HoldsOn(api_, "w0"), HasSubstr("uid-train"));
  EXPECT_EQ(HoldsOn(api_, "w1"), "{}");
}

// The issue's case: a pod no controller recreates was planned, then apply evicted the earlier
// moves and refused it. Now the planner never moves it: here a2 stays, and no plan is found.
TEST_F(LiveDefrag, APodThatNothingRecreatesIsNeverPlannedNorEvicted) {
  api_.Put("pods", Running("a2", "w0", 2).ToJson());  // the same pod, now without a controller
  ASSERT_TRUE(Eventually([&] {
    const placement::NodeState* w0 = replica_->inventory->Snapshot()->FindNode("w0");
    const PodUse* use = w0->uses ? w0->uses->Find("uid-a2") : nullptr;
    return use != nullptr && use->labels && use->labels->controller_uid.empty();
  }));
  rapidjson::Document d = Parse(*AppliedPlan(*replica_->service, train_.ToJson()));
  EXPECT_FALSE(d["fits"].GetBool());
  EXPECT_THAT(std::string(d["reason"].GetString()), HasSubstr("1 pod (no controller would recreate it)"));
  EXPECT_EQ(d["applied"].Size(), 0u);
  EXPECT_TRUE(api_.Get("pods", "ml", "a2").has_value());
  EXPECT_TRUE(api_.Get("pods", "ml", "a4").has_value());
}

// The pending pod reads a PersistentVolumeClaim: gpusched cannot judge the volume filters, so
// kube-scheduler may refuse it on w0 after a2 is evicted. Applying stops before anything is held
// or evicted and says why; the caller's consent (acceptUnjudged) applies it. Before, apply
// evicted a2 whatever notJudged said.
TEST_F(LiveDefrag, APlanForAPodWithUnjudgedConstraintsIsAppliedOnlyWithConsent) {
  PodJson train = train_;
  train.spec_extra = R"("volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"data"}}])";
  rapidjson::Document d = Parse(*AppliedPlan(*replica_->service, train.ToJson()));
  ASSERT_TRUE(d["fits"].GetBool());
  EXPECT_EQ(std::string(d["notJudged"].GetString()), "volumes");
  ASSERT_EQ(d["applied"].Size(), 2u);
  EXPECT_EQ(std::string(d["applied"][0]["pod"].GetString()), "ml/train");
  EXPECT_THAT(std::string(d["applied"][0]["error"].GetString()),
              HasSubstr("gpusched cannot judge its volumes: kube-scheduler may refuse it on w0"));
  EXPECT_FALSE(d["applied"][1]["evicted"].GetBool());
  EXPECT_FALSE(d["held"].GetBool());
  EXPECT_TRUE(api_.Get("pods", "ml", "a2").has_value());
  EXPECT_EQ(HoldsOn(api_, "w0"), "");
  EXPECT_TRUE(replica_->inventory->Snapshot()->FindNode("w1")->holds.empty());

  d = Parse(*AppliedPlan(*replica_->service, train.ToJson(), extender::UnjudgedPolicy::kAccept));
  ASSERT_EQ(d["applied"].Size(), 1u);
  EXPECT_TRUE(d["applied"][0]["evicted"].GetBool());
  EXPECT_FALSE(api_.Get("pods", "ml", "a2").has_value());
}

// The Eviction API refuses a pod two budgets cover (500): the planner never moves one, counting
// budgets as policy/v1 does (an empty selector covers every pod of its namespace).
TEST_F(LiveDefrag, APodTwoBudgetsCoverIsNeverPlanned) {
  api_.Put("poddisruptionbudgets", testing::BudgetJson("ml", "pdb-a2", {{"app", "a2"}}, 1));
  api_.Put("poddisruptionbudgets", testing::BudgetJson("ml", "pdb-all", {}, 5));
  ASSERT_TRUE(Eventually([&] {
    auto budgets = replica_->inventory->Snapshot()->budgets();
    return budgets != nullptr && budgets->size() == 2;
  }));
  rapidjson::Document d = Parse(*AppliedPlan(*replica_->service, train_.ToJson()));
  EXPECT_FALSE(d["fits"].GetBool());
  EXPECT_THAT(std::string(d["reason"].GetString()), HasSubstr("2 PodDisruptionBudgets cover it"));
  EXPECT_TRUE(api_.Get("pods", "ml", "a2").has_value());
  // The fake API server answers as upstream's eviction registry does.
  kubeapi::ApiEvictor evictor(replica_->client.get());
  Status refused = evictor.Evict("ml", "a2", "uid-a2", /*dry_run=*/true);
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition) << refused.message();
  EXPECT_THAT(refused.message(), HasSubstr("more than one PodDisruptionBudget"));
}

// docs/defrag.md's example body has no metadata.uid: the pod is found by namespace and name, and its
// room is held for it. Before, nothing was held and the plan ran silently.
TEST_F(LiveDefrag, APodBodyWithoutAUidNamesThePodGpuschedKnows) {
  replica_->service->Filter(ArgsWithNames(train_.ToJson(), {"w0"}));  // kube-scheduler tried it: gpusched knows it
  std::string body = train_.ToJson();
  body.replace(body.find(R"("uid":"uid-train",)"), std::string(R"("uid":"uid-train",)").size(), "");
  rapidjson::Document d = Parse(*AppliedPlan(*replica_->service, body));
  ASSERT_TRUE(d["fits"].GetBool());
  EXPECT_TRUE(d["held"].GetBool());
  EXPECT_THAT(HoldsOn(api_, "w0"), HasSubstr(R"("uid-train":{"for":"uid-train")"));
  // A pod gpusched does not know cannot be held for: 400 naming the field.
  std::string stranger = PodJson{.name = "stranger", .namespace_name = "ml", .phase = "Pending", .containers = {WholeGpus("s", 4)}}.ToJson();
  stranger.replace(stranger.find(R"("uid":"",)"), std::string(R"("uid":"",)").size(), "");
  StatusOr<std::string> refused = AppliedPlan(*replica_->service, stranger);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(refused.status().message(), HasSubstr("Pod.metadata.uid: missing"));
}

TEST_F(LiveDefrag, TheApiServerHonoursBudgetsOnEviction) {
  // The fake API server's eviction: a budget allowing none answers 429; allowing one, the pod goes
  // and the allowance drops to 0.
  api_.Put("poddisruptionbudgets", testing::BudgetJson("ml", "pdb-b6", {{"app", "b6"}}, 0));
  kubeapi::ApiEvictor evictor(replica_->client.get());
  Status refused = evictor.Evict("ml", "b6", "uid-b6", false);
  EXPECT_EQ(refused.code(), StatusCode::kResourceExhausted) << refused.message();
  EXPECT_EQ(evictor.Evict("ml", "a4", "wrong-uid", false).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(evictor.Evict("ml", "nobody", "u", false).code(), StatusCode::kNotFound);
  api_.Put("poddisruptionbudgets", testing::BudgetJson("ml", "pdb-b6", {{"app", "b6"}}, 1));
  EXPECT_TRUE(evictor.Evict("ml", "b6", "uid-b6", /*dry_run=*/true).ok());  // checked, nothing changed
  EXPECT_THAT(*api_.Get("poddisruptionbudgets", "ml", "pdb-b6"), HasSubstr(R"("disruptionsAllowed":1)"));
  EXPECT_TRUE(api_.Get("pods", "ml", "b6").has_value());
  EXPECT_TRUE(evictor.Evict("ml", "b6", "uid-b6", false).ok());
  EXPECT_THAT(*api_.Get("poddisruptionbudgets", "ml", "pdb-b6"), HasSubstr(R"("disruptionsAllowed":0)"));
}

// a: two GPUs, pa (of ReplicaSet rs-pa) on gpu-0. b: three GPUs, pb on gpu-0 and pa's sibling
// pa-sib (also rs-pa) on gpu-2. Every claim was generated for its pod from a template. A pod
// asking two fits once pa moves to b/gpu-1.
class LiveDraDefrag : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Put("nodes", testing::DraNode("a"));
    api_.Put("nodes", testing::DraNode("b"));
    api_.Put("resourceslices", testing::GpuSlice("a", 2));
    api_.Put("resourceslices", testing::GpuSlice("b", 3));
    api_.Put("deviceclasses", std::string(testing::kGpuClass));
    for (const auto& [pod, node, device, controller] :
         std::vector<std::tuple<std::string, std::string, std::string, std::string>>{
             {"pa", "a", "a/gpu-0", "rs-pa"}, {"pb", "b", "b/gpu-0", "rs-pb"}, {"pa-sib", "b", "b/gpu-2", "rs-pa"}}) {
      api_.Put("resourceclaims", testing::GeneratedClaim("c-" + pod, pod, testing::ClaimSpec(1, ""), {device}));
      api_.Put("pods", testing::TemplateClaimPod(pod, "c-" + pod, node, controller));
    }
    api_.Put("resourceclaims", testing::GeneratedClaim("c-train", "train", testing::ClaimSpec(2, "")));
    api_.Put("resourceclaims", testing::GeneratedClaim("c-pa-x7k2p", "pa-x7k2p", testing::ClaimSpec(1, "")));
    api_.Put("resourceclaims", testing::GeneratedClaim("c-other", "other", testing::ClaimSpec(1, "")));
    api_.Put("pods", train_);
    replica_ = std::make_unique<testing::LiveReplica>(api_.url());
    ASSERT_TRUE(replica_->sync->WaitSynced(std::chrono::seconds(10)));
    ASSERT_TRUE(Eventually([&] { return replica_->inventory->Snapshot()->dra().FindClaim("ml", "c-other") != nullptr; }));
  }

  bool Fits(const std::string& pod, const std::string& node) {
    std::string reply = replica_->service->Filter(ArgsWithNames(pod, {node}));
    return reply.find(R"("NodeNames":[")" + node) != std::string::npos;
  }
  const placement::NodeState* Node(const std::string& name) { return replica_->inventory->Snapshot()->FindNode(name); }

  testing::FakeApiServer api_;
  std::string train_ = testing::TemplateClaimPod("train", "c-train");
  std::unique_ptr<testing::LiveReplica> replica_;
};

TEST_F(LiveDraDefrag, TheMovedPodIsEvictedAndItsReplacementGetsTheHeldDevice) {
  StatusOr<std::string> answer = AppliedPlan(*replica_->service, train_);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  rapidjson::Document d = Parse(*answer);
  ASSERT_TRUE(d["fits"].GetBool()) << *answer;
  ASSERT_EQ(d["applied"].Size(), 1u) << *answer;
  EXPECT_EQ(std::string(d["applied"][0]["pod"].GetString()), "ml/pa");
  EXPECT_TRUE(d["applied"][0]["evicted"].GetBool()) << *answer;
  EXPECT_TRUE(d["held"].GetBool());
  EXPECT_FALSE(api_.Get("pods", "ml", "pa").has_value());
  // The resourceclaim controller deletes the claim generated for the evicted pod. Every claim
  // change makes the inventory see the bound claim pods again, pa-sib of rs-pa on b among them:
  // that is not rs-pa's next pod, and the hold stays.
  api_.Remove("resourceclaims", "ml", "c-pa");
  ASSERT_TRUE(Eventually([&] { return replica_->inventory->Snapshot()->dra().FindClaim("ml", "c-pa") == nullptr; }));
  ASSERT_EQ(Node("b")->holds.size(), 1u);
  EXPECT_EQ(Node("b")->holds[0].pod_uid, placement::ControllerHoldKey("rs-pa"));
  EXPECT_THAT(Node("b")->holds[0].placement.devices, ::testing::ElementsAre("gpu.nvidia.com/b/gpu-1"));
  std::string replacement = testing::TemplateClaimPod("pa-x7k2p", "c-pa-x7k2p", "", "rs-pa");  // new name, UID and claim
  std::string other = testing::TemplateClaimPod("other", "c-other");
  EXPECT_TRUE(Fits(replacement, "b"));
  EXPECT_FALSE(Fits(other, "b"));
  EXPECT_FALSE(Fits(other, "a"));  // a's two GPUs are held for train
  EXPECT_TRUE(Fits(train_, "a"));
  EXPECT_FALSE(Fits(replacement, "a"));
  // Another replica keeps the devices held too (the node annotation names them).
  EXPECT_THAT(HoldsOn(api_, "b"), HasSubstr(R"("mode":"nvidia-dra","devices":["gpu.nvidia.com/b/gpu-1"])"));
  testing::LiveReplica peer(api_.url());
  ASSERT_TRUE(peer.sync->WaitSynced(std::chrono::seconds(10)));
  ASSERT_TRUE(Eventually([&] { return peer.inventory->Snapshot()->FindNode("b")->holds.size() == 1; }));
  EXPECT_THAT(peer.inventory->Snapshot()->FindNode("b")->holds[0].placement.devices, ::testing::ElementsAre("gpu.nvidia.com/b/gpu-1"));
  EXPECT_EQ(peer.service->Filter(ArgsWithNames(other, {"b"})).find(R"("NodeNames":["b")"), std::string::npos);
  // kube-scheduler binds the replacement there: its hold ends when the pod is seen bound.
  api_.Put("resourceclaims", testing::GeneratedClaim("c-pa-x7k2p", "pa-x7k2p", testing::ClaimSpec(1, ""), {"b/gpu-1"}));
  api_.Put("pods", testing::TemplateClaimPod("pa-x7k2p", "c-pa-x7k2p", "b", "rs-pa"));
  EXPECT_TRUE(Eventually([&] { return Node("b")->holds.empty() && peer.inventory->Snapshot()->FindNode("b")->holds.empty(); }));
  ASSERT_EQ(Node("a")->holds.size(), 1u);  // train's stays
  // train is bound somewhere else after all: its hold on a ends too.
  api_.Put("pods", testing::TemplateClaimPod("train", "c-train", "b"));
  EXPECT_TRUE(Eventually([&] { return Node("a")->holds.empty(); }));
}

TEST_F(LiveDraDefrag, AHoldOnDevicesInUseOrHeldIsRefused) {
  Allocation about{.pod_uid = "x", .pod_namespace = "ml", .pod_name = "x"};
  Placement b0{.kind = RequestKind::kDra, .devices = {"gpu.nvidia.com/b/gpu-0"}};
  Status used = replica_->inventory->HoldFor("x", about, "b", b0, std::chrono::seconds(60)).status();
  EXPECT_EQ(used.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(used.message(), HasSubstr("device gpu.nvidia.com/b/gpu-0 is allocated to claim ml/c-pb"));
  // Once pb leaves (the plan evicts it), its claim's device can be held.
  ASSERT_TRUE(replica_->inventory->HoldFor("x", about, "b", b0, std::chrono::seconds(60), {"pb"}).ok());
  Allocation about_y{.pod_uid = "y", .pod_namespace = "ml", .pod_name = "y"};
  Status held = replica_->inventory->HoldFor("y", about_y, "b", b0, std::chrono::seconds(60), {"pb"}).status();
  EXPECT_THAT(held.message(), HasSubstr("device gpu.nvidia.com/b/gpu-0 is held for ml/x"));
  // A hold about the same pod gives way to its new one.
  EXPECT_TRUE(replica_->inventory->HoldFor("x", about, "b", b0, std::chrono::seconds(60), {"pb"}).ok());
}

}  // namespace live_defrag_test
}  // namespace gpusched
