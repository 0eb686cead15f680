// Gangs held: a gang's members planned together and held, each member's filter steered into its
// own slot, a gang that does not fit whole refused on every node holding nothing, other pods
// refused the slots' GPUs, slots released when a member is deleted; and with gangs off, the
// partial gang an extender judging member by member makes (issue 33's case).
#include "gpusched/extender/gang_holds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "fake_clock.h"
#include "gpusched/extender/service.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace gang_holds_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::ArgsWithNames;
using testing::BindJson;
using testing::KeptNodes;
using testing::ListJson;
using testing::Mgpu;
using testing::MgpuNode;
using testing::PodJson;

std::string Group(int min_count) {
  return fmt::format(R"({{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{{"name":"train","namespace":"ml"}},)"
                     R"("spec":{{"schedulingPolicy":{{"gang":{{"minCount":{}}}}}}}}})",
                     min_count);
}

// A pending member of ml/train asking 60% of one GPU, as the API server writes it (1.37).
PodJson Member(const std::string& name) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .containers = {Mgpu("s", 60, 4096)},
                 .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"};
}

// m0: GPU 0 all free, GPU 1 70% taken: kube-scheduler's node totals (130%) take both 60% members,
// GPU by GPU only one fits. With `m1`, a one-GPU node where the other fits.
std::string Cluster(bool m1, int min_count = 2, int members = 2) {
  std::vector<std::string> objects = {
      MgpuNode("m0", 2, 24576).ToJson(),
      PodJson{.name = "busy", .namespace_name = "ml", .uid = "uid-busy", .node = "m0", .phase = "Running",
              .containers = {Mgpu("s", 70, 4096)}, .annotations = {{"vke.volcengine.com/gpu-index-container-s", "1"}}}
          .ToJson(),
      Group(min_count)};
  for (int i = 0; i < members; ++i) objects.push_back(Member("w" + std::to_string(i)).ToJson());
  if (m1) objects.push_back(MgpuNode("m1", 1, 24576).ToJson());
  return ListJson(objects);
}

// The reason of `node` in a filter reply's map `map` (FailedNodes by default), or "".
std::string FailedReason(const std::string& reply, const std::string& node, const char* map = "FailedNodes") {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(reply, &d).ok()) << reply;
  if (!d[map].IsObject() || !d[map].HasMember(node.c_str())) return "";
  return d[map][node.c_str()].GetString();
}

class GangHoldsTest : public ::testing::Test {
 protected:
  void Load(const std::string& list, ServiceOptions options = {}) {
    ClusterObjects objects;
    ASSERT_TRUE(kubejson::AppendClusterJson(list, &objects).ok());
    inventory_.ReplaceCluster(std::move(objects));
    service_ = std::make_unique<Service>(&inventory_, std::move(options));
  }
  std::string Filter(const PodJson& pod, const std::vector<std::string>& nodes) {
    return service_->Filter(ArgsWithNames(pod.ToJson(), nodes));
  }
  std::string Bind(const PodJson& pod, const std::string& node) {
    return service_->Bind(BindJson(pod.name, pod.namespace_name, pod.uid, node));
  }
  // The node of the slot held for `uid`, or "".
  std::string SlotOf(const std::string& uid) {
    Pod pod = testing::DecodedPod(Member(uid.substr(4)).ToJson());
    return StandingOf(pod, *inventory_.Snapshot(), true).node;
  }

  inventory::Inventory inventory_;
  std::unique_ptr<Service> service_;
};

