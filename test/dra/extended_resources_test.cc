// Extended resources served by DRA (KEP 5004): which class serves a resource, on which nodes, and
// the special claim kube-scheduler builds. Expected results from upstream's TestPlugin cases
// (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go) and
// Test_createRequestsAndMappings_requests (extendeddynamicresources_test.go), named below.
#include "gpusched/dra/extended_resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::dra {
namespace extended_resources_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

DeviceClasses Classes(std::initializer_list<DeviceClass> list) {
  DeviceClasses out;
  for (const DeviceClass& c : list) out[c.name] = c;
  return out;
}

Container Asking(std::string name, std::initializer_list<std::pair<std::string, int64_t>> resources) {
  Container c{.name = std::move(name)};
  for (const auto& [r, n] : resources) {
    if (r == "nvidia.com/gpu") {
      c.limits.nvidia_gpus = n;
    } else {
      c.other_requests.Add(r, n);
    }
  }
  return c;
}

// A container asking `n` nvidia.com/gpu.
Container Gpus(std::string name, int64_t n) { return Asking(std::move(name), {{"nvidia.com/gpu", n}}); }

Pod PodWith(std::vector<Container> init, std::vector<Container> app) {
  return Pod{.uid = "u1", .namespace_name = "ml", .name = "my-pod", .containers = std::move(app), .init_containers = std::move(init)};
}

// The request names, classes and counts of a claim, as "name class count".
std::vector<std::string> Requests(const SpecialClaim& s) {
  std::vector<std::string> out;
  for (const DeviceRequest& r : s.claim.requests) out.push_back(r.name + " " + r.exactly->device_class + " " + std::to_string(r.exactly->count));
  return out;
}

const DeviceClasses kGpu = Classes({{.name = "gpu.nvidia.com", .extended_resource_name = "nvidia.com/gpu"}});

TEST(ExtendedResources, AClassServesItsNamedResourceAndItsImplicitName) {
  EXPECT_EQ(ClassFor(kGpu, "nvidia.com/gpu"), &kGpu.at("gpu.nvidia.com"));
  EXPECT_EQ(ClassFor(kGpu, "deviceclass.resource.kubernetes.io/gpu.nvidia.com"), &kGpu.at("gpu.nvidia.com"));
  EXPECT_EQ(ClassFor(kGpu, "deviceclass.resource.kubernetes.io/other"), nullptr);
  EXPECT_EQ(ClassFor(kGpu, "example.com/fpga"), nullptr);
}

TEST(ExtendedResources, OfClassesMappingOneResourceTheNewestWinsThenTheLowerName) {
  DeviceClasses classes = Classes({{.name = "b", .extended_resource_name = "nvidia.com/gpu", .creation_timestamp = "2026-03-01T10:00:00Z"},
                                   {.name = "c", .extended_resource_name = "nvidia.com/gpu", .creation_timestamp = "2026-03-02T09:00:00Z"},
                                   {.name = "a", .extended_resource_name = "nvidia.com/gpu", .creation_timestamp = "2026-03-01T10:00:00Z"}});
  EXPECT_EQ(ClassFor(classes, "nvidia.com/gpu")->name, "c");
  classes.erase("c");
  EXPECT_EQ(ClassFor(classes, "nvidia.com/gpu")->name, "a");
}

// extended-resource-name-with-resources: the pod's one container asks one GPU.
TEST(ExtendedResources, OneContainerAskingGpusGetsOneExactCountRequest) {
  Pod pod = PodWith({}, {Asking("c", {{"nvidia.com/gpu", 2}})});
  std::vector<std::string> mapped = MappedResources(pod, kGpu);
  ASSERT_THAT(mapped, ElementsAre("nvidia.com/gpu"));
  std::optional<SpecialClaim> s = BuildSpecialClaim(pod, kGpu, ServedOn(Node{.name = "n"}, mapped));
  ASSERT_TRUE(s.has_value());
  EXPECT_THAT(Requests(*s), ElementsAre("container-0-request-0 gpu.nvidia.com 2"));
  EXPECT_EQ(s->claim.name, "my-pod-extended-resources-");
  EXPECT_EQ(s->claim.namespace_name, "ml");
  EXPECT_EQ(s->claim.owner_pod_uid, "u1");
  EXPECT_EQ(s->claim.requests[0].exactly->allocation_mode, "ExactCount");
  EXPECT_THAT(s->mappings, ElementsAre(RequestMapping{"c", "nvidia.com/gpu", "container-0-request-0"}));
}

