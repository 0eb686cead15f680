// Preemption for a claim pod end to end in DRA owner mode, against the in-process API server: a
// full nvidia-dra node, preempt names the pod whose claim holds the device, kube-scheduler
// deletes it and nominates the preemptor, the device is held for the preemptor while the victim's
// claim is deallocated (a lower-priority claim pod arriving in between is refused it, a
// higher-priority one is not), and the preemptor's bind allocates its claim on that device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "dra_json.h"
#include "fake_apiserver.h"
#include "gpusched/placement/nomination.h"
#include "live_replica.h"

namespace gpusched {
namespace dra_preempt_live_test {

using testing::ClaimPod;
using testing::Eventually;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// `pod` (ClaimPod's JSON) with `field` added to its metadata or status.
std::string WithMetadata(std::string pod, const std::string& uid, const std::string& field) {
  std::string at = R"("uid":")" + uid + R"(")";
  return pod.replace(pod.find(at), at.size(), at + "," + field);
}
std::string Nominated(std::string pod, const std::string& node) {
  std::string at = R"("phase":"Pending")";
  return pod.replace(pod.find(at), at.size(), at + R"(,"nominatedNodeName":")" + node + R"(")");
}

class DraPreemptLive : public ::testing::Test {
 protected:
  // dra-a: gpu-0 held by lo-a's claim (priority 0), gpu-1 by lo-b's (5). Pending claims for
  // urgent (50), sneaky (10) and vip (100), one GPU each.
  void SetUp() override {
    api_.Put("nodes", testing::DraNode("dra-a"));
    api_.Put("resourceslices", testing::GpuSlice("dra-a", 2));
    api_.Put("deviceclasses", std::string(testing::kGpuClass));
    api_.Put("resourceclaims", testing::Claim("lo-a", testing::ClaimSpec(1, ""), {"dra-a/gpu-0"}, {"lo-a"}));
    api_.Put("resourceclaims", testing::Claim("lo-b", testing::ClaimSpec(1, ""), {"dra-a/gpu-1"}, {"lo-b"}));
    api_.Put("pods", ClaimPod("lo-a", "lo-a", "dra-a", 0));
    api_.Put("pods", ClaimPod("lo-b", "lo-b", "dra-a", 5));
    for (const char* name : {"want", "sneak", "vip"}) api_.Put("resourceclaims", testing::Claim(name, testing::ClaimSpec(1, "")));
    api_.Put("pods", urgent_);
    replica_ = std::make_unique<testing::LiveReplica>(api_.url(), extender::ServiceOptions{}, inventory::InventoryOptions{},
                                                      kubeapi::ApiBinderOptions{}, /*dra_owner=*/true);
    ASSERT_TRUE(replica_->sync->WaitSynced(std::chrono::seconds(10)));
    ASSERT_TRUE(Eventually([&] { return replica_->inventory->AllocationOf("lo-b").has_value(); }));
  }

  std::string Filter(const std::string& pod) { return replica_->service->Filter(testing::ArgsWithNames(pod, {"dra-a"})); }
  const placement::NodeState& Node() { return *replica_->inventory->Snapshot()->FindNode("dra-a"); }

  testing::FakeApiServer api_;
  std::string urgent_ = ClaimPod("urgent", "want", "", 50);
  std::unique_ptr<testing::LiveReplica> replica_;
};

TEST_F(DraPreemptLive, ThePreemptorGetsTheDeviceItsVictimFreedAndALowerPriorityPodIsRefusedIt) {
  EXPECT_TRUE(testing::KeptNodes(Filter(urgent_)).empty());
  // A placeholder candidate (kube-scheduler's own filters pass: DynamicResources is off in owner
  // mode). lo-b (5) is given back first; lo-a (0) goes.
  StatusOr<std::string> answer = replica_->service->Preempt(testing::PreemptMetaJson(urgent_, {{"dra-a", {}}}));
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_EQ(*answer, R"({"NodeNameToMetaVictims":{"dra-a":{"Pods":[{"UID":"lo-a"}],"NumPDBViolations":0}}})");

  // kube-scheduler deletes the victim (it terminates first) and nominates the preemptor.
  api_.Put("pods", WithMetadata(ClaimPod("lo-a", "lo-a", "dra-a", 0), "lo-a",
                                R"("deletionTimestamp":"2026-12-01T10:05:00Z","deletionGracePeriodSeconds":30)"));
  api_.Put("pods", Nominated(urgent_, "dra-a"));
  ASSERT_TRUE(Eventually([&] { return placement::FindHold(Node(), "urgent") != nullptr; }));
  EXPECT_THAT(placement::FindHold(Node(), "urgent")->placement.devices, ElementsAre("gpu.nvidia.com/dra-a/gpu-0"));
  EXPECT_THAT(replica_->service->DebugInventory("dra-a"), ::testing::ContainsRegex(R"("holds": \[\s*\{\s*"pod": "ml/urgent")"));
  // While lo-a terminates its claim still holds gpu-0: nothing fits yet, the preemptor included.
  EXPECT_TRUE(testing::KeptNodes(Filter(urgent_)).empty());

  // The pod is gone; the resourceclaim controller deallocates its claim.
  api_.Remove("pods", "ml", "lo-a");
  api_.Put("resourceclaims", testing::Claim("lo-a", testing::ClaimSpec(1, "")));
  ASSERT_TRUE(Eventually([&] { return replica_->inventory->Snapshot()->dra().Holder({"gpu.nvidia.com", "dra-a", "gpu-0"}).empty(); }));
  // A lower-priority claim pod is refused the held device; one above the holder is not bound by it.
  std::string refused = Filter(ClaimPod("sneaky", "sneak", "", 10));
  EXPECT_TRUE(testing::KeptNodes(refused).empty()) << refused;
  EXPECT_THAT(testing::KeptNodes(Filter(ClaimPod("vip", "vip", "", 100))), ElementsAre("dra-a"));

  // The preemptor fits and its bind allocates gpu-0 to its claim.
  EXPECT_THAT(testing::KeptNodes(Filter(urgent_)), ElementsAre("dra-a"));
  std::string bound = replica_->service->Bind(testing::BindJson("urgent", "ml", "urgent", "dra-a"));
  EXPECT_THAT(bound, HasSubstr(R"("Error":"")"));
  std::optional<std::string> claim = api_.Get("resourceclaims", "ml", "want");
  ASSERT_TRUE(claim.has_value());
  EXPECT_THAT(*claim, HasSubstr(R"("pool":"dra-a","device":"gpu-0")"));
}

}  // namespace dra_preempt_live_test
}  // namespace gpusched
