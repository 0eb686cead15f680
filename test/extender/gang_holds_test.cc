// Gangs held: a gang's members planned together and held, each member's filter steered into its
// own slot, a gang that does not fit whole refused on every node holding nothing, other pods
// refused the slots' GPUs, slots released when a member is deleted; and with gangs off, the
// partial gang an extender judging member by member makes (issue 33's case).
#include "gpusched/extender/gang_holds.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
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

// The FailedNodes reason of `node` in a filter reply, or "".
std::string FailedReason(const std::string& reply, const std::string& node) {
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(reply, &d).ok()) << reply;
  if (!d["FailedNodes"].IsObject() || !d["FailedNodes"].HasMember(node.c_str())) return "";
  return d["FailedNodes"][node.c_str()].GetString();
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

TEST_F(GangHoldsTest, AMemberNotOfferedItsSlotFitsOnlyBesideItsSiblingsSlots) {
  Load(Cluster(/*m1=*/true));
  ASSERT_THAT(KeptNodes(Filter(Member("w0"), {"m0", "m1"})), ::testing::SizeIs(1));
  std::string w1_slot = SlotOf("uid-w1");
  std::string w0_slot = SlotOf("uid-w0");
  ASSERT_FALSE(w1_slot.empty());
  // Offered only the sibling's slot node: w1 does not fit beside w0's slot there.
  std::string reply = Filter(Member("w1"), {w0_slot});
  EXPECT_THAT(KeptNodes(reply), IsEmpty()) << reply;
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
  EXPECT_EQ(FailedReason(reply, "m1"), "gang ml/train: 2 of its 3 members exist; none is placed before all 3 can be");
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
  EXPECT_EQ(service_->SweepGangs(), 0u);  // 1 of 2 members left: not planned again
  EXPECT_EQ(SlotOf("uid-w0"), "");
  EXPECT_THAT(inventory_.Snapshot()->held_nodes(), IsEmpty());
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
