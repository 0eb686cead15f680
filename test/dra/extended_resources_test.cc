// Extended resources served by DRA (KEP 5004): which class serves a resource, on which nodes, and
// the special claim kube-scheduler builds. Expected results from upstream's TestPlugin cases
// (pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go) and
// Test_createRequestsAndMappings_requests (extendeddynamicresources_test.go), named below.
#include "gpusched/dra/extended_resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::dra {
namespace {

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

// Test_createRequestsAndMappings_requests, "two init containers, one regular container".
TEST(ExtendedResources, InitContainersReuseALaterContainersRequestOrTheLargestOfTheRest) {
  Pod pod = PodWith({Asking("init0", {{"nvidia.com/gpu", 1}}), Asking("init1", {{"nvidia.com/gpu", 2}})},
                    {Asking("app", {{"nvidia.com/gpu", 1}})});
  std::optional<SpecialClaim> s = BuildSpecialClaim(pod, kGpu, MappedResources(pod, kGpu));
  EXPECT_THAT(Requests(*s), ElementsAre("container-1-request-0 gpu.nvidia.com 2", "container-2-request-0 gpu.nvidia.com 1"));
  EXPECT_THAT(s->mappings, ElementsAre(RequestMapping{"app", "nvidia.com/gpu", "container-2-request-0"},
                                       RequestMapping{"init0", "nvidia.com/gpu", "container-2-request-0"},
                                       RequestMapping{"init1", "nvidia.com/gpu", "container-1-request-0"}));
}

// Test_createRequestsAndMappings_requests, "three init containers, one sidecar, one regular container".
TEST(ExtendedResources, ASidecarKeepsItsRequestBesideTheAppContainers) {
  Container sidecar = Asking("side", {{"nvidia.com/gpu", 1}});
  sidecar.sidecar = true;
  Pod pod = PodWith({Asking("init0", {{"nvidia.com/gpu", 1}}), sidecar, Asking("init2", {{"nvidia.com/gpu", 2}})},
                    {Asking("app", {{"nvidia.com/gpu", 1}})});
  EXPECT_THAT(Requests(*BuildSpecialClaim(pod, kGpu, MappedResources(pod, kGpu))),
              ElementsAre("container-1-request-0 gpu.nvidia.com 1", "container-2-request-0 gpu.nvidia.com 2",
                          "container-3-request-0 gpu.nvidia.com 1"));
}

TEST(ExtendedResources, APodAskingNothingAClassMapsHasNoClaim) {
  Pod pod = PodWith({}, {Asking("c", {{"cpu", 1000}, {"example.com/fpga", 1}})});
  EXPECT_THAT(MappedResources(pod, kGpu), IsEmpty());
  EXPECT_FALSE(BuildSpecialClaim(pod, kGpu, MappedResources(pod, kGpu)).has_value());
}

}  // namespace
}  // namespace gpusched::dra
