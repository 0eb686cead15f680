// File: pod_gpu_use.cc
//
// A pod's use of each GPU across its container phases: the peak of the app containers with every
// sidecar, and of each regular init container with the sidecars declared before it.
#include "gpusched/placement/pod_gpu_use.h"

#include <algorithm>
#include <map>

namespace gpusched::placement {
namespace {

// Adds container `c`'s share to `uses` (keyed by GPU index).
void Add(const ContainerAssignment& c, std::map<int, GpuUse>* uses) {
  for (int index : c.gpu_indices) {
    GpuUse& u = (*uses)[index];
    u.index = index;
    u.conflict = u.conflict || (u.instances > 0 && (u.exclusive || c.exclusive));
    u.milli += c.milli_per_gpu;
    u.mib += c.mib_per_gpu;
    u.instances += 1;
    u.exclusive = u.exclusive || c.exclusive;
  }
}

// Raises *into to at least `phase` on every GPU.
void Max(const std::map<int, GpuUse>& phase, std::map<int, GpuUse>* into) {
  for (const auto& [index, u] : phase) {
    GpuUse& m = (*into)[index];
    m.index = index;
    m.milli = std::max(m.milli, u.milli);
    m.mib = std::max(m.mib, u.mib);
    m.instances = std::max(m.instances, u.instances);
    m.exclusive = m.exclusive || u.exclusive;
    m.conflict = m.conflict || u.conflict;
  }
}

}  // namespace

std::vector<GpuUse> PodGpuUse(std::span<const ContainerAssignment> containers) {
  std::map<int, GpuUse> running;  // app containers and every sidecar
  for (const ContainerAssignment& c : containers) {
    if (!c.transient()) Add(c, &running);
  }
  std::map<int, GpuUse> peak = running;
  for (const ContainerAssignment& init : containers) {
    if (!init.transient()) continue;
    std::map<int, GpuUse> phase;
    for (const ContainerAssignment& c : containers) {
      if (c.sidecar && c.init_position < init.init_position) Add(c, &phase);
    }
    Add(init, &phase);
    Max(phase, &peak);
  }
  std::vector<GpuUse> out;
  out.reserve(peak.size());
  for (const auto& [index, u] : peak) out.push_back(u);
  return out;
}

}  // namespace gpusched::placement