// extended-resource-name-with-node-resource: the node lists the resource, its device plugin serves it.
TEST(ExtendedResources, ANodeListingTheResourceIsServedByItsDevicePlugin) {
  Pod pod = PodWith({}, {Asking("c", {{"nvidia.com/gpu", 1}})});
  Node node{.name = "n", .allocatable = {.nvidia_gpus = 1}};
  EXPECT_THAT(ServedOn(node, MappedResources(pod, kGpu)), IsEmpty());
  EXPECT_FALSE(BuildSpecialClaim(pod, kGpu, ServedOn(node, MappedResources(pod, kGpu))).has_value());
}

// extended-resource-one-device-plugin-one-dra: only the resource the node does not list goes to DRA.
TEST(ExtendedResources, OneResourceFromTheDevicePluginAndOneFromDra) {
  DeviceClasses classes = Classes({{.name = "class1", .extended_resource_name = "example.com/gpu"},
                                   {.name = "class2", .extended_resource_name = "example.com/gpu2"}});
  Pod pod = PodWith({}, {Asking("c", {{"example.com/gpu", 1}, {"example.com/gpu2", 1}})});
  Node node{.name = "n"};
  node.other_allocatable.Add("example.com/gpu", 1);
  std::vector<std::string> served = ServedOn(node, MappedResources(pod, classes));
  ASSERT_THAT(served, ElementsAre("example.com/gpu2"));
  EXPECT_THAT(Requests(*BuildSpecialClaim(pod, classes, served)), ElementsAre("container-0-request-1 class2 1"));
}

// implicit-extended-resource-name-with-resources: implicit=1 and explicit=2 in one container.
TEST(ExtendedResources, TheImplicitAndTheExplicitNameEachGetARequest) {
  DeviceClasses classes = Classes({{.name = "class", .extended_resource_name = "example.com/gpu"}});
  Pod pod = PodWith({}, {Asking("c", {{"deviceclass.resource.kubernetes.io/class", 1}, {"example.com/gpu", 2}})});
  std::vector<std::string> served = ServedOn(Node{.name = "n"}, MappedResources(pod, classes));
  EXPECT_THAT(Requests(*BuildSpecialClaim(pod, classes, served)),
              ElementsAre("container-0-request-0 class 1", "container-0-request-1 class 2"));
}

TEST(ExtendedResources, CpuAndMemoryCountInTheRequestsIndex) {
  Pod pod = PodWith({}, {Asking("a", {{"cpu", 4000}, {"memory", 1 << 30}}), Asking("b", {{"cpu", 1000}, {"memory", 1 << 30}, {"nvidia.com/gpu", 1}})});
  std::optional<SpecialClaim> s = BuildSpecialClaim(pod, kGpu, ServedOn(Node{.name = "n"}, MappedResources(pod, kGpu)));
  EXPECT_THAT(Requests(*s), ElementsAre("container-1-request-2 gpu.nvidia.com 1"));
  EXPECT_THAT(s->mappings, ElementsAre(RequestMapping{"b", "nvidia.com/gpu", "container-1-request-2"}));
}

// The mappings of a claim, as "container resource request", in the order written.
std::vector<std::string> Mappings(const SpecialClaim& s) {
  std::vector<std::string> out;
  for (const RequestMapping& m : s.mappings) out.push_back(m.container + " " + m.resource + " " + m.request);
  return out;
}

Container Sidecar(std::string name, std::initializer_list<std::pair<std::string, int64_t>> resources) {
  Container c = Asking(std::move(name), resources);
  c.sidecar = true;
  return c;
}

// Upstream's Test_createRequestsAndMappings_{requests,mappings} (extendeddynamicresources_test.go):
// its resource names, its classes and its pods (st.MakePod names the containers con<i>,
// init-con<i> and sidecar-con<i>, i counting within the list the container is in).
const std::string kUp = "example.com/gpu";
const std::string kUp1 = "example.com/gpu1";
const std::string kUpInit = "example.com/gpuinit";
const std::string kUpImplicit = "deviceclass.resource.kubernetes.io/classInit";
const DeviceClasses kDevMap = Classes({{.name = "class", .extended_resource_name = kUp}});
const DeviceClasses kDevMap2 = Classes({{.name = "class", .extended_resource_name = kUp},
                                        {.name = "class1", .extended_resource_name = kUp1}});
