// File: dra_example.cc
//
// The generated DRA example as JSON text: nodes, one ResourceSlice each with GPUs under PCIe roots
// of four, the DeviceClass, and seeded pods asking 1, 2, 4 or 8 GPUs by claim or by nvidia.com/gpu
// until the demand is reached.
#include "gpusched/replay/dra_example.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "gpusched/common/random.h"

namespace gpusched::replay {
namespace {

constexpr int kGpusPerRoot = 4;
constexpr int kCpusPerGpu = 12;
constexpr int kGiBPerGpu = 96;

std::string NodeJson(const std::string& name, int gpus) {
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{0}","uid":"node-{0}","resourceVersion":"101",)"
      R"("labels":{{"kubernetes.io/hostname":"{0}","vke.node.gpu.schedule":"nvidia-dra","nvidia.com/gpu.present":"true"}}}},)"
      R"("status":{{"capacity":{{"cpu":"{1}","memory":"{2}Gi","pods":"110"}},"allocatable":{{"cpu":"{1}","memory":"{2}Gi","pods":"110"}},)"
      R"("conditions":[{{"type":"Ready","status":"True","reason":"KubeletReady"}}]}}}})",
      name, gpus * kCpusPerGpu + 8, gpus * kGiBPerGpu + 64);
}

std::string SliceJson(const std::string& node, int gpus) {
  std::string devices;
  for (int i = 0; i < gpus; ++i) {
    if (i > 0) devices += ',';
    devices += fmt::format(
        R"({{"name":"gpu-{0}","attributes":{{"type":{{"string":"gpu"}},"productName":{{"string":"NVIDIA H100 80GB HBM3"}},)"
        R"("uuid":{{"string":"GPU-{1}-{0}"}},"index":{{"int":{0}}},"resource.kubernetes.io/pcieRoot":{{"string":"pci0000:{2:02x}"}}}},)"
        R"("capacity":{{"memory":{{"value":"81559Mi"}}}}}})",
        i, node, 0x10 * (1 + i / kGpusPerRoot));
  }
  return fmt::format(
      R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{{"name":"{0}-gpu.nvidia.com-6q2nl","uid":"slice-{0}",)"
      R"("resourceVersion":"102"}},"spec":{{"driver":"gpu.nvidia.com","nodeName":"{0}","pool":{{"name":"{0}","generation":1,)"
      R"("resourceSliceCount":1}},"devices":[{1}]}}}})",
      node, devices);
}

constexpr std::string_view kGpuClass =
    R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu.nvidia.com","uid":"class-gpu",)"
    R"("resourceVersion":"100","creationTimestamp":"2026-11-01T08:00:00Z"},"spec":{"selectors":[{"cel":{"expression":)"
    R"("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],)"
    R"("extendedResourceName":"nvidia.com/gpu"}})";

std::string ClaimJson(const std::string& name, int gpus) {
  return fmt::format(
      R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{{"name":"{0}","namespace":"ml","uid":"claim-{0}",)"
      R"("resourceVersion":"200"}},"spec":{{"devices":{{"requests":[{{"name":"gpus","exactly":{{"deviceClassName":"gpu.nvidia.com",)"
      R"("allocationMode":"ExactCount","count":{1}}}}}]}}}},"status":{{}}}})",
      name, gpus);
}

// A pending pod asking `gpus` GPUs through claim `claim`, or as nvidia.com/gpu when it is "".
std::string PodJson(const std::string& name, int gpus, const std::string& claim) {
  std::string gpu = claim.empty() ? fmt::format(R"(,"nvidia.com/gpu":"{}")", gpus) : "";
  std::string uses = claim.empty() ? "" : R"(,"claims":[{"name":"gpus"}])";
  std::string spec_claims = claim.empty() ? "" : fmt::format(R"("resourceClaims":[{{"name":"gpus","resourceClaimName":"{}"}}],)", claim);
  return fmt::format(
      R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{0}","namespace":"ml","uid":"pod-{0}","resourceVersion":"300"}},)"
      R"("spec":{{{1}"schedulerName":"gpu-scheduler","priority":0,"containers":[{{"name":"main","image":"registry.example.com/train:1",)"
      R"("resources":{{"requests":{{"cpu":"{2}","memory":"{3}Gi"{4}}},"limits":{{"memory":"{3}Gi"{4}}}{5}}}}}]}},)"
      R"("status":{{"phase":"Pending","qosClass":"Burstable"}}}})",
      name, spec_claims, gpus * kCpusPerGpu, gpus * kGiBPerGpu, gpu, uses);
}

int DrawGpus(Rng& rng) {
  double u = rng.Unit();
  return u < 0.50 ? 1 : u < 0.75 ? 2 : u < 0.90 ? 4 : 8;
}

}  // namespace

DraExample MakeDraExample(const DraExampleOptions& options) {
  std::vector<std::string> objects;
  for (int n = 0; n < options.nodes; ++n) {
    std::string name = fmt::format("dra-{:03d}", n);
    objects.push_back(NodeJson(name, options.gpus_per_node));
    objects.push_back(SliceJson(name, options.gpus_per_node));
  }
  objects.emplace_back(kGpuClass);
  Rng rng(options.seed);
  std::vector<std::string> pods;
  double wanted = options.demand * options.nodes * options.gpus_per_node;
  for (int64_t asked = 0, i = 0; static_cast<double>(asked) < wanted; ++i) {
    int gpus = std::min(DrawGpus(rng), options.gpus_per_node);
    std::string name = fmt::format("job-{:04d}", i);
    std::string claim;
    if (rng.Unit() < options.claim_share) {
      claim = name + "-gpus";
      objects.push_back(ClaimJson(claim, gpus));
    }
    pods.push_back(PodJson(name, gpus, claim));
    asked += gpus;
  }
  auto list = [](const std::vector<std::string>& items) {
    std::string out = R"({"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[)";
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) out += ",\n";
      out += items[i];
    }
    return out + "]}\n";
  };
  return DraExample{.cluster_json = list(objects), .pods_json = list(pods)};
}

}  // namespace gpusched::replay
