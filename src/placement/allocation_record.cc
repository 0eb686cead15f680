// File: allocation_record.cc
//
// Both directions of the record, each as the pod's kind says: the result annotations written at
// bind (each mGPU container's GPU index list), and the observed allocation rebuilt from a bound
// pod's request and those annotations.
#include "gpusched/placement/allocation_record.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "gpusched/placement/kinds.h"

namespace gpusched::placement {

AnnotationMap ResultAnnotations(const Placement& placement) {
  const Kind* kind = KindFor(placement.kind);
  return kind != nullptr ? kind->ResultAnnotations(placement) : AnnotationMap{};
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
  if (const Kind* kind = KindFor(request.kind); kind != nullptr) kind->Record(pod, request, &a.placement);
  return a;
}

}  // namespace gpusched::placement
