// A gang's plan against the in-process API server: one replica plans and holds it, the slots are
// written to the nodes (gpusched.io/holds), so another replica, and a replica started afterwards
// (a restart), steer every member into its slot and refuse the slots to other pods; members bind
// through either replica into their slots, and each slot ends as its member binds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "cluster_json.h"
#include "fake_apiserver.h"
#include "gpusched/extender/gang_holds.h"
#include "gpusched/model/names.h"
#include "live_replica.h"

namespace gpusched {
namespace live_gang_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ArgsWithNames;
using testing::BindJson;
using testing::Eventually;
using testing::KeptNodes;
using testing::Mgpu;
using testing::PodJson;

PodJson Member(const std::string& name) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .phase = "Pending",
                 .containers = {Mgpu("s", 60, 4096)}, .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"};
}

class LiveGang : public ::testing::Test {
 protected:
  // m0: GPU 0 free, GPU 1 70% taken; m1: one free GPU. The gang of two 60% members fits only as
  // one on each node.
  void SetUp() override {
    api_.Put("nodes", testing::MgpuNode("m0", 2, 24576).ToJson());
    api_.Put("nodes", testing::MgpuNode("m1", 1, 24576).ToJson());
    api_.Put("pods", PodJson{.name = "busy", .namespace_name = "ml", .uid = "uid-busy", .node = "m0", .phase = "Running",
                             .containers = {Mgpu("s", 70, 4096)},
                             .annotations = {{"vke.volcengine.com/gpu-index-container-s", "1"}}}
                         .ToJson());
    api_.Put("podgroups", R"({"metadata":{"name":"train","namespace":"ml"},"spec":{"schedulingPolicy":{"gang":{"minCount":2}}}})");
    for (const char* name : {"w0", "w1"}) api_.Put("pods", Member(name).ToJson());
    a_ = Start();
  }

  // A replica synced with the cluster, its `pending` members of ml/train seen.
  std::unique_ptr<testing::LiveReplica> Start(size_t pending = 2) {
    auto r = std::make_unique<testing::LiveReplica>(api_.url());
    EXPECT_TRUE(r->sync->WaitSynced(std::chrono::seconds(10)));
    EXPECT_TRUE(Eventually([&] { return r->inventory->Snapshot()->MembersOf("PodGroup/ml/train").pending.size() == pending; }));
    return r;
  }

  static std::vector<std::string> Kept(const testing::LiveReplica& r, const PodJson& pod) {
    return KeptNodes(r.service->Filter(ArgsWithNames(pod.ToJson(), {"m0", "m1"})));
  }

  // The node each member's slot is on as `r` sees it.
  static std::string Slot(const testing::LiveReplica& r, const std::string& name) {
    Pod pod = testing::DecodedPod(Member(name).ToJson());
    return extender::StandingOf(pod, *r.inventory->Snapshot(), true).node;
  }

  testing::FakeApiServer api_{testing::FakeApiServerOptions{.pod_group_version = "v1beta1"}};
  std::unique_ptr<testing::LiveReplica> a_;
};

TEST_F(LiveGang, ThePlanOneReplicaHoldsIsKeptByAnotherAndAfterARestart) {
  ASSERT_EQ(a_->service->SweepGangs(), 0u);  // no filter served yet: maybe a standby, it plans nothing
  ASSERT_THAT(Kept(*a_, Member("w0")), ::testing::SizeIs(1));  // the first member's filter plans the gang
  std::string w0 = Slot(*a_, "w0"), w1 = Slot(*a_, "w1");
  ASSERT_FALSE(w0.empty());
  ASSERT_FALSE(w1.empty());
  EXPECT_NE(w0, w1);
  // Written to the nodes: the annotation names each member's slot.
  std::optional<std::string> node = api_.Get("nodes", "", w0);
  ASSERT_TRUE(node.has_value());
  EXPECT_THAT(*node, HasSubstr(std::string(names::kHoldsAnnotation)));
  EXPECT_THAT(*node, HasSubstr("uid-w0"));

  auto b = Start();  // another replica, or this one restarted: it learns the plan from the nodes
  ASSERT_TRUE(Eventually([&] { return Slot(*b, "w0") == w0 && Slot(*b, "w1") == w1; }));
  EXPECT_THAT(Kept(*b, Member("w0")), ElementsAre(w0));
  EXPECT_THAT(Kept(*b, Member("w1")), ElementsAre(w1));
  PodJson stranger{.name = "s", .namespace_name = "ml", .uid = "uid-s", .phase = "Pending", .containers = {Mgpu("s", 60, 4096)}};
  EXPECT_THAT(Kept(*b, stranger), IsEmpty());

  // w0 binds through b, w1 through a (after its filter there, as kube-scheduler calls them):
  // both into their slots, neither refused.
  EXPECT_THAT(Kept(*a_, Member("w1")), ElementsAre(w1));
  EXPECT_EQ(b->service->Bind(BindJson("w0", "ml", "uid-w0", w0)), R"({"Error":""})");
  EXPECT_EQ(a_->service->Bind(BindJson("w1", "ml", "uid-w1", w1)), R"({"Error":""})");
  ASSERT_TRUE(Eventually([&] { return a_->inventory->Snapshot()->MembersOf("PodGroup/ml/train").bound == 2; }));
  EXPECT_TRUE(Eventually([&] { return Slot(*a_, "w0").empty() && Slot(*b, "w1").empty(); }));
}

