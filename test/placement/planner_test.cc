#include "gpusched/placement/planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpusched/model/names.h"
#include "test_nodes.h"

namespace gpusched::placement {
namespace planner_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

NodeVerdict Eval(const Pod& pod, const NodeState& node, PlacementOptions options = {}) {
  PodRequest r = AnalyzePod(pod);
  EXPECT_TRUE(r.valid()) << r.invalid_reason;
  Planner planner(options);
  return planner.Evaluate(r, node);
}

std::vector<int> GpusOf(const NodeVerdict& v, size_t container = 0) {
  return v.fits() ? v.placement.containers.at(container).gpu_indices : std::vector<int>{};
}

TEST(Planner, WholeGpuFitsByCount) {
  NodeState node = BuildNodeState(WholeNode("n", 8), {WholeAlloc("a", "n", 6)});
  EXPECT_TRUE(Eval(WholePod(2), node).fits());
  NodeVerdict v = Eval(WholePod(3), node);
  EXPECT_FALSE(v.fits());
  EXPECT_TRUE(v.resolvable());
  EXPECT_EQ(v.reason, "insufficient nvidia.com/gpu: pod needs 3, node has 2 of 8 free");
}

TEST(Planner, FitsAgreesWithEvaluateAndLeavesRefusalsExplained) {
  NodeState whole = BuildNodeState(WholeNode("n", 8), {WholeAlloc("a", "n", 6)});
  NodeState shared = BuildNodeState(SharedNode("s", 2, 16384), {SharedAlloc("x", "s", {0}, 600, 8192), SharedAlloc("y", "s", {1}, 500, 1024)});
  Planner planner(PlacementOptions{});
  std::vector<std::pair<Pod, const NodeState*>> cases = {
      {WholePod(2), &whole}, {WholePod(3), &whole}, {MgpuPod({MgpuC("c", 40, 4096)}), &shared},
      {MgpuPod({MgpuC("c", 60, 4096)}), &shared}, {MgpuPod({MgpuC("c", 50, 16000)}), &shared},
      {MgpuPod({MgpuC("a", 30, 2048), MgpuC("b", 30, 2048)}), &shared}, {MgpuPod({MgpuC("c", 100, std::nullopt)}), &shared},
      {WholePod(1), &shared}};
  for (const auto& [pod, node] : cases) {
    PodRequest r = AnalyzePod(pod);
    ASSERT_TRUE(r.valid()) << r.invalid_reason;
    bool quick = planner.Fits(r, *node);
    NodeVerdict full = planner.Evaluate(r, *node);
    EXPECT_EQ(quick, full.fits());
    if (!full.fits()) {
      EXPECT_FALSE(full.reason.empty());  // Fits did not leave the planner quiet
    }
  }
}

TEST(Planner, WholeGpuLargerThanNodeIsUnresolvable) {
  NodeVerdict v = Eval(WholePod(16), BuildNodeState(WholeNode("n", 8), {}));
  EXPECT_FALSE(v.fits());
  EXPECT_FALSE(v.resolvable());
}

TEST(Planner, CrossModeReasonNamesBoth) {
  NodeVerdict v = Eval(WholePod(1), BuildNodeState(SharedNode("n", 4, 10000), {}));
  EXPECT_EQ(v.reason, "node mode mgpu; pod requests nvidia.com/gpu");
  EXPECT_FALSE(v.resolvable());
  v = Eval(MgpuPod({MgpuC("c", 30, 1024)}), BuildNodeState(WholeNode("n", 8), {}));
  EXPECT_EQ(v.reason, "node mode nvidia; pod requests vke.volcengine.com/mgpu-core");
  v = Eval(WholePod(1), BuildNodeState(WholeNode("n", 8, "nvidia-dra"), {}));
  EXPECT_EQ(v.reason, "node mode nvidia-dra; pod requests nvidia.com/gpu");
}

TEST(Planner, InvalidNodeRefusesWithItsReason) {
  NodeVerdict v = Eval(WholePod(1), BuildNodeState(WholeNode("n", 8, "bogus"), {}));
  EXPECT_FALSE(v.fits());
  EXPECT_THAT(v.reason, HasSubstr("vke.node.gpu.schedule=\"bogus\""));
}

TEST(Planner, SwitchingNodeRefusesNewPodsOfTheNewMode) {
  NodeState node = BuildNodeState(SharedNode("n", 4, 10000), {WholeAlloc("old", "n", 2)});
  NodeVerdict v = Eval(MgpuPod({MgpuC("c", 30, 1024)}), node);
  EXPECT_FALSE(v.fits());
  EXPECT_FALSE(v.resolvable());
  EXPECT_THAT(v.reason, HasSubstr("switching from nvidia to mgpu"));
  EXPECT_THAT(v.reason, HasSubstr("ns/old"));
  // Once the old pod is gone the node serves its new mode.
  EXPECT_TRUE(Eval(MgpuPod({MgpuC("c", 30, 1024)}), BuildNodeState(SharedNode("n", 4, 10000), {})).fits());
}

TEST(Planner, ComputePolicyMustMatchNodeLabel) {
  NodeState node = BuildNodeState(SharedNode("n", 2, 10000, "native-burst-share"), {});
  NodeVerdict v = Eval(MgpuPod({MgpuC("c", 30, 1024)}), node);
  EXPECT_EQ(v.reason, "compute policy vke.volcengine.com/mgpu-compute-policy: pod has fixed-share, node has native-burst-share");
  Node unlabeled = SharedNode("n", 2, 10000);
  unlabeled.compute_policy_label.reset();
  EXPECT_TRUE(Eval(MgpuPod({MgpuC("c", 30, 1024)}), BuildNodeState(unlabeled, {})).fits());
}

TEST(Planner, BinpackPutsPartialOnTheFullestGpuThatFits) {
  NodeState node = BuildNodeState(SharedNode("n", 3, 10000),
                                  {SharedAlloc("a", "n", {1}, 500, 5000), SharedAlloc("b", "n", {2}, 200, 2000)});
  EXPECT_THAT(GpusOf(Eval(MgpuPod({MgpuC("c", 30, 3000)}), node)), ElementsAre(1));
  EXPECT_THAT(GpusOf(Eval(MgpuPod({MgpuC("c", 60, 3000)}), node)), ElementsAre(2));
}

TEST(Planner, SpreadPutsPartialOnTheEmptiestGpu) {
  NodeState node = BuildNodeState(SharedNode("n", 3, 10000),
                                  {SharedAlloc("a", "n", {0}, 500, 5000), SharedAlloc("b", "n", {2}, 200, 2000)});
  PlacementOptions spread{.gpu_policy = Policy::kSpread};
  EXPECT_THAT(GpusOf(Eval(MgpuPod({MgpuC("c", 30, 3000)}), node, spread)), ElementsAre(1));
  Pod pod = MgpuPod({MgpuC("c", 30, 3000)}, {{std::string(names::kGpuPolicyAnnotation), "spread"}});
  EXPECT_THAT(GpusOf(Eval(pod, node)), ElementsAre(1));
}

TEST(Planner, PartialNeedsCoreAndMemoryOnOneGpu) {
  // 60% core free in total and 12 GiB free in total, but never both on one GPU.
  NodeState node = BuildNodeState(SharedNode("n", 2, 10000),
                                  {SharedAlloc("a", "n", {0}, 400, 9000), SharedAlloc("b", "n", {1}, 800, 2000)});
  NodeVerdict v = Eval(MgpuPod({MgpuC("c", 50, 4000)}), node);
  EXPECT_FALSE(v.fits());
  EXPECT_TRUE(v.resolvable());
  EXPECT_THAT(v.reason, HasSubstr("container c needs 50% core and 4000 MiB on one GPU"));
  EXPECT_THAT(v.reason, HasSubstr("GPU0 60% core/1000 MiB, GPU1 20% core/8000 MiB"));
}

TEST(Planner, NodeTotalsAreCheckedFirst) {
  NodeState node = BuildNodeState(SharedNode("n", 1, 10000), {SharedAlloc("a", "n", {0}, 900, 1000)});
  NodeVerdict v = Eval(MgpuPod({MgpuC("c", 20, 1000)}), node);
  EXPECT_EQ(v.reason, "insufficient mGPU: pod needs 20% core and 1000 MiB, node has 10% core and 9000 MiB free");
}

TEST(Planner, RejectsSeventeenthInstance) {
  std::vector<Allocation> sixteen;
  for (int i = 0; i < 16; ++i) sixteen.push_back(SharedAlloc("p" + std::to_string(i), "n", {0}, 10, 256));
  NodeState node = BuildNodeState(SharedNode("n", 1, 80000), sixteen);
  NodeVerdict v = Eval(MgpuPod({MgpuC("c", 1, 256)}), node);
  EXPECT_FALSE(v.fits());
  EXPECT_THAT(v.reason, HasSubstr("GPU0 16/16 instances"));
  sixteen.pop_back();
  EXPECT_TRUE(Eval(MgpuPod({MgpuC("c", 1, 256)}), BuildNodeState(SharedNode("n", 1, 80000), sixteen)).fits());
}

TEST(Planner, WholeCardTakesIdleGpusExclusively) {
  NodeState node = BuildNodeState(SharedNode("n", 5, 10000),
                                  {SharedAlloc("a", "n", {0}, 10, 256), SharedAlloc("b", "n", {4}, 10, 256)});
  NodeVerdict v = Eval(MgpuPod({MgpuC("c", 200, std::nullopt)}), node);
  ASSERT_TRUE(v.fits());
  EXPECT_THAT(GpusOf(v), ElementsAre(1, 2));
  EXPECT_TRUE(v.placement.containers[0].exclusive);
  EXPECT_EQ(v.placement.containers[0].milli_per_gpu, 1000);
  // A GPU with one tiny instance is not idle.
  v = Eval(MgpuPod({MgpuC("c", 400, std::nullopt)}), node);
  EXPECT_FALSE(v.fits());
  EXPECT_THAT(v.reason, HasSubstr("container c needs 4 idle GPUs; node has 3 idle"));
  EXPECT_TRUE(v.resolvable());
  v = Eval(MgpuPod({MgpuC("c", 600, std::nullopt)}), BuildNodeState(SharedNode("n", 5, 10000), {}));
  EXPECT_FALSE(v.fits());
  EXPECT_FALSE(v.resolvable());  // five GPUs can never give six
}

TEST(Planner, WholeCardGpuTakesNoSharers) {
  NodeState node = BuildNodeState(SharedNode("n", 1, 10000), {SharedAlloc("a", "n", {0}, 1000, 10000, true)});
  NodeVerdict v = Eval(MgpuPod({MgpuC("c", 1, 256)}), node);
  EXPECT_FALSE(v.fits());
}

TEST(Planner, MultiCardContainerUsesDistinctGpus) {
  AnnotationMap a{{std::string(names::kContainerMultipleGpu), "3"},
                  {std::string(names::kComputePolicy), "native-burst-share"}};
  NodeState node = BuildNodeState(SharedNode("n", 4, 10000, "native-burst-share"),
                                  {SharedAlloc("x", "n", {2}, 900, 1000)});
  NodeVerdict v = Eval(MgpuPod({MgpuC("c", 150, 6144)}, a), node);
  ASSERT_TRUE(v.fits()) << v.reason;
  EXPECT_THAT(GpusOf(v), ElementsAre(0, 1, 3));
  EXPECT_EQ(v.placement.containers[0].milli_per_gpu, 500);
  EXPECT_EQ(v.placement.containers[0].mib_per_gpu, 2048);
  v = Eval(MgpuPod({MgpuC("c", 200, 8192)}, {{std::string(names::kContainerMultipleGpu), "4"},
                                             {std::string(names::kComputePolicy), "native-burst-share"}}),
           node);
  EXPECT_FALSE(v.fits());
  EXPECT_TRUE(v.resolvable());
  EXPECT_THAT(v.reason, HasSubstr("container c needs 4 GPUs with 50% core and 2048 MiB free each, 3 qualify"));
}

TEST(Planner, MultiContainerPodsFitContainerByContainer) {
  NodeState node = BuildNodeState(SharedNode("n", 2, 10000), {});
  NodeVerdict v = Eval(MgpuPod({MgpuC("a", 60, 6000), MgpuC("b", 60, 6000), MgpuC("c", 40, 4000)}), node);
  ASSERT_TRUE(v.fits()) << v.reason;
  ASSERT_EQ(v.placement.containers.size(), 3u);
  EXPECT_NE(GpusOf(v, 0), GpusOf(v, 1));  // two 60% containers cannot share a GPU
  EXPECT_EQ(GpusOf(v, 2), GpusOf(v, 0));  // binpack fills the first GPU up
}

TEST(Planner, MultiContainerSearchBacktracksPastTheGreedyChoice) {
  // GPU0: 99% core, 1500 MiB free. GPU1: 30% core, 9000 MiB free. Binpack puts "a" (30%, 1000 MiB)
  // on GPU0, where it is tightest overall; then "b" (80%) fits nowhere. The search undoes that.
  NodeState node = BuildNodeState(SharedNode("n", 2, 10000),
                                  {SharedAlloc("x", "n", {0}, 10, 8500), SharedAlloc("y", "n", {1}, 700, 1000)});
  EXPECT_THAT(GpusOf(Eval(MgpuPod({MgpuC("a", 30, 1000)}), node)), ElementsAre(0));
  NodeVerdict v = Eval(MgpuPod({MgpuC("a", 30, 1000), MgpuC("b", 80, 1000)}), node);
  ASSERT_TRUE(v.fits()) << v.reason;
  EXPECT_THAT(GpusOf(v, 0), ElementsAre(1));
  EXPECT_THAT(GpusOf(v, 1), ElementsAre(0));
}

TEST(Planner, ContainersThatFitAloneButNotTogetherSayWhy) {
  NodeState node = BuildNodeState(SharedNode("n", 2, 10000), {SharedAlloc("x", "n", {0}, 500, 1000)});
  // GPU0 has 50% free, GPU1 100%: three 35% containers fit, a fourth does not, though each fits alone
  // and 140% <= 150% in total.
  NodeVerdict v =
      Eval(MgpuPod({MgpuC("a", 35, 1000), MgpuC("b", 35, 1000), MgpuC("c", 35, 1000), MgpuC("d", 35, 1000)}), node);
  EXPECT_FALSE(v.fits());
  EXPECT_THAT(v.reason, HasSubstr("fit one by one but not together"));
}

TEST(Planner, SearchBudgetIsReported) {
  // 16 GPUs with 15% free each take one 10% container each; a 17th container never fits, but the
  // search would try every permutation. The budget ends it and the reason says so.
  Node n = SharedNode("n", 16, 10000);
  std::vector<Allocation> used;
  for (int g = 0; g < 16; ++g) used.push_back(SharedAlloc("u" + std::to_string(g), "n", {g}, 850, 100));
  std::vector<Container> cs;
  for (int i = 0; i < 17; ++i) cs.push_back(MgpuC("c" + std::to_string(i), 10, 256));
  NodeVerdict v = Eval(MgpuPod(cs), BuildNodeState(n, used), PlacementOptions{.search_budget = 200});
  EXPECT_FALSE(v.fits());
  EXPECT_THAT(v.reason, HasSubstr("GPU search stopped after 200 steps (search budget)"));
  cs.pop_back();
  EXPECT_TRUE(Eval(MgpuPod(cs), BuildNodeState(n, used), PlacementOptions{.search_budget = 200}).fits());
}

TEST(Planner, HeterogeneousGpusRespectEachGpusMemory) {
  Node n = SharedNode("n", 0, 0);
  n.published_gpus = std::vector<GpuDevice>{{.index = 0, .memory_mib = 81920}, {.index = 1, .memory_mib = 15360}};
  n.allocatable = {.mgpu_core_percent = 200, .mgpu_memory_mib = 97280};
  NodeState node = BuildNodeState(n, {});
  EXPECT_THAT(GpusOf(Eval(MgpuPod({MgpuC("c", 10, 20000)}), node)), ElementsAre(0));
  // Binpack prefers the small card when both fit.
  EXPECT_THAT(GpusOf(Eval(MgpuPod({MgpuC("c", 10, 8000)}), node)), ElementsAre(1));
  NodeVerdict v = Eval(MgpuPod({MgpuC("c", 10, 90000)}), node);
  EXPECT_FALSE(v.fits());
}

TEST(Planner, UnhealthyGpuTakesNothingNew) {
  Node n = SharedNode("n", 0, 0);
  n.published_gpus = std::vector<GpuDevice>{{.index = 0, .memory_mib = 10000, .healthy = false},
                                            {.index = 1, .memory_mib = 10000}};
  n.allocatable = {.mgpu_core_percent = 100, .mgpu_memory_mib = 10000};
  NodeState node = BuildNodeState(n, {SharedAlloc("x", "n", {1}, 800, 1000)});
  NodeVerdict v = Eval(MgpuPod({MgpuC("c", 30, 1000)}), node);
  EXPECT_FALSE(v.fits());
  EXPECT_THAT(v.reason, HasSubstr("insufficient mGPU"));
  v = Eval(MgpuPod({MgpuC("c", 20, 1000)}), node);
  ASSERT_TRUE(v.fits());
  EXPECT_THAT(GpusOf(v), ElementsAre(1));
}

TEST(Planner, AMigEnabledGpuTakesNoShareAndNoWholeCard) {
  Node n = SharedNode("n", 0, 0);
  n.published_gpus = std::vector<GpuDevice>{{.index = 0, .memory_mib = 10000, .mig_enabled = true},
                                            {.index = 1, .memory_mib = 10000}};
  n.allocatable = {.mgpu_core_percent = 100, .mgpu_memory_mib = 10000};  // the device plugin leaves GPU 0 out
  NodeState node = BuildNodeState(n, {SharedAlloc("x", "n", {1}, 800, 1000)});
  ASSERT_TRUE(node.ready()) << node.condition_reason;
  EXPECT_EQ(node.capacity_milli, 1000);
  EXPECT_FALSE(Eval(MgpuPod({MgpuC("c", 30, 1000)}), node).fits());
  NodeVerdict v = Eval(MgpuPod({MgpuC("c", 20, 1000)}), node);
  ASSERT_TRUE(v.fits());
  EXPECT_THAT(GpusOf(v), ElementsAre(1));

  n.allocatable = {.mgpu_core_percent = 200, .mgpu_memory_mib = 20000};  // counted the MIG GPU as a share target
  EXPECT_THAT(BuildNodeState(n, {}).condition_reason, HasSubstr("does not match 1 healthy GPUs without MIG"));
}

TEST(Planner, MultiGpuSetsStayInsideOneNumaNode) {
  Node n = SharedNode("n", 0, 0);
  n.published_gpus = std::vector<GpuDevice>{
      {.index = 0, .memory_mib = 10000, .numa_node = 0}, {.index = 1, .memory_mib = 10000, .numa_node = 0},
      {.index = 2, .memory_mib = 10000, .numa_node = 1}, {.index = 3, .memory_mib = 10000, .numa_node = 1},
      {.index = 4, .memory_mib = 10000, .numa_node = 1}};
  n.allocatable = {.mgpu_core_percent = 500, .mgpu_memory_mib = 50000};
  NodeState node = BuildNodeState(n, {});
  // Binpack: two whole cards from the NUMA node with fewer idle GPUs, keeping the 3-GPU set whole.
  EXPECT_THAT(GpusOf(Eval(MgpuPod({MgpuC("c", 200, std::nullopt)}), node)), ElementsAre(0, 1));
  // Three cards only fit NUMA node 1 without crossing.
  EXPECT_THAT(GpusOf(Eval(MgpuPod({MgpuC("c", 300, std::nullopt)}), node)), ElementsAre(2, 3, 4));
  // Four cards must cross NUMA nodes.
  EXPECT_EQ(GpusOf(Eval(MgpuPod({MgpuC("c", 400, std::nullopt)}), node)).size(), 4u);
}

// Issue "Real cluster input" §5: a regular init container runs before the app containers, so
// Kubernetes counts the larger of the two, not their sum.
TEST(Planner, InitContainerAndAppContainerShareAnIdleGpuInTurn) {
  Pod pod = MgpuPod({MgpuC("app", 60, 6144)});
  pod.init_containers = {MgpuC("init", 60, 6144)};
  NodeState node = BuildNodeState(SharedNode("n", 1, 10000), {});
  NodeVerdict v = Eval(pod, node);
  ASSERT_TRUE(v.fits()) << v.reason;
  EXPECT_THAT(GpusOf(v, 0), ElementsAre(0));
  EXPECT_THAT(GpusOf(v, 1), ElementsAre(0));
  EXPECT_TRUE(v.placement.containers[0].transient());
  // Booked, the pod holds 60% of the GPU, not 120%.
  Allocation a{.pod_uid = "new", .pod_namespace = "ns", .pod_name = "new", .node_name = "n", .mode = NodeMode::kMgpu,
               .placement = v.placement};
  NodeState booked = BuildNodeState(SharedNode("n", 1, 10000), {a});
  EXPECT_TRUE(booked.ready()) << booked.condition_reason;
  EXPECT_EQ(booked.gpus[0].used_milli, 600);
  EXPECT_EQ(booked.gpus[0].used_mib, 6144);
  EXPECT_EQ(booked.gpus[0].instances, 1);
}

// A sidecar declared before an init container runs beside it: 30% + 60% in the init phase.
TEST(Planner, SidecarsBeforeAnInitContainerRunBesideIt) {
  Container sidecar = MgpuC("proxy", 30, 1024);
  sidecar.sidecar = true;
  Pod pod = MgpuPod({MgpuC("app", 50, 2048)});
  pod.init_containers = {sidecar, MgpuC("init", 60, 2048)};
  NodeVerdict v = Eval(pod, BuildNodeState(SharedNode("n", 1, 10000), {}));
  ASSERT_TRUE(v.fits()) << v.reason;
  Allocation a{.pod_uid = "new", .pod_namespace = "ns", .pod_name = "new", .node_name = "n", .mode = NodeMode::kMgpu,
               .placement = v.placement};
  EXPECT_EQ(BuildNodeState(SharedNode("n", 1, 10000), {a}).gpus[0].used_milli, 900);
  // With 20% taken by another pod the init phase (90%) no longer fits one GPU.
  NodeState busy = BuildNodeState(SharedNode("n", 1, 10000), {SharedAlloc("other", "n", {0}, 200, 1024)});
  EXPECT_FALSE(Eval(pod, busy).fits());
  // Declared after the init container, the sidecar is not running yet: 80% and 60%.
  pod.init_containers = {MgpuC("init", 60, 2048), sidecar};
  EXPECT_TRUE(Eval(pod, busy).fits());
}

TEST(Planner, InitContainersGoWhereThePodAlreadyHoldsTheMost) {
  // GPU0 is half used by another pod, GPU1 idle; the app takes GPU0 (binpack). The init
  // container fits either; on GPU0 the pod's booking does not grow.
  NodeState node = BuildNodeState(SharedNode("n", 2, 10000), {SharedAlloc("other", "n", {0}, 500, 2048)});
  Pod pod = MgpuPod({MgpuC("app", 40, 2048)});
  pod.init_containers = {MgpuC("init", 30, 1024)};
  NodeVerdict v = Eval(pod, node);
  ASSERT_TRUE(v.fits()) << v.reason;
  EXPECT_THAT(GpusOf(v, 1), ElementsAre(0));
  EXPECT_THAT(GpusOf(v, 0), ElementsAre(0));
}

}  // namespace planner_test
}  // namespace gpusched::placement
