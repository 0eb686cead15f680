// Binding conditions as kube-scheduler judges them (dynamicresources.go isClaimReadyForBinding
// and isPodReadyForBinding; the scheduler_perf and integration cases "binding-conditions-*" of
// shared/specs/dra.md §11).
#include "gpusched/dra/binding_conditions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::dra {
namespace binding_conditions_test {

using ::testing::HasSubstr;

constexpr int64_t kAllocatedAt = 1764669600000;

ResourceClaim Allocated(std::vector<std::string> conditions, std::vector<std::string> failures) {
  ResourceClaim c{.namespace_name = "ml", .name = "c"};
  c.allocation = AllocationResult{};
  c.allocation->allocation_timestamp_ms = kAllocatedAt;
  c.allocation->results.push_back(DeviceResult{.request = "gpus", .id = {"gpu.nvidia.com", "n1", "gpu-0"},
                                               .binding_conditions = std::move(conditions),
                                               .binding_failure_conditions = std::move(failures)});
  c.allocation->results.push_back(DeviceResult{.request = "gpus", .id = {"gpu.nvidia.com", "n1", "gpu-1"}});
  return c;
}

void Report(ResourceClaim* c, std::map<std::string, std::string> conditions) {
  c->device_statuses.push_back(AllocatedDeviceStatus{.id = {"gpu.nvidia.com", "n1", "gpu-0"}, .conditions = std::move(conditions)});
}

constexpr std::chrono::seconds kTimeout{600};

TEST(BindingConditions, ADeviceWithoutThemOrAClaimWithoutAllocationIsReady) {
  ResourceClaim plain = Allocated({}, {});
  EXPECT_FALSE(HasBindingConditions(*plain.allocation));
  EXPECT_TRUE(CheckBindingConditions(plain, kAllocatedAt, kTimeout).ready());
  EXPECT_TRUE(CheckBindingConditions(ResourceClaim{}, kAllocatedAt, kTimeout).ready());
}

TEST(BindingConditions, WaitsUntilEveryConditionIsTrueInTheDevicesStatus) {
  ResourceClaim c = Allocated({"dra.example.com/attached", "dra.example.com/ready"}, {"dra.example.com/failed"});
  EXPECT_TRUE(HasBindingConditions(*c.allocation));
  BindingCheck none = CheckBindingConditions(c, kAllocatedAt + 42'000, kTimeout);  // no status entry yet
  EXPECT_EQ(none.state, BindingCheck::State::kWaiting);
  EXPECT_EQ(none.reason, "claim ml/c: waiting for binding condition dra.example.com/attached of device gpu.nvidia.com/n1/gpu-0 (42 of 600 s)");
  Report(&c, {{"dra.example.com/attached", "True"}, {"dra.example.com/ready", "Unknown"}});
  EXPECT_THAT(CheckBindingConditions(c, kAllocatedAt, kTimeout).reason, HasSubstr("dra.example.com/ready"));
  c.device_statuses[0].conditions["dra.example.com/ready"] = "True";
  EXPECT_TRUE(CheckBindingConditions(c, kAllocatedAt, kTimeout).ready());
}

TEST(BindingConditions, AFailureConditionFailsTheClaimEvenWhileOthersAreAwaited) {
  ResourceClaim c = Allocated({"dra.example.com/attached"}, {"dra.example.com/failed"});
  Report(&c, {{"dra.example.com/failed", "True"}});
  BindingCheck failed = CheckBindingConditions(c, kAllocatedAt, kTimeout);
  EXPECT_EQ(failed.state, BindingCheck::State::kFailed);
  EXPECT_THAT(failed.reason, HasSubstr("device gpu.nvidia.com/n1/gpu-0 reports binding failure condition dra.example.com/failed"));
  c.device_statuses[0].conditions["dra.example.com/failed"] = "False";
  EXPECT_EQ(CheckBindingConditions(c, kAllocatedAt, kTimeout).state, BindingCheck::State::kWaiting);
}

TEST(BindingConditions, TheWaitEndsAtTheTimeoutCountedFromTheAllocationTimestamp) {
  ResourceClaim c = Allocated({"dra.example.com/attached"}, {});
  EXPECT_EQ(CheckBindingConditions(c, kAllocatedAt + 599'999, kTimeout).state, BindingCheck::State::kWaiting);
  BindingCheck late = CheckBindingConditions(c, kAllocatedAt + 600'000, kTimeout);
  EXPECT_EQ(late.state, BindingCheck::State::kTimedOut);
  EXPECT_THAT(late.reason, HasSubstr("did not hold within 600 s"));
  c.allocation->allocation_timestamp_ms.reset();  // no timestamp: no timeout
  EXPECT_EQ(CheckBindingConditions(c, kAllocatedAt + 3'600'000, kTimeout).state, BindingCheck::State::kWaiting);
}

}  // namespace binding_conditions_test
}  // namespace gpusched::dra
