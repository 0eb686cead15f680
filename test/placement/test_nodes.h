// Model builders shared by the placement tests.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusched/model/allocation.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched::placement {

inline Node WholeNode(std::string name, int64_t gpus, std::optional<std::string> label = std::nullopt) {
  return Node{.name = std::move(name), .mode_label = std::move(label), .allocatable = {.nvidia_gpus = gpus}};
}

inline Node SharedNode(std::string name, int64_t gpus, int64_t mib_per_gpu, std::string policy = "fixed-share") {
  return Node{.name = std::move(name),
              .mode_label = "mgpu",
              .compute_policy_label = std::move(policy),
              .allocatable = {.mgpu_core_percent = gpus * 100, .mgpu_memory_mib = gpus * mib_per_gpu}};
}

// An mGPU allocation of one container on the listed GPUs.
inline Allocation SharedAlloc(std::string uid, std::string node, std::vector<int> gpus, int64_t milli, int64_t mib,
                              bool exclusive = false) {
  Allocation a{.pod_uid = uid, .pod_namespace = "ns", .pod_name = uid, .node_name = std::move(node),
               .mode = NodeMode::kMgpu};
  a.placement.kind = RequestKind::kMgpu;
  a.placement.containers.push_back(ContainerAssignment{.container = "c", .gpu_indices = std::move(gpus),
                                                       .milli_per_gpu = milli, .mib_per_gpu = mib,
                                                       .exclusive = exclusive});
  return a;
}

inline Allocation WholeAlloc(std::string uid, std::string node, int64_t gpus) {
  Allocation a{.pod_uid = uid, .pod_namespace = "ns", .pod_name = uid, .node_name = std::move(node),
               .mode = NodeMode::kNvidia};
  a.placement.kind = RequestKind::kWholeGpu;
  a.placement.whole_gpus = gpus;
  return a;
}

inline Container MgpuC(std::string name, std::optional<int64_t> core, std::optional<int64_t> mem) {
  Container c{.name = std::move(name)};
  c.limits.mgpu_core_percent = core;
  c.limits.mgpu_memory_mib = mem;
  return c;
}

inline Pod MgpuPod(std::vector<Container> containers, AnnotationMap annotations = {}) {
  return Pod{.uid = "new", .namespace_name = "ns", .name = "new", .containers = std::move(containers),
             .annotations = std::move(annotations)};
}

inline Pod WholePod(int64_t n) {
  Container c{.name = "c"};
  c.limits.nvidia_gpus = n;
  return Pod{.uid = "new", .namespace_name = "ns", .name = "new", .containers = {c}};
}

}  // namespace gpusched::placement