const DeviceClasses kDevMapInit = Classes({{.name = "class", .extended_resource_name = kUp},
                                           {.name = "classInit", .extended_resource_name = kUpInit}});

// pod1: one container asking 1 of gpu and 2 of gpu1; pod2: the same split over two containers.
const Pod kPod1 = PodWith({}, {Asking("con0", {{kUp, 1}, {kUp1, 2}})});
const Pod kPod2 = PodWith({}, {Asking("con0", {{kUp, 1}}), Asking("con1", {{kUp1, 2}})});
// podInit, podInit2, podInit3, podInitImplicit and pod1InitImplicit.
const Pod kPodInit = PodWith({Asking("init-con0", {{kUpInit, 2}})}, {Asking("con0", {{kUp, 1}})});
const Pod kPodInit2 = PodWith({Asking("init-con0", {{kUpInit, 1}}), Asking("init-con1", {{kUpInit, 2}})}, {Asking("con0", {{kUp, 1}})});
const Pod kPodInit3 = PodWith(
    {Asking("init-con0", {{kUpInit, 1}}), Sidecar("sidecar-con1", {{kUpInit, 1}}), Asking("init-con2", {{kUpInit, 2}})},
    {Asking("con0", {{kUp, 1}})});
const Pod kPodInitImplicit = PodWith({Asking("init-con0", {{kUpInit, 1}}), Asking("init-con1", {{kUpImplicit, 2}})},
                                     {Asking("con0", {{kUp, 1}})});
const Pod kPod1InitImplicit = PodWith({Asking("init-con0", {{kUpInit, 1}, {kUpImplicit, 2}})}, {});

SpecialClaim Build(const Pod& pod, const DeviceClasses& classes, std::vector<std::string> served) {
  std::optional<SpecialClaim> s = BuildSpecialClaim(pod, classes, served);
  EXPECT_TRUE(s.has_value());
  return s.value_or(SpecialClaim{});
}

// "nil": no resource served, no claim.
TEST(ExtendedResourcesUpstream, NothingServedNoClaim) {
  EXPECT_FALSE(BuildSpecialClaim(kPod1, kDevMap, {}).has_value());
}

// "one resource match", "one resource match, one resource not match", "two resources match",
// "two containers match"; mappings "one container, two requests", "two containers, two requests".
TEST(ExtendedResourcesUpstream, EachResourceOfEachContainerGetsItsRequest) {
  EXPECT_THAT(Requests(Build(kPod1, kDevMap, {kUp})), ElementsAre("container-0-request-0 class 1"));
  EXPECT_THAT(Requests(Build(kPod1, kDevMap, {kUp, kUp1})), ElementsAre("container-0-request-0 class 1"));
  SpecialClaim two = Build(kPod1, kDevMap2, {kUp, kUp1});
  EXPECT_THAT(Requests(two), ElementsAre("container-0-request-0 class 1", "container-0-request-1 class1 2"));
  EXPECT_THAT(Mappings(two), ElementsAre("con0 example.com/gpu container-0-request-0", "con0 example.com/gpu1 container-0-request-1"));
  SpecialClaim split = Build(kPod2, kDevMap2, {kUp, kUp1});
  EXPECT_THAT(Requests(split), ElementsAre("container-0-request-0 class 1", "container-1-request-0 class1 2"));
  EXPECT_THAT(Mappings(split), ElementsAre("con0 example.com/gpu container-0-request-0", "con1 example.com/gpu1 container-1-request-0"));
}

// "one init container, one regular container" (requests and mappings).
TEST(ExtendedResourcesUpstream, AnInitContainerWithNothingLaterToReuseGetsItsOwnRequest) {
  SpecialClaim s = Build(kPodInit, kDevMapInit, {kUp, kUpInit});
  EXPECT_THAT(Requests(s), ElementsAre("container-0-request-0 classInit 2", "container-1-request-0 class 1"));
  EXPECT_THAT(Mappings(s),
              ElementsAre("con0 example.com/gpu container-1-request-0", "init-con0 example.com/gpuinit container-0-request-0"));
}