TEST_F(LiveGang, ADeletedMemberReleasesTheGangsSlotsOnTheNodes) {
  ASSERT_THAT(Kept(*a_, Member("w0")), ::testing::SizeIs(1));
  ASSERT_FALSE(Slot(*a_, "w0").empty());
  ASSERT_TRUE(api_.Remove("pods", "ml", "w1"));
  ASSERT_TRUE(Eventually([&] { return a_->inventory->Snapshot()->MembersOf("PodGroup/ml/train").pending.size() == 1; }));
  a_->service->SweepGangs();  // w1 is neither pending nor bound: gone once a second sweep agrees
  a_->service->SweepGangs();
  EXPECT_EQ(Slot(*a_, "w0"), "");
  auto b = Start(1);
  EXPECT_EQ(Slot(*b, "w0"), "");  // withdrawn from the nodes too
}

// gang.nominate: the sweep writes each member's slot as its status.nominatedNodeName; the
// nomination, once watched, holds no GPUs beside the slot (the slot holds them), and the member
// tried on its nominated node alone (kube-scheduler's first try) is kept there.
TEST_F(LiveGang, WithNominateEachMemberIsNominatedToItsSlotAndHeldOnce) {
  a_.reset();
  auto r = std::make_unique<testing::LiveReplica>(api_.url(), extender::ServiceOptions{.gang_nominate = true});
  ASSERT_TRUE(r->sync->WaitSynced(std::chrono::seconds(10)));
  ASSERT_TRUE(Eventually([&] { return r->inventory->Snapshot()->MembersOf("PodGroup/ml/train").pending.size() == 2; }));
  ASSERT_THAT(Kept(*r, Member("w0")), ::testing::SizeIs(1));  // plans the gang; the replica is the active one
  std::string w0 = Slot(*r, "w0");
  ASSERT_FALSE(w0.empty());
  r->service->SweepGangs();
  std::optional<std::string> pod = api_.Get("pods", "ml", "w0");
  ASSERT_TRUE(pod.has_value());
  EXPECT_THAT(*pod, HasSubstr(fmt::format(R"("nominatedNodeName":"{}")", w0)));
  ASSERT_TRUE(Eventually([&] {
    for (const auto& p : r->inventory->Snapshot()->MembersOf("PodGroup/ml/train").pending) {
      if (p->uid == "uid-w0") return p->nominated_node == w0;
    }
    return false;
  }));
  // w0's slot leaves 40% of its GPU; a nomination holding 60% more there would leave none.
  PodJson small{.name = "small", .namespace_name = "ml", .uid = "uid-small", .phase = "Pending", .containers = {Mgpu("s", 35, 2048)}};
  EXPECT_THAT(KeptNodes(r->service->Filter(ArgsWithNames(small.ToJson(), {w0}))), ElementsAre(w0));
  PodJson tried = Member("w0");
  tried.nominated_node = w0;
  EXPECT_THAT(KeptNodes(r->service->Filter(ArgsWithNames(tried.ToJson(), {w0}))), ElementsAre(w0));
  auto status_writes = [&] {
    std::vector<testing::RecordedRequest> all = api_.Requests();
    return std::count_if(all.begin(), all.end(), [](const testing::RecordedRequest& q) {
      return q.method == "PATCH" && q.target.find("/status") != std::string::npos;
    });
  };
  auto writes = status_writes();
  EXPECT_GE(writes, 1);
  r->service->SweepGangs();  // written and watched: not written again
  EXPECT_EQ(status_writes(), writes);
}

}  // namespace live_gang_test
}  // namespace gpusched
