#include "dra_json.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cluster_json.h"
#include "gpusched/json/json.h"

namespace gpusched::testing {

const std::string_view kGpuClass = R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"gpu.nvidia.com"},
  "spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
          "extendedResourceName":"nvidia.com/gpu"}})";

std::string DraNode(const std::string& name, const std::string& mode) {
  return fmt::format(R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{}","labels":{{"vke.node.gpu.schedule":"{}",
    "topology.kubernetes.io/zone":"z1"}}}},"status":{{"allocatable":{{"cpu":"64","ephemeral-storage":"1844284980Ki","hugepages-1Gi":"0","memory":"527952472Ki","pods":"110"}}}}}})",
                     name, mode);
}

std::string DraNodeWithLinks(const std::string& name, const std::vector<std::vector<int>>& peers) {
  std::string annotations;
  if (!peers.empty()) {
    std::string devices;
    for (size_t i = 0; i < peers.size(); ++i) {
      devices += fmt::format(R"({}{{"index":{},"uuid":"GPU-{}-{}","nvlinkPeers":[{}]}})", i > 0 ? "," : "", i, name, i,
                             fmt::join(peers[i], ","));
    }
    annotations = fmt::format(R"(,"annotations":{{"gpusched.io/gpu-devices":{}}})", Quoted("[" + devices + "]"));
  }
  return fmt::format(R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{}","labels":{{"vke.node.gpu.schedule":"nvidia-dra"}}{}}},
    "status":{{"allocatable":{{"cpu":"64","memory":"527952472Ki","pods":"110"}}}}}})",
                     name, annotations);
}

std::string GpuSlice(const std::string& node, int n, const std::string& product) {
  std::string devices;
  for (int i = 0; i < n; ++i) {
    if (i > 0) devices += ',';
    devices += fmt::format(R"({{"name":"gpu-{0}","attributes":{{"type":{{"string":"gpu"}},"productName":{{"string":"{1}"}},
      "uuid":{{"string":"GPU-{2}-{0}"}},"driverVersion":{{"version":"570.124.6"}},
      "resource.kubernetes.io/pcieRoot":{{"string":"pci0000:{3}"}}}},"capacity":{{"memory":{{"value":"81559Mi"}}}}}})",
                           i, product, node, 10 + i / 2);
  }
  return fmt::format(R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{{"name":"{0}-gpu.nvidia.com-x"}},
    "spec":{{"driver":"gpu.nvidia.com","nodeName":"{0}","pool":{{"name":"{0}","generation":1,"resourceSliceCount":1}},
    "devices":[{1}]}}}})",
                     node, devices);
}

std::string ClaimSpec(int count, const std::string& selector) {
  std::string selectors = selector.empty() ? "" : fmt::format(R"(,"selectors":[{{"cel":{{"expression":{}}}}}])", selector);
  return fmt::format(R"({{"devices":{{"requests":[{{"name":"gpus","exactly":{{"deviceClassName":"gpu.nvidia.com","count":{}{}}}}}]}}}})",
                     count, selectors);
}

std::string Quoted(std::string_view s) {
  std::string out;
  json::AppendString(&out, s);
  return out;
}

const std::string kH100Selector = Quoted(
    "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3' && "
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('79Gi')) >= 0");

