// File: pod_resources.h
//
// The kubelet's PodResources API (k8s.io/kubelet/pkg/apis/podresources/v1, served on
// /var/lib/kubelet/pod-resources/kubelet.sock): which device IDs each container got from each
// device plugin. The agent reads it to tell which GPUs of a whole-GPU node are busy
// (GpuDevice::pods), which the device plugin alone decides.
//
// Here: the List call's messages in protobuf wire format (proto3, the fields the agent reads; the
// rest are skipped), and the attachment of pods to GPUs by device ID. NVIDIA's device plugin names
// a GPU by its UUID (the default), by its index (--device-id-strategy=index), a shared replica by
// "<UUID>::<n>" (time-slicing, MPS), and a MIG device by its MIG UUID, which no whole GPU matches.
//
// Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/model/gpu.h"

namespace gpusched::agent {

// The method path of PodResourcesLister.List (gRPC).
inline constexpr std::string_view kPodResourcesList = "/v1.PodResourcesLister/List";

// One container's devices of one resource (ContainerDevices, with its pod and container).
struct ContainerDevices {
  std::string pod_namespace;
  std::string pod_name;
  std::string container;
  std::string resource;              // "nvidia.com/gpu"
  std::vector<std::string> device_ids;

  bool operator==(const ContainerDevices&) const = default;
};

// Decodes a ListPodResourcesResponse. Errors: InvalidArgument naming what is malformed.
StatusOr<std::vector<ContainerDevices>> DecodeListPodResources(std::string_view message);
// Encodes one (pods in order of first appearance; what the kubelet sends, for tests and tools).
std::string EncodeListPodResources(const std::vector<ContainerDevices>& devices);

// Sets every GPU's pods (GpuDevice::pods: "namespace/name", sorted, each once) from the devices
// of resources nvidia.com/gpu and nvidia.com/gpu.shared (a renamed shared resource); a GPU no
// container got is read and free (an empty list).
void AttachPods(const std::vector<ContainerDevices>& devices, std::vector<GpuDevice>* gpus);

}  // namespace gpusched::agent
