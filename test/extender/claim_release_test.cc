// DRA owner mode gives claims back: a claim allocated for pods that have not bound within
// dra.releaseAfterSeconds is unreserved and deallocated (kube-scheduler would have undone it in
// Unreserve or PostFilter; an extender has neither hook).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "dra_json.h"
#include "fake_clock.h"
#include "gpusched/extender/inventory_claim_writer.h"
#include "gpusched/extender/service.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

struct Owner {
  FakeClock clock;
  inventory::Inventory inventory;
  extender::InventoryClaimWriter writer{&inventory};
  std::unique_ptr<extender::Service> service;

  explicit Owner(const std::string& list) {
    ClusterObjects objects;
    EXPECT_TRUE(kubejson::AppendClusterJson(list, &objects).ok());
    inventory.ReplaceCluster(std::move(objects));
    service = std::make_unique<extender::Service>(&inventory, extender::ServiceOptions{},
                                                  extender::ServiceCollaborators{.claim_writer = &writer, .clock = &clock});
  }
  const dra::ResourceClaim& ClaimNamed(const std::string& name) { return *inventory.Snapshot()->dra().FindClaim("ml", name); }
};

TEST(ClaimRelease, AClaimHeldForPodsThatNeverBoundIsDeallocatedAfterTheTtlAndOthersAreLeftAlone) {
  Owner o(ListJson({DraNode("dra-a"), GpuSlice("dra-a", 4), std::string(kGpuClass),
                    Claim("orphan", ClaimSpec(2, ""), {"dra-a/gpu-0", "dra-a/gpu-1"}, {"ghost"}),
                    Claim("running", ClaimSpec(1, ""), {"dra-a/gpu-2"}, {"r"}), ClaimPod("r", "running", "dra-a"),
                    Claim("three", ClaimSpec(3, ""))}));
  std::string big = ArgsWithNames(ClaimPod("big", "three"), {"dra-a"});
  EXPECT_THAT(o.service->Filter(big), ::testing::HasSubstr("1 of 3 devices available"));
  EXPECT_EQ(o.service->SweepClaims(), 0u);  // first seen now
  o.clock.Advance(std::chrono::seconds(299));
  EXPECT_EQ(o.service->SweepClaims(), 0u);
  o.clock.Advance(std::chrono::seconds(1));
  EXPECT_EQ(o.service->SweepClaims(), 1u);
  const dra::ResourceClaim& orphan = o.ClaimNamed("orphan");
  EXPECT_FALSE(orphan.allocation.has_value());
  EXPECT_THAT(orphan.reserved_for, IsEmpty());
  EXPECT_THAT(orphan.finalizers, IsEmpty());
  const dra::ResourceClaim& running = o.ClaimNamed("running");  // its pod is bound
  EXPECT_TRUE(running.allocation.has_value());
  EXPECT_EQ(running.reserved_for.size(), 1u);
  // The devices are free again: a pod of three fits.
  EXPECT_THAT(o.service->Filter(big), ::testing::HasSubstr(R"("NodeNames":["dra-a"])"));
  EXPECT_EQ(o.service->SweepClaims(), 0u);
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

}  // namespace
}  // namespace gpusched::testing