TEST_F(GangHoldsTest, EachMembersFilterKeepsOnlyItsOwnSlotAndEveryBindSucceeds) {
  Load(Cluster(/*m1=*/true));
  std::vector<std::string> w0 = KeptNodes(Filter(Member("w0"), {"m0", "m1"}));
  std::vector<std::string> w1 = KeptNodes(Filter(Member("w1"), {"m0", "m1"}));
  ASSERT_EQ(w0.size(), 1u);
  ASSERT_EQ(w1.size(), 1u);
  EXPECT_NE(w0[0], w1[0]);
  EXPECT_EQ(w0[0], SlotOf("uid-w0"));
  std::string other = w0[0] == "m0" ? "m1" : "m0";
  EXPECT_EQ(FailedReason(Filter(Member("w0"), {"m0", "m1"}), other),
            "gang ml/train: this member's slot in the gang's plan is node " + w0[0]);
  EXPECT_EQ(Bind(Member("w0"), w0[0]), R"({"Error":""})");
  EXPECT_EQ(Bind(Member("w1"), w1[0]), R"({"Error":""})");
  EXPECT_EQ(SlotOf("uid-w0"), "");  // each slot ends as its member binds into it
  EXPECT_EQ(SlotOf("uid-w1"), "");
}

// Room made for a member by defrag (its victims terminating) is kept while they leave: its filter
// fails every node as unresolvable, and the slot stays, for half of gang.holdSeconds at most.
TEST_F(GangHoldsTest, ASlotWhosePodsAreStillLeavingIsKeptAndItsMemberWaits) {
  testing::FakeClock clock;  // times the wait (the inventory's own clock times the holds)
  Load(Cluster(/*m1=*/true));
  service_ = std::make_unique<Service>(&inventory_, ServiceOptions{}, ServiceCollaborators{.clock = &clock});
  ASSERT_EQ(KeptNodes(Filter(Member("w0"), {"m0", "m1"})).size(), 1u);  // plans and holds the gang
  std::string slot = SlotOf("uid-w0");
  ASSERT_NE(slot, "");
  PodJson leaving{.name = "leaving", .namespace_name = "ml", .uid = "uid-leaving", .node = slot, .phase = "Running",
                  .containers = {Mgpu("s", 50, 4096)}, .annotations = {{"vke.volcengine.com/gpu-index-container-s", "0"}},
                  .deletion_timestamp = "2026-12-04T16:00:00Z"};
  inventory_.Apply(ClusterDelta{.upsert_pods = {testing::DecodedPod(leaving.ToJson())}});
  std::string waiting = Filter(Member("w0"), {"m0", "m1"});
  EXPECT_THAT(KeptNodes(waiting), IsEmpty());
  // Unresolvable: a preemption elsewhere would evict pods for a member that only waits.
  EXPECT_THAT(FailedReason(waiting, slot, "FailedAndUnresolvableNodes"),
              HasSubstr("this member's slot on node " + slot + " waits for pods being deleted there"));
  EXPECT_EQ(SlotOf("uid-w0"), slot);
  clock.Advance(std::chrono::seconds(149));  // half of gang.holdSeconds: still waiting
  EXPECT_THAT(FailedReason(Filter(Member("w0"), {"m0", "m1"}), slot, "FailedAndUnresolvableNodes"), HasSubstr("waits"));
  clock.Advance(std::chrono::seconds(2));  // a pod stuck on finalizers must not keep the gang waiting for ever
  EXPECT_THAT(FailedReason(Filter(Member("w0"), {"m0", "m1"}), slot), HasSubstr("no longer fits it"));
  EXPECT_NE(SlotOf("uid-w0"), slot);
}

// A member whose slot's pod stays (not being deleted) has GPUs taken: its slot is planned again.
TEST_F(GangHoldsTest, ASlotWhosePodStaysIsPlannedAgain) {
  Load(Cluster(/*m1=*/true));
  ASSERT_EQ(KeptNodes(Filter(Member("w0"), {"m0", "m1"})).size(), 1u);
  std::string slot = SlotOf("uid-w0");
  ASSERT_NE(slot, "");
  PodJson leaving{.name = "leaving", .namespace_name = "ml", .uid = "uid-leaving", .node = slot, .phase = "Running",
                  .containers = {Mgpu("s", 50, 4096)}, .annotations = {{"vke.volcengine.com/gpu-index-container-s", "0"}}};
  inventory_.Apply(ClusterDelta{.upsert_pods = {testing::DecodedPod(leaving.ToJson())}});
  EXPECT_THAT(FailedReason(Filter(Member("w0"), {"m0", "m1"}), slot), HasSubstr("no longer fits it"));
  EXPECT_NE(SlotOf("uid-w0"), slot);
}

