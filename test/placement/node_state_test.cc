#include "gpusched/placement/node_state.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_nodes.h"

namespace gpusched::placement {
namespace node_state_test {

using ::testing::HasSubstr;

TEST(NodeState, LabelAbsentIsNvidia) {
  NodeState s = BuildNodeState(WholeNode("n", 8), {});
  EXPECT_EQ(s.mode, NodeMode::kNvidia);
  EXPECT_TRUE(s.ready());
  EXPECT_EQ(s.whole_total, 8);
}

TEST(NodeState, KnownLabelsSelectModes) {
  EXPECT_EQ(BuildNodeState(WholeNode("n", 8, "nvidia"), {}).mode, NodeMode::kNvidia);
  EXPECT_EQ(BuildNodeState(WholeNode("n", 0, "nvidia-dra"), {}).mode, NodeMode::kNvidiaDra);
  EXPECT_EQ(BuildNodeState(SharedNode("n", 2, 1024), {}).mode, NodeMode::kMgpu);
}

TEST(NodeState, UnknownOrEmptyLabelIsInvalidAndNamesTheValue) {
  NodeState s = BuildNodeState(WholeNode("n", 8, "NVIDIA"), {});
  EXPECT_EQ(s.condition, NodeCondition::kInvalid);
  EXPECT_THAT(s.condition_reason, HasSubstr("vke.node.gpu.schedule=\"NVIDIA\" is not a GPU scheduling mode"));
  s = BuildNodeState(WholeNode("n", 8, ""), {});
  EXPECT_EQ(s.condition, NodeCondition::kInvalid);
  EXPECT_THAT(s.condition_reason, HasSubstr("vke.node.gpu.schedule=\"\""));
}

TEST(NodeState, MgpuWithoutAnnotationSplitsMemoryEvenly) {
  NodeState s = BuildNodeState(SharedNode("n", 4, 23028), {});
  ASSERT_EQ(s.gpus.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(s.gpus[i].index, i);
    EXPECT_EQ(s.gpus[i].memory_mib, 23028);
  }
  EXPECT_EQ(s.capacity_milli, 4000);
  EXPECT_EQ(s.capacity_mib, 4 * 23028);
}

TEST(NodeState, MgpuCoreNotMultipleOf100IsInconsistent) {
  Node n = SharedNode("n", 2, 1024);
  n.allocatable.mgpu_core_percent = 250;
  NodeState s = BuildNodeState(n, {});
  EXPECT_EQ(s.condition, NodeCondition::kInconsistent);
  EXPECT_THAT(s.condition_reason, HasSubstr("vke.volcengine.com/mgpu-core=250 is not a multiple of 100"));
}

Node Heterogeneous() {
  Node n = SharedNode("n", 0, 0);
  n.published_gpus = std::vector<GpuDevice>{{.index = 0, .model = "A100-80", .memory_mib = 81920, .numa_node = 0},
                                            {.index = 1, .model = "A100-40", .memory_mib = 40960, .numa_node = 0},
                                            {.index = 3, .model = "T4", .memory_mib = 15360, .numa_node = 1}};
  n.allocatable.mgpu_core_percent = 300;
  n.allocatable.mgpu_memory_mib = 81920 + 40960 + 15360;
  return n;
}

TEST(NodeState, PublishedGpusModelDifferentSizesAndAMissingIndex) {
  NodeState s = BuildNodeState(Heterogeneous(), {});
  ASSERT_TRUE(s.ready()) << s.condition_reason;
  ASSERT_EQ(s.gpus.size(), 3u);
  EXPECT_EQ(s.gpus[1].memory_mib, 40960);
  EXPECT_EQ(s.gpus[2].index, 3);
  EXPECT_EQ(s.FindGpu(2), nullptr);
  EXPECT_EQ(s.devices[2].model, "T4");
  EXPECT_EQ(s.FindGpu(3)->memory_mib, 15360);
}

TEST(NodeState, PublishedGpusMustMatchAllocatable) {
  Node n = Heterogeneous();
  n.allocatable.mgpu_core_percent = 400;  // the device plugin still reports a lost GPU
  NodeState s = BuildNodeState(n, {});
  EXPECT_EQ(s.condition, NodeCondition::kInconsistent);
  EXPECT_THAT(s.condition_reason, HasSubstr("vke.volcengine.com/mgpu-core=400 does not match 3 healthy GPUs"));
  n = Heterogeneous();
  n.allocatable.mgpu_memory_mib -= 1;
  EXPECT_THAT(BuildNodeState(n, {}).condition_reason, HasSubstr("MiB does not match the 138240 MiB of healthy GPUs"));
}

TEST(NodeState, UnhealthyGpuKeepsItsAllocationButLeavesCapacity) {
  Node n = Heterogeneous();
  (*n.published_gpus)[1].healthy = false;
  n.allocatable.mgpu_core_percent = 200;
  n.allocatable.mgpu_memory_mib = 81920 + 15360;
  NodeState s = BuildNodeState(n, {SharedAlloc("a", "n", {1}, 300, 4096)});
  ASSERT_TRUE(s.ready()) << s.condition_reason;
  EXPECT_EQ(s.capacity_milli, 2000);
  EXPECT_EQ(s.FindGpu(1)->used_milli, 300);
  EXPECT_EQ(s.used_milli, 0);
}

TEST(NodeState, DuplicateOrNegativeIndexIsInconsistent) {
  Node n = Heterogeneous();
  (*n.published_gpus)[2].index = 1;
  EXPECT_THAT(BuildNodeState(n, {}).condition_reason, HasSubstr("GPU index 1 is listed twice"));
}

TEST(NodeState, TheFirstUnusableGpuByIndexIsTheReasonAndNoGpuIsCounted) {
  // GPU 0 has no memory and GPU 1 comes twice: the checks run GPU by GPU, so GPU 0's is the
  // reason, and the node offers nothing while it is inconsistent.
  Node n = Heterogeneous();
  (*n.published_gpus)[0].memory_mib = 0;
  (*n.published_gpus)[2].index = 1;
  NodeState s = BuildNodeState(n, {});
  EXPECT_THAT(s.condition_reason, HasSubstr("GPU 0 has memoryMiB 0"));
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_EQ(s.capacity_milli, 0);
}

TEST(NodeState, BooksMgpuUsagePerGpu) {
  NodeState s = BuildNodeState(SharedNode("n", 2, 10000),
                               {SharedAlloc("a", "n", {0}, 300, 4096), SharedAlloc("b", "n", {0}, 200, 1024),
                                SharedAlloc("c", "n", {1}, 1000, 10000, true)});
  EXPECT_EQ(s.gpus[0].used_milli, 500);
  EXPECT_EQ(s.gpus[0].used_mib, 5120);
  EXPECT_EQ(s.gpus[0].instances, 2);
  EXPECT_TRUE(s.gpus[1].exclusive);
  EXPECT_EQ(s.used_milli, 1500);
  EXPECT_EQ(s.allocations.size(), 3u);
}

TEST(NodeState, AllocationOnAMissingGpuMakesNodeInconsistent) {
  // Allocatable shrank from 4 to 3 GPUs without a per-GPU description: index 3 is gone.
  NodeState s = BuildNodeState(SharedNode("n", 3, 10000), {SharedAlloc("a", "n", {3}, 300, 1024)});
  EXPECT_EQ(s.condition, NodeCondition::kInconsistent);
  EXPECT_THAT(s.condition_reason, HasSubstr("pod ns/a holds GPU index 3 which the node does not have"));
  EXPECT_EQ(s.unassigned_milli, 300);
}

TEST(NodeState, AllocationWithoutIndexMakesNodeInconsistent) {
  NodeState s = BuildNodeState(SharedNode("n", 2, 10000), {SharedAlloc("a", "n", {}, 300, 1024)});
  EXPECT_EQ(s.condition, NodeCondition::kInconsistent);
  EXPECT_THAT(s.condition_reason, HasSubstr("has no valid vke.volcengine.com/gpu-index-container-c annotation"));
}

TEST(NodeState, PodsOfAnotherModeMakeTheNodeSwitching) {
  NodeState s = BuildNodeState(SharedNode("n", 4, 10000), {WholeAlloc("old1", "n", 2), WholeAlloc("old2", "n", 1),
                                                            SharedAlloc("new", "n", {0}, 100, 1024)});
  EXPECT_EQ(s.condition, NodeCondition::kSwitching);
  ASSERT_EQ(s.blockers.size(), 2u);
  EXPECT_EQ(s.blockers[0].pod_key, "ns/old1");
  EXPECT_THAT(s.condition_reason, HasSubstr("switching from nvidia to mgpu: 2 GPU pods of the old mode still run "
                                            "(ns/old1, ns/old2)"));
}

TEST(NodeState, SwitchingReasonNamesTheFirstFewAndCounts) {
  std::vector<Allocation> old;
  for (int i = 0; i < 5; ++i) old.push_back(SharedAlloc("p" + std::to_string(i), "n", {0}, 100, 1024));
  NodeState s = BuildNodeState(WholeNode("n", 8, "nvidia"), old);
  EXPECT_THAT(s.condition_reason, HasSubstr("from mgpu to nvidia: 5 GPU pods"));
  EXPECT_THAT(s.condition_reason, HasSubstr("(ns/p0, ns/p1, ns/p2 and 2 more)"));
}

TEST(NodeState, InvalidLabelWinsOverSwitching) {
  NodeState s = BuildNodeState(WholeNode("n", 8, "foo"), {SharedAlloc("a", "n", {0}, 100, 1024)});
  EXPECT_EQ(s.condition, NodeCondition::kInvalid);
  EXPECT_EQ(s.blockers.size(), 1u);
}

// The packed form victim choice reads (PackedAllocation) books exactly what the allocation does:
// shares, whole cards, several containers on one GPU, init containers and sidecars in phases.
TEST(NodeState, PackedAllocationsBookWhatTheirAllocationsBook) {
  Allocation phased = SharedAlloc("phased", "s", {0}, 300, 2048);
  phased.placement.containers.push_back(ContainerAssignment{.container = "init", .gpu_indices = {0, 1}, .milli_per_gpu = 500,
                                                            .mib_per_gpu = 4096, .init_position = 1});
  phased.placement.containers.push_back(ContainerAssignment{.container = "side", .gpu_indices = {1}, .milli_per_gpu = 100,
                                                            .mib_per_gpu = 1024, .init_position = 2, .sidecar = true});
  Allocation two = SharedAlloc("two", "s", {2}, 200, 1024);
  two.placement.containers.push_back(ContainerAssignment{.container = "d", .gpu_indices = {2}, .milli_per_gpu = 300, .mib_per_gpu = 512});
  two.priority = 7;
  two.terminating = true;
  NodeState node = BuildNodeState(SharedNode("s", 4, 16384), {phased, two, SharedAlloc("whole", "s", {3}, 1000, 0, true)});
  ASSERT_TRUE(node.ready()) << node.condition_reason;
  ASSERT_EQ(node.packed.size(), node.allocations.size());
  for (size_t i = 0; i < node.allocations.size(); ++i) {
    NodeState by_allocation = EmptyUsage(node), by_packed = EmptyUsage(node);
    AddUse(node.allocations[i], &by_allocation);
    AddPackedUse(node, i, &by_packed);
    EXPECT_EQ(by_packed.gpus, by_allocation.gpus) << node.allocations[i].pod_uid;
    EXPECT_EQ(by_packed.used_milli, by_allocation.used_milli);
    EXPECT_EQ(node.packed[i].priority, node.allocations[i].priority);
    EXPECT_EQ(node.packed[i].terminating, node.allocations[i].terminating);
  }
  // UID ranks: phased < two < whole.
  EXPECT_EQ(node.packed[0].uid_rank, 0u);  // allocations are by name: phased, two, whole
  EXPECT_EQ(node.packed[2].uid_rank, 2u);
  NodeState whole = BuildNodeState(WholeNode("w", 8), {WholeAlloc("a", "w", 3)});
  NodeState usage = EmptyUsage(whole);
  AddPackedUse(whole, 0, &usage);
  EXPECT_EQ(usage.whole_used, 3);
}

}  // namespace node_state_test
}  // namespace gpusched::placement
