#include "gpusched/placement/fit_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_nodes.h"

namespace gpusched::placement {
namespace fit_check_test {

using ::testing::HasSubstr;

Placement Shared(std::vector<int> gpus, int64_t milli, int64_t mib, bool exclusive = false) {
  Placement p{.kind = RequestKind::kMgpu};
  p.containers.push_back(ContainerAssignment{.container = "c", .gpu_indices = std::move(gpus), .milli_per_gpu = milli,
                                             .mib_per_gpu = mib, .exclusive = exclusive});
  return p;
}

TEST(FitCheck, AcceptsWhatFits) {
  NodeState node = BuildNodeState(SharedNode("n", 2, 10000), {SharedAlloc("a", "n", {0}, 500, 5000)});
  EXPECT_TRUE(CheckFits(node, Shared({0}, 500, 5000)).ok());
  EXPECT_TRUE(CheckFits(node, Shared({1}, 1000, 10000, true)).ok());
}

TEST(FitCheck, RefusesOverbookingAGpu) {
  NodeState node = BuildNodeState(SharedNode("n", 2, 10000), {SharedAlloc("a", "n", {0}, 500, 5000)});
  Status s = CheckFits(node, Shared({0}, 510, 100));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("GPU0 has 50% core and 5000 MiB free"));
  EXPECT_FALSE(CheckFits(node, Shared({0}, 1000, 10000, true)).ok());
  EXPECT_FALSE(CheckFits(node, Shared({5}, 10, 10)).ok());
}

TEST(FitCheck, CountsContainersOfTheSamePlacementTogether) {
  NodeState node = BuildNodeState(SharedNode("n", 1, 10000), {});
  Placement p = Shared({0}, 600, 1000);
  p.containers.push_back(p.containers[0]);
  EXPECT_FALSE(CheckFits(node, p).ok());
}

TEST(FitCheck, RefusesWholeGpusBeyondTheCount) {
  NodeState node = BuildNodeState(WholeNode("n", 4), {WholeAlloc("a", "n", 3)});
  EXPECT_TRUE(CheckFits(node, Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 1}).ok());
  EXPECT_FALSE(CheckFits(node, Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 2}).ok());
}

TEST(FitCheck, RefusesNodesThatAreNotReady) {
  NodeState node = BuildNodeState(SharedNode("n", 2, 10000), {WholeAlloc("old", "n", 1)});
  EXPECT_THAT(CheckFits(node, Shared({0}, 10, 10)).message(), HasSubstr("switching"));
}

}  // namespace fit_check_test
}  // namespace gpusched::placement
