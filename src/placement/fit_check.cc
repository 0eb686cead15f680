// File: fit_check.cc
//
// The commit-time guard: the node ready and of the placement's mode, whole-GPU counts within the
// node's total, and for mGPU every GPU present, healthy, not held whole, under the instance limit,
// with the compute and memory the pod's peak phase needs.
#include "gpusched/placement/fit_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "gpusched/model/names.h"
#include "gpusched/placement/pod_gpu_use.h"

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

  for (const ContainerAssignment& c : placement.containers) {
    if (c.gpu_indices.empty()) {
      return FailedPreconditionError(fmt::format("container {} has no GPU assigned", c.container));
    }
  }
  for (const GpuUse& use : PodGpuUse(placement.containers)) {
    const GpuSlot* s = node.FindGpu(use.index);
    if (s == nullptr) return FailedPreconditionError(fmt::format("GPU{} does not exist on the node", use.index));
    if (!s->healthy) return FailedPreconditionError(fmt::format("GPU{} {}", use.index, s->mig ? "has MIG enabled" : "is unhealthy"));
    if (s->exclusive) return FailedPreconditionError(fmt::format("GPU{} is held whole by another container", use.index));
    if (use.conflict) {
      return FailedPreconditionError(
          fmt::format("GPU{} is held whole by one of the pod's containers and shared with another", use.index));
    }
    if (use.exclusive) {
      if (!s->idle()) {
        return FailedPreconditionError(fmt::format("GPU{} is not idle ({} instances)", use.index, s->instances));
      }
      continue;
    }
    if (s->instances + use.instances > kMaxInstancesPerGpu) {
      return FailedPreconditionError(fmt::format("GPU{} already runs {} mGPU instances, the pod adds {} (max {})",
                                                 use.index, s->instances, use.instances, kMaxInstancesPerGpu));
    }
    if (s->free_milli() < use.milli || s->free_mib() < use.mib) {
      return FailedPreconditionError(fmt::format("GPU{} has {}% core and {} MiB free, the pod needs {}% and {} MiB there",
                                                 use.index, CorePercentFromMilli(s->free_milli()), s->free_mib(),
                                                 CorePercentFromMilli(use.milli), use.mib));
    }
  }
  return OkStatus();
}

}  // namespace gpusched::placement
