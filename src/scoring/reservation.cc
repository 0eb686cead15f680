// File: reservation.cc
//
// Reservation for picky pods: which sampled shapes are picky (whole GPUs, every GPU of each node
// they fit empty, at most `share` of the GPU nodes), whether a node is reserved, and whether a pod
// is at least as demanding as some picky shape.
#include "gpusched/scoring/reservation.h"

#include <algorithm>
#include <tuple>

namespace gpusched::scoring {

bool FitsEmpty(const PodShape& pod, const NodeView& node) {
  if (pod.cpu > node.cpu_cap || pod.mem > node.mem_cap) return false;
  if (!pod.uses_gpu()) return true;
  return pod.gpus <= node.gpu_count && pod.milli <= kMilliPerGpu && ModelAllowed(pod.spec, node.model);
}

std::vector<PodShape> PickyShapes(std::span<const WorkloadSample> samples, std::span<const NodeView> nodes, double share) {
  std::vector<PodShape> shapes;
  for (const WorkloadSample& s : samples) {
    if (s.shape.uses_gpu()) shapes.push_back(s.shape);
  }
  auto key = [](const PodShape& p) { return std::tie(p.cpu, p.mem, p.gpus, p.milli, p.spec); };
  std::sort(shapes.begin(), shapes.end(), [&](const PodShape& a, const PodShape& b) { return key(a) < key(b); });
  shapes.erase(std::unique(shapes.begin(), shapes.end()), shapes.end());
  std::vector<const NodeView*> gpu_nodes;
  for (const NodeView& n : nodes) {
    if (n.gpu_count > 0) gpu_nodes.push_back(&n);
  }
  std::vector<PodShape> picky;
  double most = share * static_cast<double>(gpu_nodes.size());
  for (const PodShape& s : shapes) {
    if (s.milli != kMilliPerGpu) continue;  // a share of a GPU never needs a drained node
    size_t fitting = 0;
    bool whole = true;  // all the GPUs of every node it fits
    for (const NodeView* n : gpu_nodes) {
      if (!FitsEmpty(s, *n)) continue;
      ++fitting;
      whole = whole && s.gpus == n->gpu_count;
    }
    if (fitting > 0 && static_cast<double>(fitting) <= most && whole) picky.push_back(s);
  }
  return picky;
}

bool Reserved(const NodeView& node, const TargetWorkload& workload) {
  return std::any_of(workload.picky.begin(), workload.picky.end(), [&](const PodShape& s) { return FitsEmpty(s, node); });
}

bool Picky(const PodShape& pod, const TargetWorkload& workload) {
  return std::any_of(workload.picky.begin(), workload.picky.end(), [&](const PodShape& s) {
    bool narrower = s.spec == 0 || (pod.spec != 0 && (pod.spec & ~s.spec) == 0);
    return pod.cpu >= s.cpu && pod.mem >= s.mem && pod.gpus >= s.gpus && pod.milli >= s.milli && narrower;
  });
}

}  // namespace gpusched::scoring
