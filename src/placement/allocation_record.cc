// File: allocation_record.cc
//
// Both directions of the record: the result annotations written at bind (each mGPU container's GPU
// index list), and the observed allocation rebuilt from a bound pod's request and those
// annotations; a list not naming exactly the container's cards counts as unassigned.
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
               .origin = AllocationOrigin::kObserved,
               .priority = pod.priority,
               .terminating = pod.terminating};
  a.placement.kind = request.kind;
  if (!request.valid()) {
    a.problem = fmt::format("pod {}/{} is bound with an invalid GPU request: {}", pod.namespace_name, pod.name,
                            request.invalid_reason);
  }
  if (!request.unplaceable_reason.empty()) a.warning = fmt::format("ignored: {}", request.unplaceable_reason);
  if (request.kind == RequestKind::kWholeGpu) a.placement.whole_gpus = request.whole_gpus;
  if (request.kind != RequestKind::kMgpu) return a;
  for (const MgpuContainerRequest& c : request.containers) {
    ContainerAssignment ca{.container = c.container,
                           .exclusive = c.whole_card,
                           .init_position = c.init_position,
                           .sidecar = c.sidecar};
    auto it = pod.annotations.find(fmt::format("{}{}", names::kGpuIndexContainerPrefix, c.container));
    if (it != pod.annotations.end()) ca.gpu_indices = ParseGpuIndexList(it->second);
    // A list that does not name exactly the container's cards cannot say where the rest went.
    if (static_cast<int>(ca.gpu_indices.size()) != c.cards) ca.gpu_indices.clear();
    ca.milli_per_gpu = c.milli_per_card;
    ca.mib_per_gpu = c.mib_per_card;
    if (ca.gpu_indices.empty()) {  // unassigned: the container's totals count against the node
      ca.milli_per_gpu *= c.cards;
      ca.mib_per_gpu *= c.cards;
    }
    a.placement.containers.push_back(std::move(ca));
  }
  return a;
}

}  // namespace gpusched::placement
