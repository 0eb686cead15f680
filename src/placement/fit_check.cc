#include "gpusched/placement/fit_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "gpusched/model/names.h"

namespace gpusched::placement {

Status CheckFits(const NodeState& node, const Placement& placement) {
  if (!node.ready()) return FailedPreconditionError(node.condition_reason);
  NodeMode wanted = ModeServing(placement.kind);
  if (node.mode != wanted) {
    return FailedPreconditionError(
        fmt::format("node mode {}; pod requests {}", ModeName(node.mode), RequestKindName(placement.kind)));
  }
  if (placement.kind == RequestKind::kWholeGpu) {
    if (node.whole_used + placement.whole_gpus > node.whole_total) {
      return FailedPreconditionError(fmt::format("insufficient {}: pod needs {}, node has {} of {} free",
                                                 names::kNvidiaGpu, placement.whole_gpus,
                                                 node.whole_total - node.whole_used, node.whole_total));
    }
    return OkStatus();
  }
  if (placement.kind != RequestKind::kMgpu) return OkStatus();

  std::vector<GpuSlot> after = node.gpus;
  for (const ContainerAssignment& c : placement.containers) {
    if (c.gpu_indices.empty()) {
      return FailedPreconditionError(fmt::format("container {} has no GPU assigned", c.container));
    }
    for (int index : c.gpu_indices) {
      auto it = std::find_if(after.begin(), after.end(), [&](const GpuSlot& s) { return s.index == index; });
      if (it == after.end()) return FailedPreconditionError(fmt::format("GPU{} does not exist on the node", index));
      GpuSlot& s = *it;
      if (!s.healthy) return FailedPreconditionError(fmt::format("GPU{} is unhealthy", index));
      if (s.exclusive) return FailedPreconditionError(fmt::format("GPU{} is held whole by another container", index));
      if (c.exclusive) {
        if (!s.idle()) {
          return FailedPreconditionError(fmt::format("GPU{} is not idle ({} instances)", index, s.instances));
        }
        s.exclusive = true;
        s.instances = 1;
        s.used_milli = kMilliPerGpu;
        s.used_mib = s.memory_mib;
        continue;
      }
      if (s.instances >= kMaxInstancesPerGpu) {
        return FailedPreconditionError(
            fmt::format("GPU{} already runs {} mGPU instances (max {})", index, s.instances, kMaxInstancesPerGpu));
      }
      if (s.free_milli() < c.milli_per_gpu || s.free_mib() < c.mib_per_gpu) {
        return FailedPreconditionError(fmt::format("GPU{} has {}% core and {} MiB free, container {} needs {}% and {} MiB",
                                                   index, CorePercentFromMilli(s.free_milli()), s.free_mib(),
                                                   c.container, CorePercentFromMilli(c.milli_per_gpu), c.mib_per_gpu));
      }
      s.instances += 1;
      s.used_milli += c.milli_per_gpu;
      s.used_mib += c.mib_per_gpu;
    }
  }
  return OkStatus();
}

}  // namespace gpusched::placement
