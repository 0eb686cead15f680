// File: pod_gpu_use.h
//
// What one pod holds on each GPU, given its mGPU container assignments. Containers run in phases
// (allocation.h ContainerAssignment::init_position): the app containers with every sidecar, and
// each regular init container with the sidecars declared before it. Phases never overlap, so on
// each GPU the pod needs, of compute, memory and instance slots, the most that one phase uses
// there; a GPU any phase holds whole is held whole. With no regular init container this is the
// plain sum.
//
// Pure.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "gpusched/model/allocation.h"

namespace gpusched::placement {

struct GpuUse {
  int index = 0;
  int64_t milli = 0;
  int64_t mib = 0;
  int instances = 0;
  bool exclusive = false;
  // Within one phase, a container holding the GPU whole shares it with another container: the
  // placement is not possible.
  bool conflict = false;

  bool operator==(const GpuUse&) const = default;
};

// Returns the pod's use of each GPU its containers name, by ascending index. Containers without
// a GPU index are left out (their use is not on a known GPU).
std::vector<GpuUse> PodGpuUse(std::span<const ContainerAssignment> containers);

}  // namespace gpusched::placement
