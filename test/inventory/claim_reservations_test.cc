// DRA owner mode's claim reservations (inventory/claim_reservations.h): devices held in flight
// until the cluster shows their claims, refused when another holds them (in flight, or in the
// cluster's newest state a plan did not see), and the owned claims the sweep may release.
#include "gpusched/inventory/claim_reservations.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::inventory {
namespace claim_reservations_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using TimePoint = ClaimReservations::TimePoint;

dra::AllocationResult Gpus(std::vector<std::string> devices, std::string share = "") {
  dra::AllocationResult r;
  for (std::string& d : devices) {
    r.results.push_back(dra::DeviceResult{.request = "gpus", .id = {"gpu.nvidia.com", "n1", std::move(d)}, .share_id = share});
  }
  return r;
}

dra::ResourceClaim Claim(std::string uid, std::optional<dra::AllocationResult> allocation) {
  return dra::ResourceClaim{.namespace_name = "ml", .name = uid, .uid = uid, .allocation = std::move(allocation)};
}

dra::ClusterState State(std::vector<dra::ResourceClaim> claims) { return dra::ClusterState({}, {}, std::move(claims), {}); }

ClaimReservations::Shown Shown(std::vector<dra::ResourceClaim> claims) { return ClaimReservations::ShownBy(State(std::move(claims))); }

TEST(ClaimReservations, ADeviceInFlightIsHeldUntilTheClusterShowsItsClaimAllocated) {
  ClaimReservations r;
  TimePoint t0;
  ASSERT_TRUE(r.Reserve({"a"}, {Gpus({"gpu-0"})}, {}, t0));
  EXPECT_FALSE(r.Reserve({"b"}, {Gpus({"gpu-0", "gpu-1"})}, {}, t0));  // gpu-0 is in flight for a
  EXPECT_TRUE(r.InFlight(Shown({Claim("a", std::nullopt)}), t0).Holds({"gpu.nvidia.com", "n1", "gpu-0"}));
  // The cluster shows a allocated: its allocation holds the device from now on, not the book.
  EXPECT_THAT(r.InFlight(Shown({Claim("a", Gpus({"gpu-0"}))}), t0).exclusive, IsEmpty());
  EXPECT_FALSE(r.InFlightContains("a"));
}

TEST(ClaimReservations, APlanOnAnOlderStateLosesToADeviceTheClusterAllocatedSince) {
  ClaimReservations r;
  dra::ClusterState latest = State({Claim("other", Gpus({"gpu-1"}))});
  EXPECT_FALSE(r.Reserve({"a"}, {Gpus({"gpu-1"})}, latest.allocated(), TimePoint{}));
  EXPECT_TRUE(r.Reserve({"a"}, {Gpus({"gpu-2"})}, latest.allocated(), TimePoint{}));
  // A shared device takes more shares, but no one takes it whole.
  dra::ClusterState shared = State({Claim("s", Gpus({"gpu-3"}, "share-1"))});
  EXPECT_TRUE(r.Reserve({"b"}, {Gpus({"gpu-3"}, "share-2")}, shared.allocated(), TimePoint{}));
  EXPECT_FALSE(r.Reserve({"c"}, {Gpus({"gpu-3"})}, shared.allocated(), TimePoint{}));
}

TEST(ClaimReservations, AClaimBeingCreatedStaysAndACreatedOneIsAwaitedTwoMinutes) {
  ClaimReservations r;
  TimePoint t0;
  std::string creating = ClaimReservations::CreatingKey("pod-1");
  ASSERT_TRUE(r.Reserve({creating}, {Gpus({"gpu-0"})}, {}, t0));
  EXPECT_EQ(r.InFlight(Shown({}), t0 + std::chrono::hours(1)).exclusive.size(), 1u);  // being created
  r.Created(creating, "special", Gpus({"gpu-0"}), t0);
  EXPECT_FALSE(r.InFlightContains(creating));
  EXPECT_EQ(r.InFlight(Shown({}), t0 + std::chrono::minutes(2)).exclusive.size(), 1u);  // not seen yet
  EXPECT_THAT(r.InFlight(Shown({}), t0 + std::chrono::minutes(2) + std::chrono::seconds(1)).exclusive, IsEmpty());
}

TEST(ClaimReservations, AClaimSeenOnceAndThenMissingIsGone) {
  ClaimReservations r;
  ASSERT_TRUE(r.Reserve({"a"}, {Gpus({"gpu-0"})}, {}, TimePoint{}));
  EXPECT_THAT(r.InFlight(Shown({}), TimePoint{}).exclusive, IsEmpty());  // reserved as seen: deleted meanwhile
}

TEST(ClaimReservations, OwnedClaimsSettleUnlessInFlightAndTheirUnboundTimeStartsAfresh) {
  ClaimReservations r;
  TimePoint t0;
  r.Own("a");
  r.Own("b");
  ASSERT_TRUE(r.Reserve({"b"}, {Gpus({"gpu-0"})}, {}, t0));
  r.Settle({"a", "b"});
  EXPECT_THAT(r.owned(), ElementsAre("b"));  // b was just written: it may not show yet
  EXPECT_EQ(r.SeenUnbound({"b"}, t0).at("b"), t0);
  EXPECT_EQ(r.SeenUnbound({"b"}, t0 + std::chrono::seconds(5)).at("b"), t0);
  r.SeenUnbound({}, t0 + std::chrono::seconds(6));  // bound meanwhile
  EXPECT_EQ(r.SeenUnbound({"b"}, t0 + std::chrono::seconds(7)).at("b"), t0 + std::chrono::seconds(7));
  r.Forget("b");
  EXPECT_THAT(r.owned(), IsEmpty());
  EXPECT_FALSE(r.InFlightContains("b"));
}

}  // namespace claim_reservations_test
}  // namespace gpusched::inventory
