// The claim allocator (extender/claim_allocator.h) on its own, with a fake writer whose writes the
// cluster has not shown yet: devices written but not seen are held for every later plan, a claim
// that changed under a write is planned again, a failed write leaves nothing held, and Release
// gives back what the bind allocated.
#include "gpusched/extender/claim_allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <deque>

#include "cluster_json.h"
#include "dra_json.h"
#include "fake_clock.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace claim_allocator_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Writes as an API server would answer them (allocation, the pod reserved, the next
// resourceVersion), without applying them to the inventory: the watch has not shown them yet.
// Answers from `errors` first, one per Write.
class UnseenWriter final : public ClaimWriter {
 public:
  StatusOr<dra::ResourceClaim> Write(const dra::ResourceClaim& claim, const dra::AllocationResult* result, const Pod& pod) override {
    ++writes;
    if (!errors.empty()) {
      Status s = errors.front();
      errors.pop_front();
      return s;
    }
    dra::ResourceClaim written = claim;
    if (result != nullptr) written.allocation = *result;
    written.reserved_for.push_back(dra::ConsumerRef{.resource = "pods", .name = pod.name, .uid = pod.uid});
    written.resource_version = claim.resource_version + "+1";
    return written;
  }
  Status Unreserve(const dra::ResourceClaim& claim, const std::vector<std::string>& pods, bool deallocate) override {
    unreserved.push_back(fmt::format("{} {} deallocate={}", claim.name, fmt::join(pods, ","), deallocate));
    return OkStatus();
  }
  StatusOr<dra::ResourceClaim> CreateSpecial(const dra::SpecialClaim&, const dra::AllocationResult&, const Pod&) override {
    return InternalError("no special claims here");
  }

  int writes = 0;
  std::deque<Status> errors;
  std::vector<std::string> unreserved;
};

// Node dra-a with 2 GPUs; claims one-a, one-b and one-c of 1 GPU each and two of 2, each with a
// pending pod of the same name.
class ClaimAllocatorTest : public ::testing::Test {
 protected:
  ClaimAllocatorTest() {
    std::vector<std::string> items = {std::string(testing::kGpuClass), testing::DraNode("dra-a"), testing::GpuSlice("dra-a", 2),
                                      testing::Claim("two", testing::ClaimSpec(2, "")), testing::ClaimPod("two", "two")};
    for (std::string name : {"one-a", "one-b", "one-c"}) {
      items.push_back(testing::Claim(name, testing::ClaimSpec(1, "")));
      items.push_back(testing::ClaimPod(name, name));
    }
    ClusterObjects objects;
    EXPECT_TRUE(kubejson::AppendClusterJson(testing::ListJson(items), &objects).ok());
    inventory_.ReplaceCluster(std::move(objects));
  }
  Pod PodNamed(const std::string& uid) { return *inventory_.FindPod(uid); }
  static dra::DeviceId Device(const ClaimAllocator::Allocated& a) { return a.claims.at(0).allocation->results.at(0).id; }

  testing::FakeClock clock_;
  inventory::Inventory inventory_{inventory::InventoryOptions{.clock = &clock_}};
  ServiceOptions options_;
  dra::cel::ProgramCache programs_;
  DraDecisionLog log_;
  UnseenWriter writer_;
  ClaimAllocator allocator_{&inventory_, &writer_, &options_, &programs_, &log_, &clock_};
};

TEST_F(ClaimAllocatorTest, DevicesWrittenButNotYetSeenAreHeldForEveryLaterPlan) {
  StatusOr<ClaimAllocator::Allocated> a = allocator_.Allocate(PodNamed("one-a"), "dra-a");
  ASSERT_TRUE(a.ok()) << a.status().message();
  StatusOr<ClaimAllocator::Allocated> b = allocator_.Allocate(PodNamed("one-b"), "dra-a");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_NE(Device(*a), Device(*b));  // the inventory still shows both GPUs free
  StatusOr<ClaimAllocator::Allocated> c = allocator_.Allocate(PodNamed("one-c"), "dra-a");
  EXPECT_EQ(c.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(writer_.writes, 2);
}

TEST_F(ClaimAllocatorTest, AClaimThatChangedUnderTheWriteIsPlannedAgain) {
  writer_.errors = {AbortedError("resourceclaims ml/two: the object has been modified")};
  StatusOr<ClaimAllocator::Allocated> a = allocator_.Allocate(PodNamed("two"), "dra-a");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(writer_.writes, 2);
  ASSERT_EQ(a->claims.size(), 1u);
  EXPECT_EQ(a->claims[0].allocation->results.size(), 2u);
}

TEST_F(ClaimAllocatorTest, AFailedWriteLeavesNoDeviceHeld) {
  writer_.errors = {InternalError("etcdserver: request timed out")};
  StatusOr<ClaimAllocator::Allocated> failed = allocator_.Allocate(PodNamed("one-a"), "dra-a");
  EXPECT_EQ(failed.status().code(), StatusCode::kInternal);
  EXPECT_THAT(failed.status().message(), HasSubstr("etcdserver: request timed out"));
  // Both GPUs are free for the next plan: the failed one held nothing.
  StatusOr<ClaimAllocator::Allocated> two = allocator_.Allocate(PodNamed("two"), "dra-a");
  EXPECT_TRUE(two.ok()) << two.status().message();
}

TEST_F(ClaimAllocatorTest, ReleaseUnreservesAndDeallocatesWhatTheBindAllocated) {
  StatusOr<ClaimAllocator::Allocated> a = allocator_.Allocate(PodNamed("two"), "dra-a");
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(allocator_.Release(PodNamed("two"), *a).ok());
  EXPECT_THAT(writer_.unreserved, ElementsAre("two two deallocate=true"));
  // Given back: another pod's plan may take those GPUs again.
  StatusOr<ClaimAllocator::Allocated> b = allocator_.Allocate(PodNamed("one-a"), "dra-a");
  EXPECT_TRUE(b.ok()) << b.status().message();
}

// A bind retried right after its claims were released, before the watch shows the release: the
// state still shows the claim allocated and reserved for the pod. Taken at its word, the retry
// would bind the pod on a claim that is no longer allocated; it waits for the watch instead.
TEST_F(ClaimAllocatorTest, AReleaseTheWatchHasNotShownIsNeverTakenForAnAllocation) {
  StatusOr<ClaimAllocator::Allocated> a = allocator_.Allocate(PodNamed("two"), "dra-a");
  ASSERT_TRUE(a.ok()) << a.status().message();
  inventory_.Apply(ClusterDelta{.dra_state = dra::WithClaim(inventory_.Snapshot()->dra(), a->claims.at(0))});  // shown
  ASSERT_TRUE(allocator_.Release(PodNamed("two"), *a).ok());                                                   // not shown yet
  StatusOr<ClaimAllocator::Allocated> stale = allocator_.Allocate(PodNamed("two"), "dra-a");
  EXPECT_EQ(stale.status().code(), StatusCode::kAborted);
  EXPECT_THAT(stale.status().message(), HasSubstr("shows an allocation gpusched released"));
  dra::ResourceClaim released = a->claims.at(0);
  released.allocation.reset();
  released.reserved_for.clear();
  inventory_.Apply(ClusterDelta{.dra_state = dra::WithClaim(inventory_.Snapshot()->dra(), released)});  // the watch caught up
  StatusOr<ClaimAllocator::Allocated> again = allocator_.Allocate(PodNamed("two"), "dra-a");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->claims.size(), 1u);  // allocated afresh, written
}

}  // namespace claim_allocator_test
}  // namespace gpusched::extender