// Offered its nominated node alone (kube-scheduler tries it first), not its slot, a member is
// refused there with no side effect: judged beside its siblings' slots instead, two members could
// count on one free share. Offered other nodes (kube-scheduler's own filters refused the slot's
// node), it alone is planned again among them: its slot moves when it fits there, and stays
// when it does not.
TEST_F(GangHoldsTest, AMemberNotOfferedItsSlotIsPlannedAgainAmongTheNodesOfferedUnlessANominatedTry) {
  Load(ListJson({MgpuNode("m0", 1, 24576).ToJson(), MgpuNode("m1", 1, 24576).ToJson(), MgpuNode("m2", 1, 24576).ToJson(),
                 Group(2), Member("w0").ToJson(), Member("w1").ToJson()}));
  ASSERT_EQ(service_->SweepGangs(), 1u);
  std::string w0 = SlotOf("uid-w0"), w1 = SlotOf("uid-w1");
  ASSERT_NE(w0, w1);
  PodJson nominated = Member("w0");
  nominated.nominated_node = w1;
  std::string tried = Filter(nominated, {w1});
  EXPECT_THAT(KeptNodes(tried), IsEmpty());
  EXPECT_EQ(FailedReason(tried, w1), "gang ml/train: this member's slot in the gang's plan is node " + w0 + ", not offered");
  std::string full = Filter(Member("w0"), {w1});  // w1's slot fills that node
  EXPECT_THAT(FailedReason(full, w1), HasSubstr("gang ml/train: this member fits on none of the nodes offered beside the other slots"));
  EXPECT_EQ(SlotOf("uid-w0"), w0);  // unchanged either way
  std::string free = w0 != "m2" && w1 != "m2" ? "m2" : (w0 != "m1" && w1 != "m1" ? "m1" : "m0");
  EXPECT_THAT(KeptNodes(Filter(Member("w0"), {w1, free})), ElementsAre(free));
  EXPECT_EQ(SlotOf("uid-w0"), free);
  EXPECT_EQ(SlotOf("uid-w1"), w1);
}

// The gang's plan is held as it is when a member arrives late: the new member is planned beside
// the slots, which kube-scheduler may already have used in its cycle.
TEST_F(GangHoldsTest, ALateMemberIsPlannedBesideTheSlotsHeldWhichStayWhereTheyAre) {
  std::vector<std::string> objects = {MgpuNode("m0", 2, 24576).ToJson(), MgpuNode("m1", 2, 24576).ToJson(), Group(2),
                                      Member("w0").ToJson(), Member("w1").ToJson()};
  Load(ListJson(objects));
  ASSERT_EQ(service_->SweepGangs(), 1u);
  std::string w0 = SlotOf("uid-w0"), w1 = SlotOf("uid-w1");
  objects.push_back(Member("w2").ToJson());
  ClusterObjects more;
  ASSERT_TRUE(kubejson::AppendClusterJson(ListJson(objects), &more).ok());
  inventory_.ReplaceCluster(std::move(more));
  std::vector<std::string> kept = KeptNodes(Filter(Member("w2"), {"m0", "m1"}));
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0], SlotOf("uid-w2"));
  EXPECT_EQ(SlotOf("uid-w0"), w0);
  EXPECT_EQ(SlotOf("uid-w1"), w1);
}

// minCount 2 of 3 members, room for two: the third is left out and refused, the two hold slots.
TEST_F(GangHoldsTest, AMemberThatFitsNowhereIsLeftOutWhileTheGangCanStartWithoutIt) {
  Load(Cluster(/*m1=*/true, /*min_count=*/2, /*members=*/3));
  ASSERT_EQ(service_->SweepGangs(), 1u);
  int slots = 0;
  std::string left;
  for (const char* w : {"w0", "w1", "w2"}) {
    if (SlotOf(std::string("uid-") + w).empty()) {
      left = w;
    } else {
      ++slots;
    }
  }
  ASSERT_EQ(slots, 2);
  std::string reply = Filter(Member(left), {"m0", "m1"});
  EXPECT_THAT(KeptNodes(reply), IsEmpty());
  EXPECT_THAT(FailedReason(reply, "m0"), HasSubstr("ml/" + left + " is left out"));
}

