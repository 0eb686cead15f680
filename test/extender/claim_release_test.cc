// DRA owner mode gives claims back: a claim allocated for pods that have not bound within
// dra.releaseAfterSeconds is unreserved and deallocated (kube-scheduler would have undone it in
// Unreserve or PostFilter; an extender has neither hook).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "dra_json.h"
#include "fake_clock.h"
#include "gpusched/extender/inventory_claim_writer.h"
#include "gpusched/extender/pod_binder.h"
#include "gpusched/extender/service.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::testing {
namespace claim_release_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A binding whose outcome is never known (the API server timed out): the claims stay, since the
// pod may be bound.
struct LostBinder : extender::PodBinder {
  Status Bind(const extender::BindTarget&) override { return DeadlineExceededError("binding: the API server did not answer"); }
};

struct Owner {
  FakeClock clock;
  inventory::Inventory inventory{inventory::InventoryOptions{.clock = &clock}};
  extender::InventoryClaimWriter writer{&inventory};
  LostBinder lost;
  std::unique_ptr<extender::Service> service;

  explicit Owner(const std::string& list, bool lose_bindings = false) {
    ClusterObjects objects;
    EXPECT_TRUE(kubejson::AppendClusterJson(list, &objects).ok());
    inventory.ReplaceCluster(std::move(objects));
    service = std::make_unique<extender::Service>(
        &inventory, extender::ServiceOptions{},
        extender::ServiceCollaborators{.binder = lose_bindings ? &lost : nullptr, .claim_writer = &writer, .clock = &clock});
  }
  const dra::ResourceClaim& ClaimNamed(const std::string& name) { return *inventory.Snapshot()->dra().FindClaim("ml", name); }
  // Filter and bind of a pod of `claim`; the binding's outcome is lost.
  void BindLost(const std::string& pod, const std::string& claim) {
    service->Filter(ArgsWithNames(ClaimPod(pod, claim), {"dra-a"}));
    EXPECT_THAT(service->Bind(BindJson(pod, "ml", pod, "dra-a")), ::testing::HasSubstr("did not answer"));
    EXPECT_TRUE(ClaimNamed(claim).allocation.has_value());
  }
  // The pod was never bound: past assume_ttl the inventory forgets the node it recorded.
  void ForgetLostBindings() {
    clock.Advance(std::chrono::seconds(601));
    inventory.Expire();
  }
};

TEST(ClaimRelease, AClaimAllocatedForAPodThatNeverBoundIsDeallocatedAfterTheTtlAndOthersAreLeftAlone) {
  Owner o(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 4), std::string(kGpuClass), Claim("train", ClaimSpec(2, "")),
                    Claim("foreign", ClaimSpec(1, ""), {"dra-a/gpu-3"}, {"ghost"}),  // another scheduler's
                    Claim("three", ClaimSpec(3, ""))}),
          /*lose_bindings=*/true);
  o.BindLost("trainer", "train");
  std::string big = ArgsWithNames(ClaimPod("big", "three"), {"dra-a"});
  EXPECT_THAT(o.service->Filter(big), ::testing::HasSubstr("1 of 3 devices available"));
  EXPECT_EQ(o.service->SweepClaims(), 0u);  // the pod may be bound
  o.ForgetLostBindings();
  EXPECT_FALSE(o.inventory.FindPod("trainer")->bound());
  EXPECT_EQ(o.service->SweepClaims(), 0u);  // first seen unbound now
  o.clock.Advance(std::chrono::seconds(299));
  EXPECT_EQ(o.service->SweepClaims(), 0u);
  o.clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(o.service->SweepClaims(), 1u);
  const dra::ResourceClaim& train = o.ClaimNamed("train");
  EXPECT_FALSE(train.allocation.has_value());
  EXPECT_THAT(train.reserved_for, IsEmpty());
  EXPECT_THAT(train.finalizers, IsEmpty());
  EXPECT_TRUE(o.ClaimNamed("foreign").allocation.has_value());  // never gpusched's to release
  // The devices are free again: a pod of three fits.
  EXPECT_THAT(o.service->Filter(big), ::testing::HasSubstr(R"("NodeNames":["dra-a"])"));
  EXPECT_EQ(o.service->SweepClaims(), 0u);
}