// "two init containers, one regular container"; "three containers (two are init container), two requests".
TEST(ExtendedResourcesUpstream, InitContainersShareTheLargestInitRequest) {
  SpecialClaim s = Build(kPodInit2, kDevMapInit, {kUp, kUpInit});
  EXPECT_THAT(Requests(s), ElementsAre("container-1-request-0 classInit 2", "container-2-request-0 class 1"));
  EXPECT_THAT(Mappings(s), ElementsAre("con0 example.com/gpu container-2-request-0", "init-con0 example.com/gpuinit container-1-request-0",
                                       "init-con1 example.com/gpuinit container-1-request-0"));
}

// "three init containers, one sidecar, one regular container"; "four containers (two are init
// container, one sidecar), three requests": init-con0 reuses the later sidecar's request.
TEST(ExtendedResourcesUpstream, AnInitContainerReusesALaterSidecarsRequest) {
  SpecialClaim s = Build(kPodInit3, kDevMapInit, {kUp, kUpInit});
  EXPECT_THAT(Requests(s), ElementsAre("container-1-request-0 classInit 1", "container-2-request-0 classInit 2",
                                       "container-3-request-0 class 1"));
  EXPECT_THAT(Mappings(s), ElementsAre("con0 example.com/gpu container-3-request-0",
                                       "sidecar-con1 example.com/gpuinit container-1-request-0",
                                       "init-con0 example.com/gpuinit container-1-request-0",
                                       "init-con2 example.com/gpuinit container-2-request-0"));
}

// "one container, one explicit and one implicit request"; "three containers (two are init
// container), both explicit and implicit resources": two names of one class are two resources.
TEST(ExtendedResourcesUpstream, TheImplicitAndTheExplicitNameOfAClassAreSeparateResources) {
  DeviceClasses classes = kDevMapInit;
  SpecialClaim one = Build(kPod1InitImplicit, classes, {kUpImplicit, kUpInit});
  EXPECT_THAT(Requests(one), ElementsAre("container-0-request-0 classInit 2", "container-0-request-1 classInit 1"));
  EXPECT_THAT(Mappings(one), ElementsAre("init-con0 deviceclass.resource.kubernetes.io/classInit container-0-request-0",
                                         "init-con0 example.com/gpuinit container-0-request-1"));
  SpecialClaim two = Build(kPodInitImplicit, classes, {kUpImplicit, kUp, kUpInit});
  EXPECT_THAT(Requests(two), ElementsAre("container-0-request-0 classInit 1", "container-1-request-0 classInit 2",
                                         "container-2-request-0 class 1"));
  EXPECT_THAT(Mappings(two), ElementsAre("init-con1 deviceclass.resource.kubernetes.io/classInit container-1-request-0",
                                         "con0 example.com/gpu container-2-request-0",
                                         "init-con0 example.com/gpuinit container-0-request-0"));
}

// Test_createRequestsAndMappings_deterministic: resources in name order, whatever order `served` has.
TEST(ExtendedResourcesUpstream, ResourcesGoInNameOrder) {
  DeviceClasses classes = Classes({{.name = "zzz-class", .extended_resource_name = "zzz.example.com/resource"},
                                   {.name = "aaa-class", .extended_resource_name = "aaa.example.com/resource"},
                                   {.name = "mmm-class", .extended_resource_name = "mmm.example.com/resource"}});
  Pod pod = PodWith(
      {}, {Asking("con0", {{"zzz.example.com/resource", 1}, {"aaa.example.com/resource", 1}, {"mmm.example.com/resource", 1}})});
  SpecialClaim s = Build(pod, classes, {"zzz.example.com/resource", "aaa.example.com/resource", "mmm.example.com/resource"});
  EXPECT_THAT(Requests(s), ElementsAre("container-0-request-0 aaa-class 1", "container-0-request-1 mmm-class 1",
                                       "container-0-request-2 zzz-class 1"));
  EXPECT_THAT(Mappings(s), ElementsAre("con0 aaa.example.com/resource container-0-request-0",
                                       "con0 mmm.example.com/resource container-0-request-1",
                                       "con0 zzz.example.com/resource container-0-request-2"));
}