// A claim; `allocated` lists "node/gpu-i" devices of its status.allocation, `reserved` pods (uid
// and name alike, as ClaimPod makes them).
std::string Claim(const std::string& name, const std::string& spec, const std::vector<std::string>& allocated,
                  const std::vector<std::string>& reserved) {
  std::string status;
  if (!allocated.empty()) {
    std::string results, node;
    for (size_t i = 0; i < allocated.size(); ++i) {
      node = allocated[i].substr(0, allocated[i].find('/'));
      std::string device = allocated[i].substr(allocated[i].find('/') + 1);
      results += fmt::format(R"({}{{"request":"gpus","driver":"gpu.nvidia.com","pool":"{}","device":"{}"}})", i ? "," : "", node, device);
    }
    std::string reserved_for;
    for (size_t i = 0; i < reserved.size(); ++i) {
      reserved_for += fmt::format(R"({}{{"resource":"pods","name":"{}","uid":"{}"}})", i ? "," : "", reserved[i], reserved[i]);
    }
    status = fmt::format(R"(,"status":{{"allocation":{{"devices":{{"results":[{}]}},
      "nodeSelector":{{"nodeSelectorTerms":[{{"matchFields":[{{"key":"metadata.name","operator":"In","values":["{}"]}}]}}]}}}},
      "reservedFor":[{}]}})",
                         results, node, reserved_for);
  }
  return fmt::format(R"({{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{{"name":"{}","namespace":"ml",
    "uid":"uid-{}"}},"spec":{}{}}})",
                     name, name, spec, status);
}

// A pod with one named claim ("gpus" → `claim`), pending or bound to `node`.
std::string ClaimPod(const std::string& name, const std::string& claim, const std::string& node, int32_t priority) {
  return fmt::format(R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{0}","namespace":"ml","uid":"{0}","resourceVersion":"7"}},
    "spec":{{{1}"containers":[{{"name":"main","resources":{{"claims":[{{"name":"gpus"}}]}}}}],
    "priority":{4},"resourceClaims":[{{"name":"gpus","resourceClaimName":"{2}"}}]}},"status":{{"phase":"{3}"}}}})",
                     name, node.empty() ? "" : fmt::format(R"("nodeName":"{}",)", node), claim, node.empty() ? "Pending" : "Running",
                     priority);
}

std::string TemplateClaimPod(const std::string& name, const std::string& claim, const std::string& node,
                             const std::string& controller) {
  std::string owner = controller.empty() ? "" : fmt::format(R"("ownerReferences":[{{"apiVersion":"apps/v1","kind":"ReplicaSet",
    "name":"owner","uid":"{}","controller":true,"blockOwnerDeletion":true}}],)", controller);
  return fmt::format(R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{0}","namespace":"ml","uid":"{0}",{4}
    "labels":{{"app":"{0}"}},"resourceVersion":"7"}},"spec":{{{1}"containers":[{{"name":"main","resources":{{"claims":[{{"name":"gpus"}}]}}}}],
    "priority":0,"resourceClaims":[{{"name":"gpus","resourceClaimTemplateName":"tmpl"}}]}},
    "status":{{"phase":"{3}","resourceClaimStatuses":[{{"name":"gpus","resourceClaimName":"{2}"}}]}}}})",
                     name, node.empty() ? "" : fmt::format(R"("nodeName":"{}",)", node), claim, node.empty() ? "Pending" : "Running",
                     owner);
}

std::string GeneratedClaim(const std::string& name, const std::string& pod, const std::string& spec,
                           const std::vector<std::string>& allocated) {
  std::string claim = Claim(name, spec, allocated, allocated.empty() ? std::vector<std::string>{} : std::vector<std::string>{pod});
  std::string owner = fmt::format(R"("ownerReferences":[{{"apiVersion":"v1","kind":"Pod","name":"{0}","uid":"{0}",)"
                                  R"("controller":true,"blockOwnerDeletion":true}}],)", pod);
  return claim.insert(claim.find(R"("uid":"uid-)"), owner);
}

std::string ExtendedGpuPod(const std::string& name, int64_t gpus, const std::string& node, const std::string& special) {
  std::string pod = PodJson{.name = name, .namespace_name = "ml", .uid = name, .node = node, .phase = node.empty() ? "Pending" : "Running",
                            .containers = {WholeGpus("main", gpus)}}
                        .ToJson();
  if (special.empty()) return pod;
  size_t status = pod.find(R"("status":{)");
  return pod.insert(status + 10, fmt::format(R"("extendedResourceClaimStatus":{{"resourceClaimName":"{}","requestMappings":[)"
                                             R"({{"containerName":"main","resourceName":"nvidia.com/gpu","requestName":"container-0-request-0"}}]}},)",
                                             special));
}

}  // namespace gpusched::testing
