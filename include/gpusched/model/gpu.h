// File: gpu.h
//
// One physical GPU as published for a node: either described by the node annotation
// gpusched.io/gpu-devices or synthesized from the node's allocatable aggregates.
#pragma once

#include <cstdint>
#include <string>

namespace gpusched {

struct GpuDevice {
  int index = 0;             // device index on the node, as the node agent numbers it
  std::string uuid;          // "GPU-..."; empty when synthesized
  std::string model;         // e.g. "NVIDIA-A100-SXM4-80GB"; empty when unknown
  int64_t memory_mib = 0;    // framebuffer usable by mGPU containers
  int numa_node = -1;        // -1 when unknown
  bool healthy = true;       // unhealthy GPUs keep their allocations but take no new ones

  bool operator==(const GpuDevice&) const = default;
};

}  // namespace gpusched