// Issue 31 §4: init container 3 GPUs, app containers 2 + 2. The init container runs before the
// app containers and uses their devices: 4 in all, not 7.
TEST(ExtendedResources, AnInitContainerUsesTheLaterRequestsThatCoverItsCount) {
  Pod pod = PodWith({Gpus("warmup", 3)}, {Gpus("a", 2), Gpus("b", 2)});
  SpecialClaim s = Build(pod, kGpu, MappedResources(pod, kGpu));
  EXPECT_THAT(Requests(s), ElementsAre("container-1-request-0 gpu.nvidia.com 2", "container-2-request-0 gpu.nvidia.com 2"));
  EXPECT_THAT(Mappings(s), ElementsAre("a nvidia.com/gpu container-1-request-0", "b nvidia.com/gpu container-2-request-0",
                                       "warmup nvidia.com/gpu container-1-request-0", "warmup nvidia.com/gpu container-2-request-0"));
}

// Where the later requests do not cover it, the init container asks the difference in its own
// request, mapped after the ones it reuses: 5 = 2 + 2 + 1.
TEST(ExtendedResources, AnInitContainerAsksOnlyWhatTheLaterRequestsLack) {
  Pod pod = PodWith({Gpus("warmup", 5)}, {Gpus("a", 2), Gpus("b", 2)});
  SpecialClaim s = Build(pod, kGpu, MappedResources(pod, kGpu));
  EXPECT_THAT(Requests(s), ElementsAre("container-0-request-0 gpu.nvidia.com 1", "container-1-request-0 gpu.nvidia.com 2",
                                       "container-2-request-0 gpu.nvidia.com 2"));
  EXPECT_THAT(Mappings(s), ElementsAre("a nvidia.com/gpu container-1-request-0", "b nvidia.com/gpu container-2-request-0",
                                       "warmup nvidia.com/gpu container-1-request-0", "warmup nvidia.com/gpu container-2-request-0",
                                       "warmup nvidia.com/gpu container-0-request-0"));
}

// Init containers 3 and 5 before an app container of 2: each reuses the app's 2; of their own
// requests (1 and 3) only the larger is kept and both map to it: 5 devices, as the largest init
// container needs.
TEST(ExtendedResources, InitContainersShareTheLargestOfTheirOwnRequests) {
  Pod pod = PodWith({Gpus("i0", 3), Gpus("i1", 5)}, {Gpus("app", 2)});
  SpecialClaim s = Build(pod, kGpu, MappedResources(pod, kGpu));
  EXPECT_THAT(Requests(s), ElementsAre("container-1-request-0 gpu.nvidia.com 3", "container-2-request-0 gpu.nvidia.com 2"));
  EXPECT_THAT(Mappings(s), ElementsAre("app nvidia.com/gpu container-2-request-0", "i0 nvidia.com/gpu container-2-request-0",
                                       "i0 nvidia.com/gpu container-1-request-0", "i1 nvidia.com/gpu container-2-request-0",
                                       "i1 nvidia.com/gpu container-1-request-0"));
}

// A sidecar declared before an init container runs beside it: the init container does not reuse
// its request, only the later app container's.
TEST(ExtendedResources, AnInitContainerDoesNotReuseAnEarlierSidecarsRequest) {
  Pod pod = PodWith({Sidecar("side", {{"nvidia.com/gpu", 2}}), Gpus("init", 2)}, {Gpus("app", 1)});
  SpecialClaim s = Build(pod, kGpu, MappedResources(pod, kGpu));
  EXPECT_THAT(Requests(s), ElementsAre("container-0-request-0 gpu.nvidia.com 2", "container-1-request-0 gpu.nvidia.com 1",
                                       "container-2-request-0 gpu.nvidia.com 1"));
  EXPECT_THAT(Mappings(s), ElementsAre("side nvidia.com/gpu container-0-request-0", "app nvidia.com/gpu container-2-request-0",
                                       "init nvidia.com/gpu container-2-request-0", "init nvidia.com/gpu container-1-request-0"));
}

TEST(ExtendedResources, APodAskingNothingAClassMapsHasNoClaim) {
  Pod pod = PodWith({}, {Asking("c", {{"cpu", 1000}, {"example.com/fpga", 1}})});
  EXPECT_THAT(MappedResources(pod, kGpu), IsEmpty());
  EXPECT_FALSE(BuildSpecialClaim(pod, kGpu, MappedResources(pod, kGpu)).has_value());
}

}  // namespace extended_resources_test
}  // namespace gpusched::dra
