// File: names.h
//
// The well-known Kubernetes names gpusched reads and writes: resource names, node labels and pod
// annotations. The VKE mGPU contract fixes the vke.volcengine.com names; gpusched.io names are
// ours and documented in docs/placement-rules.md.
#pragma once

#include <string_view>

namespace gpusched::names {

// Node label that selects a node's GPU scheduling mode.
inline constexpr std::string_view kScheduleModeLabel = "vke.node.gpu.schedule";
// The kube-scheduler profile gpusched serves by default (spec.schedulerName), as shipped.
inline constexpr std::string_view kDefaultScheduler = "gpu-scheduler";

// Extended resources.
inline constexpr std::string_view kNvidiaGpu = "nvidia.com/gpu";
inline constexpr std::string_view kMgpuCore = "vke.volcengine.com/mgpu-core";      // percent of one GPU
inline constexpr std::string_view kMgpuMemory = "vke.volcengine.com/mgpu-memory";  // MiB

// mGPU compute policy: node label and pod annotation share the key and must be equal.
inline constexpr std::string_view kComputePolicy = "vke.volcengine.com/mgpu-compute-policy";
inline constexpr std::string_view kPolicyFixedShare = "fixed-share";
inline constexpr std::string_view kPolicyGuaranteedBurstShare = "guaranteed-burst-share";
inline constexpr std::string_view kPolicyNativeBurstShare = "native-burst-share";

// PodGroup (or Workload, Coscheduling PodGroup) annotation: the node label key whose one domain
// must hold the whole gang ("nvidia.com/gpu.clique"), where spec.schedulingConstraints.topology
// is not available.
inline constexpr std::string_view kTopologyRequired = "gpusched.io/topology-required";

// Pod annotation: cards per container, "2,1,3" (one entry per mGPU container, in order).
inline constexpr std::string_view kContainerMultipleGpu = "vke.volcengine.com/container-multiple-gpu";

// Result annotations written at bind: "<prefix><container>" = "1,0"; "assumed" = "true".
inline constexpr std::string_view kGpuIndexContainerPrefix = "vke.volcengine.com/gpu-index-container-";
inline constexpr std::string_view kAssumed = "vke.volcengine.com/assumed";

// gpusched's own node annotation: a JSON array describing each physical GPU, e.g.
// [{"index":0,"uuid":"GPU-...","model":"NVIDIA-A10","memoryMiB":23028,"numa":0,"health":"Healthy"}]
inline constexpr std::string_view kGpuDevicesAnnotation = "gpusched.io/gpu-devices";

// gpusched's own node annotation: the placements replicas booked on the node before binding the
// pods, a JSON object keyed by pod UID (format in kubejson/objects.h). Written only with the node's
// resourceVersion as precondition, it makes two replicas' binds on one node serialize.
inline constexpr std::string_view kBookingsAnnotation = "gpusched.io/bookings";
// GPUs defrag moves hold on the node for the pods they are for (kubejson/node_holds.h).
inline constexpr std::string_view kHoldsAnnotation = "gpusched.io/holds";

// Per-pod placement policy overrides: "binpack" or "spread".
inline constexpr std::string_view kNodePolicyAnnotation = "gpusched.io/node-policy";
inline constexpr std::string_view kGpuPolicyAnnotation = "gpusched.io/gpu-policy";

}  // namespace gpusched::names
