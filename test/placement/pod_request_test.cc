#include "gpusched/placement/pod_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpusched/model/names.h"

namespace gpusched::placement {
namespace pod_request_test {

using ::testing::HasSubstr;

Container MgpuContainer(std::string name, std::optional<int64_t> core, std::optional<int64_t> mem) {
  Container c{.name = std::move(name)};
  c.limits.mgpu_core_percent = core;
  c.limits.mgpu_memory_mib = mem;
  c.requests = c.limits;
  return c;
}

Container GpuContainer(std::string name, int64_t n) {
  Container c{.name = std::move(name)};
  c.limits.nvidia_gpus = n;
  return c;
}

Pod PodWith(std::vector<Container> containers, AnnotationMap annotations = {}) {
  return Pod{.uid = "u", .namespace_name = "ns", .name = "p", .containers = std::move(containers),
             .annotations = std::move(annotations)};
}

PodRequest Analyze(std::optional<int64_t> core, std::optional<int64_t> mem, AnnotationMap a = {}) {
  return AnalyzePod(PodWith({MgpuContainer("c", core, mem)}, std::move(a)));
}

AnnotationMap MultiGpu(std::string cards, std::string policy = "native-burst-share") {
  return {{std::string(names::kContainerMultipleGpu), std::move(cards)},
          {std::string(names::kComputePolicy), std::move(policy)}};
}

TEST(PodRequest, PodWithoutGpuAsksForNothing) {
  PodRequest r = AnalyzePod(PodWith({Container{.name = "web"}}));
  EXPECT_EQ(r.kind, RequestKind::kNone);
  EXPECT_TRUE(r.valid());
}

TEST(PodRequest, ZeroGpuRequestIsNoRequest) {
  EXPECT_EQ(AnalyzePod(PodWith({GpuContainer("c", 0)})).kind, RequestKind::kNone);
}

TEST(PodRequest, WholeGpusSumOverContainersAndTakeInitMax) {
  Pod pod = PodWith({GpuContainer("a", 2), GpuContainer("b", 1)});
  pod.init_containers = {GpuContainer("init", 4)};
  PodRequest r = AnalyzePod(pod);
  EXPECT_EQ(r.kind, RequestKind::kWholeGpu);
  EXPECT_EQ(r.whole_gpus, 4);
  pod.init_containers = {GpuContainer("init", 1)};
  EXPECT_EQ(AnalyzePod(pod).whole_gpus, 3);
  Container sidecar = GpuContainer("side", 1);
  sidecar.sidecar = true;
  pod.init_containers = {sidecar};
  EXPECT_EQ(AnalyzePod(pod).whole_gpus, 4);
}

// Upstream's own cases (k8s.io/component-helpers/resource/helpers_test.go, TestPodResourceRequests
// "restartable init container", "multiple restartable init containers", "multiple restartable
// and regular init containers", "restartable-init, init and regular"), as nvidia.com/gpu.
TEST(PodRequest, WholeGpusAggregateSidecarsAsKubernetesDoes) {
  auto sidecar = [](std::string name, int64_t n) {
    Container c = GpuContainer(std::move(name), n);
    c.sidecar = true;
    return c;
  };
  struct Case {
    std::vector<Container> init;
    int64_t app;
    int64_t want;
  };
  std::vector<Case> cases = {
      {{sidecar("sc", 1)}, 1, 2},
      {{GpuContainer("init", 5), sidecar("sc1", 1), sidecar("sc2", 2), sidecar("sc3", 3)}, 1, 7},
      {{GpuContainer("init1", 5), sidecar("sc1", 1), sidecar("sc2", 2), GpuContainer("init2", 5), sidecar("sc3", 3)}, 1, 8},
      {{sidecar("sc", 10), GpuContainer("init", 200)}, 100, 210},
      // Issue "Real cluster input" §5: a sidecar before an init container runs while it runs.
      {{sidecar("sc", 1), GpuContainer("init", 2)}, 0, 3},
      {{GpuContainer("init", 2), sidecar("sc", 1)}, 0, 2},
  };
  for (const Case& c : cases) {
    Pod pod = PodWith({GpuContainer("app", c.app)});
    pod.init_containers = c.init;
    EXPECT_EQ(AnalyzePod(pod).whole_gpus, c.want) << c.init.size() << " init containers, app " << c.app;
  }
}

// isFullCardGPUPod (VKE utils.go): whole cards only, no container-multiple-gpu: exempt from the
// compute-policy match.
TEST(PodRequest, WholeCardPodsTakeAnyComputePolicy) {
  EXPECT_TRUE(Analyze(100, std::nullopt).any_compute_policy);
  EXPECT_TRUE(Analyze(300, std::nullopt).any_compute_policy);
  EXPECT_FALSE(Analyze(30, 1024).any_compute_policy);
  EXPECT_FALSE(AnalyzePod(PodWith({MgpuContainer("a", 100, std::nullopt), MgpuContainer("b", 30, 1024)})).any_compute_policy);
  // With container-multiple-gpu the multi-card rule comes first (checkNodeMGPUSharingPredicate).
  EXPECT_FALSE(Analyze(200, std::nullopt, MultiGpu("2")).any_compute_policy);
}

// validateContainerMultipleMGPUPod: core = 100 * k with entry k and no memory takes k idle GPUs.
TEST(PodRequest, MultiCardWholeCards) {
  PodRequest r = Analyze(200, std::nullopt, MultiGpu("2"));
  ASSERT_TRUE(r.valid()) << r.invalid_reason;
  EXPECT_TRUE(r.containers[0].whole_card);
  EXPECT_EQ(r.containers[0].cards, 2);
  EXPECT_THAT(Analyze(200, std::nullopt, MultiGpu("2", "fixed-share")).invalid_reason,
              HasSubstr("needs compute policy native-burst-share"));
  EXPECT_THAT(Analyze(200, 8192, MultiGpu("2")).invalid_reason, HasSubstr("whole-card request and must not set"));
}

// validateContainerMultipleMGPUPod: an entry of 0 marks a container without GPUs.
TEST(PodRequest, MultiCardEntryZeroIsAContainerWithoutGpus) {
  Pod pod = PodWith({MgpuContainer("a", 100, 2048), Container{.name = "log"}, MgpuContainer("b", 50, 1024)},
                    MultiGpu("2,0,1"));
  PodRequest r = AnalyzePod(pod);
  ASSERT_TRUE(r.valid()) << r.invalid_reason;
  ASSERT_EQ(r.containers.size(), 2u);
  EXPECT_EQ(r.containers[0].container, "a");
  EXPECT_EQ(r.containers[1].container, "b");
  pod.containers[1] = MgpuContainer("log", 10, 1024);
  EXPECT_THAT(AnalyzePod(pod).invalid_reason, HasSubstr("container log: annotation vke.volcengine.com/container-multiple-gpu "
                                                        "entry 0 marks a container without GPUs"));
  pod.containers[1] = Container{.name = "log"};
  pod.annotations[std::string(names::kContainerMultipleGpu)] = "2,1,1";
  EXPECT_THAT(AnalyzePod(pod).invalid_reason, HasSubstr("container log: annotation vke.volcengine.com/container-multiple-gpu "
                                                        "gives it 1 GPUs but it sets no vke.volcengine.com/mgpu-core"));
}

// validateContainerMultipleMGPUPod: mgpu-memory / count >= 1024 MiB, whatever the count.
TEST(PodRequest, MultiCardNeeds1024MiBPerCardEvenForOne) {
  EXPECT_THAT(Analyze(30, 512, MultiGpu("1")).invalid_reason, HasSubstr("in [1024, 81920] MiB (got 512/1)"));
  EXPECT_TRUE(Analyze(30, 1024, MultiGpu("1")).valid());
}

TEST(PodRequest, AnUnreadablePodIsRefusedNamingTheField) {
  Pod pod = PodWith({GpuContainer("c", 1)});
  pod.spec_error = "Pod.spec.containers[0].resources.limits[\"nvidia.com/gpu\"]: invalid quantity \"1500m\"";
  PodRequest r = AnalyzePod(pod);
  EXPECT_NE(r.kind, RequestKind::kNone);
  EXPECT_THAT(r.invalid_reason, HasSubstr("pod cannot be read: Pod.spec.containers[0]"));
}

TEST(PodRequest, QuantityNoteShowsSpellingNumberAndUnit) {
  Container c = MgpuContainer("main", 50, 1073741824);
  c.limits.spelling["vke.volcengine.com/mgpu-memory"] = "1Gi";
  PodRequest r = AnalyzePod(PodWith({c}));
  EXPECT_EQ(r.quantity_note, "container main: vke.volcengine.com/mgpu-memory \"1Gi\" = 1073741824 MiB");
  EXPECT_EQ(Analyze(30, 1024).quantity_note, "");
}

TEST(PodRequest, RejectsMixedWholeAndMgpu) {
  PodRequest r = AnalyzePod(PodWith({GpuContainer("a", 1), MgpuContainer("b", 30, 1024)}));
  EXPECT_FALSE(r.valid());
  EXPECT_THAT(r.invalid_reason, HasSubstr("mixes nvidia.com/gpu and vke.volcengine.com/mgpu-*"));
}

TEST(PodRequest, RequestsMustEqualLimits) {
  Container c = MgpuContainer("c", 30, 1024);
  c.requests.mgpu_core_percent = 20;
  PodRequest r = AnalyzePod(PodWith({c}));
  EXPECT_THAT(r.invalid_reason, HasSubstr("container c: vke.volcengine.com/mgpu-core requests 20 != limits 30"));
}

TEST(PodRequest, RequestsAloneAreTheValue) {
  Container c{.name = "c"};
  c.requests.mgpu_core_percent = 30;
  c.requests.mgpu_memory_mib = 1024;
  PodRequest r = AnalyzePod(PodWith({c}));
  ASSERT_TRUE(r.valid()) << r.invalid_reason;
  EXPECT_EQ(r.containers[0].milli_per_card, 300);
}

TEST(PodRequest, PartialGpuInUnits) {
  PodRequest r = Analyze(30, 4096);
  ASSERT_TRUE(r.valid());
  ASSERT_EQ(r.containers.size(), 1u);
  EXPECT_EQ(r.containers[0], (MgpuContainerRequest{.container = "c", .core_percent = 30, .memory_mib = 4096, .cards = 1,
                                                   .whole_card = false, .milli_per_card = 300, .mib_per_card = 4096}));
  EXPECT_EQ(r.compute_policy, "fixed-share");
}

TEST(PodRequest, PartialMemoryMinimumIs256MiB) {
  EXPECT_TRUE(Analyze(30, 256).valid());
  PodRequest r = Analyze(30, 255);
  EXPECT_THAT(r.invalid_reason, HasSubstr("needs vke.volcengine.com/mgpu-memory >= 256 MiB, got 255"));
  EXPECT_THAT(Analyze(30, std::nullopt).invalid_reason, HasSubstr(">= 256 MiB, got 0"));
}

TEST(PodRequest, MemoryWithoutCoreIsRejected) {
  EXPECT_THAT(Analyze(std::nullopt, 4096).invalid_reason,
              HasSubstr("vke.volcengine.com/mgpu-memory 4096 MiB without vke.volcengine.com/mgpu-core"));
}

TEST(PodRequest, WholeCardIsMultipleOf100WithoutMemory) {
  PodRequest r = Analyze(200, std::nullopt);
  ASSERT_TRUE(r.valid());
  EXPECT_TRUE(r.containers[0].whole_card);
  EXPECT_EQ(r.containers[0].cards, 2);
  EXPECT_EQ(r.containers[0].milli_per_card, 1000);
  r = Analyze(100, std::nullopt);
  EXPECT_TRUE(r.containers[0].whole_card);
  EXPECT_EQ(r.containers[0].cards, 1);
}

TEST(PodRequest, WholeCardMustNotSetMemory) {
  EXPECT_THAT(Analyze(200, 4096).invalid_reason,
              HasSubstr("vke.volcengine.com/mgpu-core 200 is a whole-card request and must not set "
                        "vke.volcengine.com/mgpu-memory (4096 MiB)"));
}

// validateNormalMGPUPod (VKE admission): core a multiple of 100 with mgpu-memory set is refused,
// not taken as a partial instance; "0" counts as set.
TEST(PodRequest, CoreOf100WithMemoryIsRefused) {
  EXPECT_THAT(Analyze(100, 2048).invalid_reason,
              HasSubstr("vke.volcengine.com/mgpu-core 100 is a whole-card request and must not set "
                        "vke.volcengine.com/mgpu-memory (2048 MiB)"));
  EXPECT_FALSE(Analyze(100, 0).valid());
}

TEST(PodRequest, CoreAbove100MustBeMultipleOf100) {
  EXPECT_THAT(Analyze(150, std::nullopt).invalid_reason,
              HasSubstr("vke.volcengine.com/mgpu-core 150 above 100 must be a multiple of 100"));
  EXPECT_THAT(Analyze(101, 1024).invalid_reason, HasSubstr("101 above 100 must be a multiple of 100"));
  EXPECT_TRUE(Analyze(99, 1024).valid());
}

TEST(PodRequest, ComputePolicyDefaultsAndMustBeKnown) {
  EXPECT_EQ(Analyze(30, 1024, {{std::string(names::kComputePolicy), "guaranteed-burst-share"}}).compute_policy,
            "guaranteed-burst-share");
  PodRequest r = Analyze(30, 1024, {{std::string(names::kComputePolicy), "turbo"}});
  EXPECT_TRUE(r.valid());
  EXPECT_FALSE(r.schedulable());
  EXPECT_THAT(r.unplaceable_reason, HasSubstr("vke.volcengine.com/mgpu-compute-policy=\"turbo\""));
}

TEST(PodRequest, MultipleGpuSplitsEvenly) {
  PodRequest r = Analyze(100, 8192, MultiGpu("2"));
  ASSERT_TRUE(r.valid()) << r.invalid_reason;
  EXPECT_EQ(r.containers[0].cards, 2);
  EXPECT_EQ(r.containers[0].milli_per_card, 500);
  EXPECT_EQ(r.containers[0].mib_per_card, 4096);
  EXPECT_FALSE(r.containers[0].whole_card);
}

TEST(PodRequest, MultipleGpuNeedsNativeBurstShare) {
  EXPECT_THAT(Analyze(100, 4096, MultiGpu("2", "fixed-share")).invalid_reason,
              HasSubstr("vke.volcengine.com/container-multiple-gpu needs compute policy native-burst-share, pod has "
                        "fixed-share"));
  EXPECT_THAT(
      AnalyzePod(PodWith({MgpuContainer("c", 100, 4096)}, {{std::string(names::kContainerMultipleGpu), "2"}}))
          .invalid_reason,
      HasSubstr("needs compute policy native-burst-share, pod has fixed-share"));
}

TEST(PodRequest, MultipleGpuCardsBetween0And8) {
  EXPECT_TRUE(Analyze(400, 8192, MultiGpu("8")).valid());
  EXPECT_THAT(Analyze(450, 9216, MultiGpu("9")).invalid_reason, HasSubstr("9 GPUs per container is outside 0-8"));
  EXPECT_THAT(Analyze(30, 1024, MultiGpu("-1")).invalid_reason, HasSubstr("-1 GPUs per container is outside 0-8"));
}

TEST(PodRequest, MultipleGpuPerCardCoreIsIntegerAtMost100) {
  EXPECT_THAT(Analyze(201, 4096, MultiGpu("2")).invalid_reason,
              HasSubstr("over 2 GPUs must give an integer per-GPU core <= 100 (got 201/2)"));
  EXPECT_THAT(Analyze(300, 4096, MultiGpu("2")).invalid_reason, HasSubstr("per-GPU core <= 100 (got 300/2)"));
  EXPECT_TRUE(Analyze(2, 2048, MultiGpu("2")).valid());
}

TEST(PodRequest, MultipleGpuPerCardMemoryBetween1024And81920) {
  EXPECT_TRUE(Analyze(100, 2048, MultiGpu("2")).valid());
  EXPECT_THAT(Analyze(100, 2046, MultiGpu("2")).invalid_reason,
              HasSubstr("integer per-GPU memory in [1024, 81920] MiB (got 2046/2)"));
  EXPECT_THAT(Analyze(100, 2047, MultiGpu("2")).invalid_reason, HasSubstr("(got 2047/2)"));
  EXPECT_TRUE(Analyze(100, 163840, MultiGpu("2")).valid());
  EXPECT_THAT(Analyze(100, 163842, MultiGpu("2")).invalid_reason, HasSubstr("(got 163842/2)"));
}

TEST(PodRequest, MultipleGpuOneEntryPerContainer) {
  Pod pod = PodWith({MgpuContainer("a", 100, 2048), MgpuContainer("b", 30, 1024), MgpuContainer("c", 150, 3072)},
                    MultiGpu("2,1,3"));
  PodRequest r = AnalyzePod(pod);
  ASSERT_TRUE(r.valid()) << r.invalid_reason;
  ASSERT_EQ(r.containers.size(), 3u);
  EXPECT_EQ(r.containers[0].cards, 2);
  EXPECT_EQ(r.containers[1].cards, 1);
  EXPECT_EQ(r.containers[2].cards, 3);
  pod.annotations[std::string(names::kContainerMultipleGpu)] = "2,1";
  EXPECT_THAT(AnalyzePod(pod).invalid_reason, HasSubstr("has 2 entries, pod has 3 containers"));
  pod.annotations[std::string(names::kContainerMultipleGpu)] = "2,x,1";
  EXPECT_THAT(AnalyzePod(pod).invalid_reason, HasSubstr("entry \"x\" is not an integer"));
}

TEST(PodRequest, ListsEveryViolatedRule) {
  Pod pod = PodWith({MgpuContainer("a", 150, std::nullopt), MgpuContainer("b", 30, 100)});
  PodRequest r = AnalyzePod(pod);
  EXPECT_THAT(r.invalid_reason, HasSubstr("container a: vke.volcengine.com/mgpu-core 150 above 100"));
  EXPECT_THAT(r.invalid_reason, HasSubstr("container b: partial GPU"));
}

TEST(PodRequest, PolicyOverridesByAnnotation) {
  PodRequest r = Analyze(30, 1024, {{std::string(names::kNodePolicyAnnotation), "spread"},
                                    {std::string(names::kGpuPolicyAnnotation), "binpack"}});
  EXPECT_EQ(r.node_policy, "spread");
  EXPECT_EQ(r.gpu_policy, Policy::kBinpack);
  EXPECT_EQ(Analyze(30, 1024, {{std::string(names::kNodePolicyAnnotation), "softmix"}}).node_policy, "softmix");
  EXPECT_THAT(Analyze(30, 1024, {{std::string(names::kNodePolicyAnnotation), "tetris"}}).RefusalReason(),
              HasSubstr("gpusched.io/node-policy=\"tetris\": want one of random, dotprod"));
  EXPECT_THAT(Analyze(30, 1024, {{std::string(names::kGpuPolicyAnnotation), "fgd"}}).RefusalReason(),
              HasSubstr("gpusched.io/gpu-policy=\"fgd\": want binpack or spread"));
  // A wrong preference does not break the contract: once bound, the pod's booking stands.
  EXPECT_TRUE(Analyze(30, 1024, {{std::string(names::kNodePolicyAnnotation), "Binpack"}}).valid());
}

TEST(PodRequest, ClaimsOnlyPodsAreOfTheDraKind) {
  // Until claims are resolved to device classes, a claim may be a NIC as well as a GPU: the DRA
  // planner judges that; the kind only says where the devices come from.
  Pod pod = PodWith({Container{.name = "c"}});
  pod.resource_claims = {PodClaimRef{.name = "rdma-nic", .claim_name = "rdma-nic"}};
  PodRequest r = AnalyzePod(pod);
  EXPECT_EQ(r.kind, RequestKind::kDra);
  EXPECT_TRUE(r.claims_only());
  EXPECT_FALSE(r.device_plugin());
}

// One answer for every verb to "does gpusched judge this pod?" (filter, prioritize, bind,
// preempt, explain, defrag and nominations all pass the others through).
TEST(PodRequest, AsksGpuForGpusOfAKindOrClaimsAndClaimsOnlyForClaimsAlone) {
  Pod none = PodWith({Container{.name = "web"}});
  Pod claims = none;
  claims.resource_claims = {PodClaimRef{.name = "gpus", .claim_name = "pair"}};
  Pod whole = PodWith({GpuContainer("c", 1)});
  Pod both = whole;
  both.resource_claims = claims.resource_claims;
  Pod shares = PodWith({MgpuContainer("c", 30, 1024)});
  EXPECT_FALSE(AnalyzePod(none).asks_gpu());
  EXPECT_FALSE(AnalyzePod(none).claims_only());
  EXPECT_TRUE(AnalyzePod(claims).asks_gpu());
  EXPECT_TRUE(AnalyzePod(claims).claims_only());
  EXPECT_TRUE(AnalyzePod(whole).asks_gpu());
  EXPECT_FALSE(AnalyzePod(whole).claims_only());
  EXPECT_TRUE(AnalyzePod(both).asks_gpu());
  EXPECT_FALSE(AnalyzePod(both).claims_only());
  EXPECT_TRUE(AnalyzePod(shares).asks_gpu());
  EXPECT_FALSE(AnalyzePod(PodWith({GpuContainer("c", 0)})).asks_gpu());
  // Asking a device plugin: whole GPUs or shares, with or without claims beside them.
  EXPECT_TRUE(AnalyzePod(whole).device_plugin());
  EXPECT_TRUE(AnalyzePod(both).device_plugin());
  EXPECT_TRUE(AnalyzePod(shares).device_plugin());
  EXPECT_FALSE(AnalyzePod(claims).device_plugin());
  // nvidia.com/gpu: 0 asks for nothing: claims beside it make a DRA pod.
  Pod zero_and_claims = PodWith({GpuContainer("c", 0)});
  zero_and_claims.resource_claims = claims.resource_claims;
  EXPECT_TRUE(AnalyzePod(zero_and_claims).claims_only());
}

TEST(PodRequest, ExplicitZeroIsNoRequest) {
  Container zero = GpuContainer("a", 0);
  PodRequest r = AnalyzePod(PodWith({zero, MgpuContainer("b", 100, std::nullopt)}));
  EXPECT_TRUE(r.valid()) << r.invalid_reason;
  EXPECT_EQ(r.kind, RequestKind::kMgpu);
}

TEST(PodRequest, InitContainersWithMgpuArePlacedToo) {
  Pod pod = PodWith({MgpuContainer("main", 30, 1024)});
  pod.init_containers = {MgpuContainer("warmup", 10, 512)};
  PodRequest r = AnalyzePod(pod);
  ASSERT_EQ(r.containers.size(), 2u);
  EXPECT_EQ(r.containers[0].container, "warmup");
  EXPECT_EQ(r.containers[0].init_position, 1);
  EXPECT_TRUE(r.containers[0].transient());
  // Kubernetes takes the larger phase, not the sum.
  EXPECT_EQ(r.total_milli, 300);
  EXPECT_EQ(r.total_mib, 1024);
  pod.init_containers = {MgpuContainer("warmup", 60, 4096)};
  r = AnalyzePod(pod);
  EXPECT_EQ(r.total_milli, 600);
  EXPECT_EQ(r.total_mib, 4096);
  // A sidecar runs with everything after it.
  pod.init_containers[0].sidecar = true;
  r = AnalyzePod(pod);
  EXPECT_EQ(r.total_milli, 900);
  EXPECT_FALSE(r.containers[0].transient());
}

// A result annotation key's name part is at most 63 characters (apimachinery IsQualifiedName):
// "gpu-index-container-" leaves 43 for the container name. Refused at filter, never at bind.
TEST(PodRequest, ContainerNamesTooLongForTheResultAnnotationAreRefused) {
  std::string name43(43, 'a');
  EXPECT_TRUE(AnalyzePod(PodWith({MgpuContainer(name43, 30, 1024)})).schedulable());
  PodRequest r = AnalyzePod(PodWith({MgpuContainer(name43 + "b", 30, 1024)}));
  EXPECT_TRUE(r.valid());
  EXPECT_FALSE(r.schedulable());
  EXPECT_THAT(r.unplaceable_reason, HasSubstr("its name has 44 characters; the result annotation "
                                              "vke.volcengine.com/gpu-index-container-"));
  EXPECT_THAT(r.unplaceable_reason, HasSubstr("at most 43 characters"));
}

}  // namespace pod_request_test
}  // namespace gpusched::placement
