// File: dra_json.h
//
// Real-shaped DRA objects for tests: nvidia-dra nodes, ResourceSlices as the NVIDIA driver
// publishes them, the gpu.nvidia.com DeviceClass, ResourceClaims and pods that use them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::testing {

extern const std::string_view kGpuClass;
// A selector for H100s with at least 79Gi, as a quoted JSON string.
extern const std::string kH100Selector;

std::string DraNode(const std::string& name, const std::string& mode = "nvidia-dra");
// A node in mode nvidia-dra whose node agent published its GPUs' NVLink peers by index (annotation
// gpusched.io/gpu-devices, UUIDs as GpuSlice's); no peers at all: no annotation.
std::string DraNodeWithLinks(const std::string& name, const std::vector<std::vector<int>>& peers);
// A node's slice of `n` GPUs of `product`, two per PCIe root, as the NVIDIA driver publishes it.
std::string GpuSlice(const std::string& node, int n, const std::string& product = "NVIDIA H100 80GB HBM3");
// A claim spec with one request "gpus" for `count` devices of class gpu.nvidia.com; `selector`
// is a quoted JSON string or empty.
std::string ClaimSpec(int count, const std::string& selector);
std::string Quoted(std::string_view s);
// A claim in namespace ml; `allocated` lists "node/gpu-i" devices of its status.allocation,
// `reserved` pod uids of its reservedFor.
std::string Claim(const std::string& name, const std::string& spec, const std::vector<std::string>& allocated = {},
                  const std::vector<std::string>& reserved = {});
// A pod (uid = name) with one named claim ("gpus" -> `claim`), pending or bound to `node`, with
// spec.priority as the Priority admission plugin writes it.
std::string ClaimPod(const std::string& name, const std::string& claim, const std::string& node = "", int32_t priority = 0);

// A pod (uid = name) whose claim "gpus" comes from template `tmpl`: the resourceclaim controller
// generated claim `claim` for it (status.resourceClaimStatuses), pending or bound to `node`, with
// label app=<name> and, when `controller` is set, a ReplicaSet of that UID as controlling owner.
std::string TemplateClaimPod(const std::string& name, const std::string& claim, const std::string& node = "",
                             const std::string& controller = "");
// The claim generated for pod `pod` (uid = name): Claim's, owned by the pod as the controller
// makes it, reserved for the pod when `allocated` is given.
std::string GeneratedClaim(const std::string& name, const std::string& pod, const std::string& spec,
                           const std::vector<std::string>& allocated = {});

// A pod (uid = name, namespace ml) asking limits nvidia.com/gpu: `gpus`, pending or bound (Running)
// to `node`; with `special`, its status.extendedResourceClaimStatus names that special claim, as
// kube-scheduler's PreBind writes it (KEP 5004).
std::string ExtendedGpuPod(const std::string& name, int64_t gpus, const std::string& node = "", const std::string& special = "");

}  // namespace gpusched::testing