// A launcher (no GPUs) needs no slot: its filter passes every node and leaves the plan alone.
TEST_F(GangHoldsTest, ALaunchersFilterLeavesThePlanAlone) {
  PodJson launcher{.name = "launcher", .namespace_name = "ml", .uid = "uid-launcher",
                   .containers = {testing::ContainerJson{.name = "l", .requests = {{"cpu", "1"}}}},
                   .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"};
  Load(ListJson({MgpuNode("m0", 2, 24576).ToJson(), MgpuNode("m1", 1, 24576).ToJson(), Group(3), Member("w0").ToJson(),
                 Member("w1").ToJson(), launcher.ToJson()}));
  ASSERT_EQ(service_->SweepGangs(), 1u);
  std::string w0 = SlotOf("uid-w0");
  ASSERT_FALSE(w0.empty());
  EXPECT_THAT(KeptNodes(Filter(launcher, {"m0", "m1"})), ElementsAre("m0", "m1"));
  EXPECT_EQ(SlotOf("uid-w0"), w0);
}

// Holds run out after gang.holdSeconds; the sweep does not plan that gang again (kube-scheduler
// may never try it: GPUs held for nothing), a member's filter does.
TEST_F(GangHoldsTest, AfterItsHoldsRanOutAGangIsPlannedAgainOnlyByAMembersFilter) {
  testing::FakeClock clock;
  inventory::Inventory inv(inventory::InventoryOptions{.clock = &clock});
  ClusterObjects objects;
  ASSERT_TRUE(kubejson::AppendClusterJson(Cluster(/*m1=*/true), &objects).ok());
  inv.ReplaceCluster(std::move(objects));
  Service service(&inv, ServiceOptions{.gang_hold_ttl = std::chrono::seconds(60)});
  ASSERT_EQ(service.SweepGangs(), 1u);
  EXPECT_FALSE(inv.Snapshot()->held_nodes().empty());
  clock.Advance(std::chrono::seconds(61));
  inv.Expire();
  EXPECT_TRUE(inv.Snapshot()->held_nodes().empty());
  EXPECT_EQ(service.SweepGangs(), 0u);
  EXPECT_TRUE(inv.Snapshot()->held_nodes().empty());
  EXPECT_THAT(KeptNodes(service.Filter(ArgsWithNames(Member("w0").ToJson(), {"m0", "m1"}))), ::testing::SizeIs(1));
  EXPECT_FALSE(inv.Snapshot()->held_nodes().empty());
}

// While kube-scheduler keeps trying a gang (its members are filtered), the slots are renewed in
// place before they run out; the members' slots stay where they were.
TEST_F(GangHoldsTest, TheSlotsOfAGangKubeSchedulerKeepsTryingAreRenewedInPlace) {
  testing::FakeClock clock;
  inventory::Inventory inv(inventory::InventoryOptions{.clock = &clock});
  ClusterObjects objects;
  ASSERT_TRUE(kubejson::AppendClusterJson(Cluster(/*m1=*/true), &objects).ok());
  inv.ReplaceCluster(std::move(objects));
  Service service(&inv, ServiceOptions{.gang_hold_ttl = std::chrono::seconds(60)}, ServiceCollaborators{.clock = &clock});
  ASSERT_EQ(service.SweepGangs(), 1u);
  Pod w0 = testing::DecodedPod(Member("w0").ToJson());
  std::string slot = StandingOf(w0, *inv.Snapshot(), true).node;
  clock.Advance(std::chrono::seconds(40));
  ASSERT_THAT(KeptNodes(service.Filter(ArgsWithNames(Member("w0").ToJson(), {"m0", "m1"}))), ElementsAre(slot));
  service.SweepGangs();  // past half its time, and tried: renewed
  clock.Advance(std::chrono::seconds(30));  // 70 s after it was made
  inv.Expire();
  EXPECT_EQ(StandingOf(w0, *inv.Snapshot(), true).node, slot);
  clock.Advance(std::chrono::seconds(31));  // not tried since: it runs out
  inv.Expire();
  EXPECT_EQ(StandingOf(w0, *inv.Snapshot(), true).node, "");
}

// A cordoned slot node is no slot: the member is planned again elsewhere.
TEST_F(GangHoldsTest, AMemberWhoseSlotNodeIsCordonedIsPlannedAgain) {
  std::vector<std::string> objects = {MgpuNode("m0", 2, 24576).ToJson(), MgpuNode("m1", 2, 24576).ToJson(), Group(2),
                                      Member("w0").ToJson(), Member("w1").ToJson()};
  Load(ListJson(objects));
  ASSERT_EQ(service_->SweepGangs(), 1u);
  std::string w0 = SlotOf("uid-w0");
  std::string other = w0 == "m0" ? "m1" : "m0";
  ClusterObjects cordoned;
  ASSERT_TRUE(kubejson::AppendClusterJson(ListJson(objects), &cordoned).ok());
  for (Node& n : cordoned.nodes) n.schedulability.unschedulable = n.name == w0;
  inventory_.ReplaceCluster(std::move(cordoned));
  EXPECT_EQ(SlotOf("uid-w0"), "");
  EXPECT_THAT(KeptNodes(Filter(Member("w0"), {other})), ElementsAre(other));
}

TEST_F(GangHoldsTest, AGangThatDoesNotFitWholeIsRefusedOnEveryNodeAndHoldsNothing) {
  Load(Cluster(/*m1=*/false));
  std::string reply = Filter(Member("w0"), {"m0"});
  EXPECT_THAT(KeptNodes(reply), IsEmpty());
  EXPECT_EQ(FailedReason(reply, "m0"), "gang ml/train: 1 of 2 members fit; ml/w1 fits on no node beside them");
  EXPECT_THAT(inventory_.Snapshot()->held_nodes(), IsEmpty());
  EXPECT_THAT(KeptNodes(Filter(Member("w1"), {"m0"})), IsEmpty());
}

TEST_F(GangHoldsTest, AGangWithFewerMembersThanItsMinCountIsRefusedUntilTheyExist) {
  Load(Cluster(/*m1=*/true, /*min_count=*/3));
  std::string reply = Filter(Member("w0"), {"m0", "m1"});
  EXPECT_THAT(KeptNodes(reply), IsEmpty());
  // No eviction brings the missing member: unresolvable.
  EXPECT_EQ(FailedReason(reply, "m1", "FailedAndUnresolvableNodes"),
            "gang ml/train: 2 of its 3 members exist; none is placed before all 3 can be");
  EXPECT_THAT(inventory_.Snapshot()->held_nodes(), IsEmpty());
}

TEST_F(GangHoldsTest, AnotherPodIsRefusedTheGpusOfTheSlots) {
  Load(Cluster(/*m1=*/true));
  EXPECT_EQ(service_->SweepGangs(), 1u);  // planned at load, before any member's filter
  ASSERT_FALSE(SlotOf("uid-w0").empty());
  PodJson stranger{.name = "s", .namespace_name = "ml", .uid = "uid-s", .containers = {Mgpu("s", 60, 4096)}};
  EXPECT_THAT(KeptNodes(Filter(stranger, {"m0", "m1"})), IsEmpty());
}

TEST_F(GangHoldsTest, ADeletedMemberReleasesEverySlotOfItsGang) {
  Load(Cluster(/*m1=*/true));
  ASSERT_EQ(service_->SweepGangs(), 1u);
  ASSERT_FALSE(SlotOf("uid-w0").empty());
  inventory_.DeletePod("uid-w1");
  // Gone from the pending pods and not bound: maybe bound and not shown yet by the watch of pods,
  // so a second sweep confirms it.
  EXPECT_EQ(service_->SweepGangs(), 0u);
  EXPECT_FALSE(SlotOf("uid-w0").empty());
  EXPECT_EQ(service_->SweepGangs(), 0u);  // 1 of 2 members left: dropped, not planned again
  EXPECT_EQ(SlotOf("uid-w0"), "");
  EXPECT_THAT(inventory_.Snapshot()->held_nodes(), IsEmpty());
}

// A pending member nominated to a node (by kube-scheduler after a preemption) holds GPUs there,
// kept for it: that hold is no slot of the gang's, and a gang that does not fit whole is refused
// on that node too.
TEST_F(GangHoldsTest, ANominationsHoldIsNoSlot) {
  std::vector<std::string> objects = {MgpuNode("m0", 2, 24576).ToJson(), Group(2)};
  PodJson w0 = Member("w0");
  w0.nominated_node = "m0";
  objects.push_back(w0.ToJson());
  objects.push_back(Member("w1").ToJson());
  objects.push_back(PodJson{.name = "busy", .namespace_name = "ml", .uid = "uid-busy", .node = "m0", .phase = "Running",
                            .containers = {Mgpu("s", 70, 4096)}, .annotations = {{"vke.volcengine.com/gpu-index-container-s", "1"}}}
                        .ToJson());
  Load(ListJson(objects));
  ASSERT_EQ(inventory_.Snapshot()->FindNode("m0")->holds.size(), 1u);  // the nomination's
  std::string reply = Filter(w0, {"m0"});
  EXPECT_THAT(KeptNodes(reply), IsEmpty());
  EXPECT_THAT(FailedReason(reply, "m0"), HasSubstr("of 2 members fit;"));
}

// A member's own nomination is room for its gang: w0, nominated to an empty 2-GPU node (its
// nomination holds 60% of one GPU there), and w1 fit there together.
TEST_F(GangHoldsTest, AMembersOwnNominationIsRoomForItsGang) {
  PodJson w0 = Member("w0");
  w0.nominated_node = "m0";
  Load(ListJson({MgpuNode("m0", 2, 24576).ToJson(), Group(2), w0.ToJson(), Member("w1").ToJson()}));
  ASSERT_EQ(inventory_.Snapshot()->FindNode("m0")->holds.size(), 1u);  // the nomination's
  EXPECT_THAT(KeptNodes(Filter(w0, {"m0"})), ElementsAre("m0"));
  EXPECT_EQ(SlotOf("uid-w1"), "m0");
}

// Whole-GPU nodes x and y of 2 GPUs; w0 (1 GPU) nominated to x by kube-scheduler, w1 asks 2. A
// plan giving w0's room on x to w1 would fail to hold (w0's nomination keeps its GPU there): the
// gang is planned with w0 on x, w1 on y.
TEST_F(GangHoldsTest, ANominatedMembersRoomIsNotGivenToASibling) {
  PodJson w0{.name = "w0", .namespace_name = "ml", .uid = "uid-w0", .phase = "Pending", .containers = {testing::WholeGpus("c", 1)},
             .nominated_node = "x", .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"};
  PodJson w1{.name = "w1", .namespace_name = "ml", .uid = "uid-w1", .phase = "Pending", .containers = {testing::WholeGpus("c", 2)},
             .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"};
  Load(ListJson({testing::NvidiaNode("x", 2).ToJson(), testing::NvidiaNode("y", 2).ToJson(), Group(2), w0.ToJson(), w1.ToJson()}));
  ASSERT_EQ(inventory_.Snapshot()->FindNode("x")->holds.size(), 1u);  // w0's nomination
  EXPECT_THAT(KeptNodes(Filter(w1, {"x", "y"})), ElementsAre("y"));
  EXPECT_THAT(KeptNodes(Filter(w0, {"x", "y"})), ElementsAre("x"));
}

// gang.nominate's writes, recorded and carried to the inventory as the watch of pending pods
// would carry them.
class RecordingNominator : public PodNominator {
 public:
  explicit RecordingNominator(inventory::Inventory* inventory) : inventory_(inventory) {}
  Status Nominate(const Pod& pod, const std::string& node) override {
    writes.push_back(pod.name + "->" + (node.empty() ? "(cleared)" : node));
    Pod written = pod;
    written.nominated_node = node;
    inventory_->Apply(ClusterDelta{.upsert_pending = {written}});
    if (timeouts > 0) {  // written, but the answer was lost
      --timeouts;
      return UnavailableError("context deadline exceeded");
    }
    return OkStatus();
  }
  std::vector<std::string> writes;
  int timeouts = 0;

 private:
  inventory::Inventory* inventory_;
};

// Each member is nominated to its slot, but never over a nomination someone else made, and a
// nomination of its own is cleared when the gang's slots are gone.
TEST_F(GangHoldsTest, MembersAreNominatedToTheirSlotsNeverOverOthersAndClearedWithTheSlots) {
  PodJson w1 = Member("w1");
  w1.nominated_node = "m9";  // kube-scheduler's, after a preemption elsewhere
  Load(ListJson({MgpuNode("m0", 1, 24576).ToJson(), MgpuNode("m1", 1, 24576).ToJson(), Group(2), Member("w0").ToJson(),
                 w1.ToJson()}));
  RecordingNominator nominator(&inventory_);
  service_ = std::make_unique<Service>(&inventory_, ServiceOptions{.gang_nominate = true}, ServiceCollaborators{.nominator = &nominator});
  ASSERT_EQ(service_->SweepGangs(), 1u);
  std::string w0 = SlotOf("uid-w0");
  EXPECT_THAT(nominator.writes, ElementsAre("w0->" + w0));
  service_->SweepGangs();  // written and seen: nothing more
  EXPECT_EQ(nominator.writes.size(), 1u);
  inventory_.DeletePod("uid-w1");
  service_->SweepGangs();
  service_->SweepGangs();  // 1 of 2 left: the slots end, and the nomination w0 carries from here
  EXPECT_EQ(SlotOf("uid-w0"), "");
  EXPECT_THAT(nominator.writes, ElementsAre("w0->" + w0, "w0->(cleared)"));
}

// A nomination whose write timed out may have been written (here it was): it counts as gpusched's,
// so that it is cleared when the slot ends.
TEST_F(GangHoldsTest, ANominationOfUnknownOutcomeIsClearedWithItsSlot) {
  Load(ListJson({MgpuNode("m0", 1, 24576).ToJson(), MgpuNode("m1", 1, 24576).ToJson(), Group(2), Member("w0").ToJson(),
                 Member("w1").ToJson()}));
  RecordingNominator nominator(&inventory_);
  nominator.timeouts = 2;  // both members' writes
  service_ = std::make_unique<Service>(&inventory_, ServiceOptions{.gang_nominate = true}, ServiceCollaborators{.nominator = &nominator});
  ASSERT_EQ(service_->SweepGangs(), 1u);
  std::string w0 = SlotOf("uid-w0");
  ASSERT_EQ(nominator.writes.size(), 2u);
  inventory_.DeletePod("uid-w1");
  service_->SweepGangs();
  service_->SweepGangs();  // 1 of 2 left: the slots end
  EXPECT_EQ(SlotOf("uid-w0"), "");
  EXPECT_EQ(nominator.writes.back(), "w0->(cleared)");
}

// Gangs off: each member judged alone fits m0 (GPU 0), kube-scheduler's node totals take both,
// and the second bind fails: the partial gang gangs prevent.
TEST_F(GangHoldsTest, WithGangsOffBothMembersPassFilterOnOneNodeAndTheSecondBindFails) {
  Load(Cluster(/*m1=*/false), ServiceOptions{.gangs = false});
  EXPECT_THAT(KeptNodes(Filter(Member("w0"), {"m0"})), ElementsAre("m0"));
  EXPECT_THAT(KeptNodes(Filter(Member("w1"), {"m0"})), ElementsAre("m0"));
  EXPECT_EQ(Bind(Member("w0"), "m0"), R"({"Error":""})");
  EXPECT_THAT(Bind(Member("w1"), "m0"), HasSubstr("bind ml/w1 to m0 rejected"));
}

}  // namespace gang_holds_test
}  // namespace gpusched::extender
