// File: whole_gpu_sets.cc
//
// whole_gpu_sets.h: the free GPUs of a whole-GPU node from the agent's PodResources reading, and
// filter's rule that keeps the nodes where a pod's GPUs can be NVLink-connected.
#include "gpusched/placement/whole_gpu_sets.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <set>

namespace gpusched::placement {
namespace {

std::string FreeList(const NodeState& node, GpuSet free) {
  std::string out;
  for (; free != 0; free &= free - 1) {
    if (!out.empty()) out += ", ";
    fmt::format_to(std::back_inserter(out), "GPU{}", node.gpus[std::countr_zero(free)].index);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::optional<GpuSet> KnownFreeGpus(const NodeState& node) {
  if (std::any_of(node.holds.begin(), node.holds.end(), [](const Allocation& h) { return h.placement.whole_gpus > 0; })) {
    return std::nullopt;  // GPUs held for a pending pod: which ones it will get is not known
  }
  return node.published_free;
}

std::optional<GpuSet> FreeByPublishedPods(const NodeState& node) {
  if (node.devices.empty() || node.devices.size() > 64 || node.devices.size() != node.gpus.size()) return std::nullopt;
  if (std::any_of(node.devices.begin(), node.devices.end(), [](const GpuDevice& d) { return !d.pods; })) return std::nullopt;
  std::set<std::string, std::less<>> bound;  // whole-GPU pods bound on the node
  for (const Allocation& a : node.allocations) {
    if (a.placement.whole_gpus > 0) bound.insert(a.pod_namespace + "/" + a.pod_name);
  }
  std::set<std::string, std::less<>> seen;
  GpuSet free = 0;
  for (size_t p = 0; p < node.devices.size(); ++p) {
    bool busy = false;
    for (const std::string& pod : *node.devices[p].pods) {
      if (bound.contains(pod)) {
        busy = true;
        seen.insert(pod);
      }
    }
    if (!busy && node.gpus[p].healthy) free |= GpuSet{1} << p;
  }
  if (seen.size() != bound.size()) return std::nullopt;  // a bound pod's GPUs are not published yet
  return free;
}

LinkedFit LinkedFitOf(const NodeState& node, int64_t gpus) {
  if (gpus < 2 || node.links == nullptr || !node.links->islands) return {};
  std::optional<GpuSet> free = KnownFreeGpus(node);
  if (!free) return {};
  if (HoldsConnectedSet(node.links->nvlink, *free, static_cast<int>(std::min<int64_t>(gpus, 65)))) {
    return LinkedFit{.standing = LinkedStanding::kConnected};
  }
  return LinkedFit{.standing = LinkedStanding::kScattered,
                   .reason = fmt::format("no NVLink-connected set of {} free GPUs (free: {})", gpus, FreeList(node, *free))};
}

std::vector<std::pair<size_t, std::string>> ScatteredNodes(const std::vector<const NodeState*>& nodes, int64_t gpus) {
  std::vector<std::pair<size_t, std::string>> scattered;
  bool connected = false;
  for (size_t i = 0; i < nodes.size(); ++i) {
    LinkedFit fit = LinkedFitOf(*nodes[i], gpus);
    connected |= fit.standing == LinkedStanding::kConnected;
    if (fit.standing == LinkedStanding::kScattered) scattered.emplace_back(i, std::move(fit.reason) + "; other nodes offered have one");
  }
  if (!connected) scattered.clear();
  return scattered;
}

}  // namespace gpusched::placement