// The node recorded for a lost bind runs out after assume_ttl even when the pod's claims were read
// again meanwhile (another pod's claim allocated: every claim pod is observed again).
TEST(ClaimRelease, ALostBindIsForgottenOnTimeEvenAfterItsClaimsWereReadAgain) {
  Owner o(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 4), std::string(kGpuClass), Claim("train", ClaimSpec(1, "")),
                    Claim("tune", ClaimSpec(1, ""))}),
          /*lose_bindings=*/true);
  o.BindLost("trainer", "train");
  o.clock.Advance(std::chrono::seconds(60));
  o.BindLost("tuner", "tune");
  o.clock.Advance(std::chrono::seconds(545));
  o.inventory.Expire();
  EXPECT_FALSE(o.inventory.FindPod("trainer")->bound());
  EXPECT_TRUE(o.inventory.FindPod("tuner")->bound());  // its own time is not up
}

// A claim pinned to a node that can no longer take GPU pods (gone, not ready, switched to
// another mode) is released at the next sweep, without waiting for the TTL.
TEST(ClaimRelease, AClaimPinnedToANodeThatCanNoLongerTakeThePodIsReleasedAtOnce) {
  std::string base = ListJson({DraNode("dra-a"), GpuSlice("dra-a", 2), std::string(kGpuClass), Claim("train", ClaimSpec(1, ""))});
  Owner o(base, /*lose_bindings=*/true);
  o.BindLost("trainer", "train");
  o.ForgetLostBindings();
  o.inventory.UpsertNodes({Node{.name = "dra-a", .mode_label = "mgpu"}});
  EXPECT_EQ(o.service->SweepClaims(), 1u);
  EXPECT_FALSE(o.ClaimNamed("train").allocation.has_value());
  Owner fine(base, /*lose_bindings=*/true);
  fine.BindLost("trainer", "train");
  fine.ForgetLostBindings();
  EXPECT_EQ(fine.service->SweepClaims(), 0u);  // waits for the TTL
}

// A pod seen bound before the TTL ran out restarts nothing: its claim stays.
TEST(ClaimRelease, APodThatBindsInTimeKeepsItsClaim) {
  Owner o(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 4), std::string(kGpuClass), Claim("train", ClaimSpec(2, ""))}));
  std::string pod = ClaimPod("trainer", "train");
  o.service->Filter(ArgsWithNames(pod, {"dra-a"}));
  ASSERT_THAT(o.service->Bind(BindJson("trainer", "ml", "trainer", "dra-a")), ::testing::HasSubstr(R"("Error":"")"));
  o.clock.Advance(std::chrono::hours(1));
  EXPECT_EQ(o.service->SweepClaims(), 0u);
  EXPECT_EQ(o.service->SweepClaims(), 0u);
  EXPECT_TRUE(o.ClaimNamed("train").allocation.has_value());
  EXPECT_THAT(o.ClaimNamed("train").finalizers, ElementsAre("resource.kubernetes.io/delete-protection"));
}

