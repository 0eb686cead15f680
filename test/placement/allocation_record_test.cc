#include "gpusched/placement/allocation_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpusched/placement/planner.h"
#include "test_nodes.h"

namespace gpusched::placement {
namespace allocation_record_test {

using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(AllocationRecord, ResultAnnotationsNameEachContainer) {
  Placement p{.kind = RequestKind::kMgpu};
  p.containers = {ContainerAssignment{.container = "a", .gpu_indices = {1, 0}},
                  ContainerAssignment{.container = "b", .gpu_indices = {3}}};
  EXPECT_THAT(ResultAnnotations(p), UnorderedElementsAre(Pair("vke.volcengine.com/gpu-index-container-a", "1,0"),
                                                         Pair("vke.volcengine.com/gpu-index-container-b", "3"),
                                                         Pair("vke.volcengine.com/assumed", "true")));
  EXPECT_TRUE(ResultAnnotations(Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 2}).empty());
}

TEST(AllocationRecord, ParsesIndexLists) {
  EXPECT_THAT(ParseGpuIndexList("1,0"), ElementsAre(1, 0));
  EXPECT_THAT(ParseGpuIndexList("7"), ElementsAre(7));
  EXPECT_TRUE(ParseGpuIndexList("").empty());
  EXPECT_TRUE(ParseGpuIndexList("1,,2").empty());
  EXPECT_TRUE(ParseGpuIndexList("-1").empty());
  EXPECT_TRUE(ParseGpuIndexList("1,1").empty());
  EXPECT_TRUE(ParseGpuIndexList("a").empty());
}

TEST(AllocationRecord, RebuildsMgpuFromAnnotationsAndRequests) {
  Pod pod = MgpuPod({MgpuC("model", 100, 32768), MgpuC("side", 10, 512)},
                    {{"vke.volcengine.com/mgpu-compute-policy", "native-burst-share"},
                     {"vke.volcengine.com/container-multiple-gpu", "2,1"},
                     {"vke.volcengine.com/gpu-index-container-model", "0,1"},
                     {"vke.volcengine.com/gpu-index-container-side", "1"}});
  pod.node_name = "n";
  Allocation a = RecordedAllocation(pod, AnalyzePod(pod));
  EXPECT_EQ(a.mode, NodeMode::kMgpu);
  EXPECT_EQ(a.origin, AllocationOrigin::kObserved);
  ASSERT_EQ(a.placement.containers.size(), 2u);
  EXPECT_EQ(a.placement.containers[0],
            (ContainerAssignment{.container = "model", .gpu_indices = {0, 1}, .milli_per_gpu = 500, .mib_per_gpu = 16384}));
  EXPECT_EQ(a.placement.containers[1],
            (ContainerAssignment{.container = "side", .gpu_indices = {1}, .milli_per_gpu = 100, .mib_per_gpu = 512}));
}

TEST(AllocationRecord, MissingAnnotationKeepsTheAmountWithoutIndex) {
  Pod pod = MgpuPod({MgpuC("c", 30, 1024)});
  pod.node_name = "n";
  Allocation a = RecordedAllocation(pod, AnalyzePod(pod));
  ASSERT_EQ(a.placement.containers.size(), 1u);
  EXPECT_TRUE(a.placement.containers[0].gpu_indices.empty());
  EXPECT_EQ(a.placement.containers[0].milli_per_gpu, 300);
  EXPECT_EQ(a.placement.containers[0].mib_per_gpu, 1024);
}

TEST(AllocationRecord, AnIndexListOfTheWrongLengthIsNotTrusted) {
  // Two cards but one index: the second card could be anywhere.
  Pod pod = MgpuPod({MgpuC("c", 200, std::nullopt)}, {{"vke.volcengine.com/gpu-index-container-c", "1"}});
  pod.node_name = "n";
  Allocation a = RecordedAllocation(pod, AnalyzePod(pod));
  ASSERT_EQ(a.placement.containers.size(), 1u);
  EXPECT_TRUE(a.placement.containers[0].gpu_indices.empty());
  EXPECT_EQ(a.placement.containers[0].milli_per_gpu, 2000);
  EXPECT_EQ(BuildNodeState(SharedNode("n", 4, 10000), {a}).condition, NodeCondition::kInconsistent);
}

TEST(AllocationRecord, WholeGpuPodsRecordTheirCount) {
  Pod pod = WholePod(4);
  pod.node_name = "n";
  Allocation a = RecordedAllocation(pod, AnalyzePod(pod));
  EXPECT_EQ(a.mode, NodeMode::kNvidia);
  EXPECT_EQ(a.placement.whole_gpus, 4);
}

TEST(AllocationRecord, RoundTripsThroughAnnotations) {
  NodeState node = BuildNodeState(SharedNode("n", 4, 10000), {});
  Pod pod = MgpuPod({MgpuC("a", 200, std::nullopt), MgpuC("b", 30, 2048)});
  PodRequest r = AnalyzePod(pod);
  Planner planner(PlacementOptions{});
  NodeVerdict v = planner.Evaluate(r, node);
  ASSERT_TRUE(v.fits());
  for (auto& [k, val] : ResultAnnotations(v.placement)) pod.annotations[k] = val;
  pod.node_name = "n";
  Allocation rebuilt = RecordedAllocation(pod, r);
  EXPECT_EQ(rebuilt.placement, v.placement);
}

}  // namespace allocation_record_test
}  // namespace gpusched::placement
