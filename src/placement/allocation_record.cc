#include "gpusched/placement/allocation_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "gpusched/model/names.h"
#include "gpusched/model/units.h"

namespace gpusched::placement {

AnnotationMap ResultAnnotations(const Placement& placement) {
  AnnotationMap out;
  if (placement.kind != RequestKind::kMgpu) return out;
  for (const ContainerAssignment& c : placement.containers) {
    out[fmt::format("{}{}", names::kGpuIndexContainerPrefix, c.container)] = fmt::format("{}", fmt::join(c.gpu_indices, ","));
  }
  out[std::string(names::kAssumed)] = "true";
  return out;
}

std::vector<int> ParseGpuIndexList(std::string_view text) {
  std::vector<int> out;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? text.npos : comma - start);
    int v = -1;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || v < 0) return {};
    if (std::find(out.begin(), out.end(), v) != out.end()) return {};
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

Allocation RecordedAllocation(const Pod& pod, const PodRequest& request) {
  Allocation a{.pod_uid = pod.uid,
               .pod_namespace = pod.namespace_name,
               .pod_name = pod.name,
               .node_name = pod.node_name,
               .mode = ModeServing(request.kind),
               .origin = AllocationOrigin::kObserved};
  a.placement.kind = request.kind;
  if (request.kind == RequestKind::kWholeGpu) a.placement.whole_gpus = request.whole_gpus;
  if (request.kind != RequestKind::kMgpu) return a;
  for (const MgpuContainerRequest& c : request.containers) {
    ContainerAssignment ca{.container = c.container, .exclusive = c.whole_card};
    auto it = pod.annotations.find(fmt::format("{}{}", names::kGpuIndexContainerPrefix, c.container));
    if (it != pod.annotations.end()) ca.gpu_indices = ParseGpuIndexList(it->second);
    // The container's totals split evenly over the GPUs the node agent was told to use.
    int64_t cards = ca.gpu_indices.empty() ? c.cards : static_cast<int64_t>(ca.gpu_indices.size());
    if (c.whole_card) {
      ca.milli_per_gpu = kMilliPerGpu;
      if (ca.gpu_indices.empty()) ca.milli_per_gpu = kMilliPerGpu * c.cards;  // unassigned: count the total
    } else {
      ca.milli_per_gpu = MilliFromCorePercent(c.core_percent) / cards;
      ca.mib_per_gpu = c.memory_mib / cards;
      if (ca.gpu_indices.empty()) {
        ca.milli_per_gpu = MilliFromCorePercent(c.core_percent);
        ca.mib_per_gpu = c.memory_mib;
      }
    }
    a.placement.containers.push_back(std::move(ca));
  }
  return a;
}

}  // namespace gpusched::placement