// Binding conditions in owner mode: bind allocates, then answers an error naming the wait instead
// of blocking; kube-scheduler's retry binds once the driver reports the condition; a failure
// condition or the timeout deallocates the claim for a new try.
struct Bindable : Owner {
  Bindable() : Owner(ListJson({DraNode("dra-a"), MarkedSlice(), std::string(kGpuClass), Claim("train", ClaimSpec(1, ""))})) {
    service->Filter(ArgsWithNames(ClaimPod("trainer", "train"), {"dra-a"}));
  }
  static std::string MarkedSlice() {
    std::string slice = GpuSlice("dra-a", 2);
    const std::string device = R"({"name":"gpu-)";
    for (size_t at = slice.find(device); at != std::string::npos; at = slice.find(device, at + 1)) {
      slice.insert(at + 1, R"("bindingConditions":["dra.example.com/attached"],"bindingFailureConditions":["dra.example.com/failed"],)");
    }
    return slice;
  }
  std::string Bind() { return service->Bind(BindJson("trainer", "ml", "trainer", "dra-a")); }
  // The driver reports `condition` of the allocated device.
  void Report(const std::string& condition) {
    dra::ResourceClaim c = ClaimNamed("train");
    c.device_statuses.push_back(dra::AllocatedDeviceStatus{.id = c.allocation->results[0].id, .conditions = {{condition, "True"}}});
    std::string version = c.resource_version;
    c.resource_version += "1";
    ASSERT_TRUE(inventory.ReplaceDraClaim(std::move(c), version).ok());
  }
};

TEST(BindingConditionsOwner, BindAnswersTheWaitAndTheRetryBindsOnceTheDriverReportsTheCondition) {
  Bindable o;
  EXPECT_THAT(o.Bind(), ::testing::HasSubstr("waiting for binding condition dra.example.com/attached of device gpu.nvidia.com/dra-a/gpu-0 (0 of 600 s)"));
  const dra::ResourceClaim& claim = o.ClaimNamed("train");
  ASSERT_TRUE(claim.allocation.has_value());
  EXPECT_EQ(claim.allocation->allocation_timestamp_ms, o.clock.WallMs());
  EXPECT_THAT(claim.allocation->results[0].binding_conditions, ElementsAre("dra.example.com/attached"));
  EXPECT_EQ(claim.reserved_for.size(), 1u);
  EXPECT_FALSE(o.inventory.FindPod("trainer")->bound());
  o.clock.Advance(std::chrono::seconds(301));
  EXPECT_EQ(o.service->SweepClaims(), 0u);  // the sweep leaves it to the binding timeout
  EXPECT_EQ(o.service->SweepClaims(), 0u);
  EXPECT_THAT(o.Bind(), ::testing::HasSubstr("(301 of 600 s)"));
  o.Report("dra.example.com/attached");
  EXPECT_THAT(o.Bind(), ::testing::HasSubstr(R"("Error":"")"));
  EXPECT_TRUE(o.inventory.FindPod("trainer")->bound());
  EXPECT_EQ(o.ClaimNamed("train").reserved_for.size(), 1u);
}

TEST(BindingConditionsOwner, AFailureConditionOrTheTimeoutDeallocatesTheClaimForANewTry) {
  Bindable failing;
  failing.Bind();
  failing.Report("dra.example.com/failed");
  EXPECT_THAT(failing.Bind(), ::testing::HasSubstr("reports binding failure condition dra.example.com/failed; the claim was deallocated"));
  EXPECT_FALSE(failing.ClaimNamed("train").allocation.has_value());
  EXPECT_THAT(failing.ClaimNamed("train").device_statuses, IsEmpty());
  EXPECT_THAT(failing.Bind(), ::testing::HasSubstr("waiting for binding condition"));  // allocated afresh
  EXPECT_TRUE(failing.ClaimNamed("train").allocation.has_value());

  Bindable slow;
  slow.Bind();
  slow.clock.Advance(std::chrono::seconds(600));
  EXPECT_THAT(slow.Bind(), ::testing::HasSubstr("did not hold within 600 s; the claim was deallocated"));
  EXPECT_FALSE(slow.ClaimNamed("train").allocation.has_value());
  EXPECT_THAT(slow.ClaimNamed("train").reserved_for, IsEmpty());
  EXPECT_FALSE(slow.inventory.FindPod("trainer")->bound());
}

}  // namespace claim_release_test
}  // namespace gpusched::testing
