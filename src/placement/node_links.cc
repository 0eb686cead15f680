// File: node_links.cc
//
// node_links.h: islands and free connected sets from the node's GPU slots, and the phrases
// explain shows beside a fitting node.
#include "gpusched/placement/node_links.h"

#include <fmt/format.h>

#include <bit>

#include "gpusched/placement/kinds.h"

namespace gpusched::placement {
namespace {

std::vector<int> IndicesOf(const NodeState& node, GpuSet set) {
  std::vector<int> out;
  for (; set != 0; set &= set - 1) out.push_back(node.gpus[std::countr_zero(set)].index);
  return out;
}

std::vector<int> PositionIndices(const NodeState& node) {
  std::vector<int> out;
  for (const GpuSlot& s : node.gpus) out.push_back(s.index);
  return out;
}

bool HasIslands(const NodeState& node) { return node.links != nullptr && node.links->islands && node.gpus.size() <= 64; }

}  // namespace

std::vector<std::vector<int>> Islands(const NodeState& node) {
  std::vector<std::vector<int>> out;
  if (!HasIslands(node)) return out;
  GpuSet all = node.gpus.size() == 64 ? ~GpuSet{0} : (GpuSet{1} << node.gpus.size()) - 1;
  for (GpuSet part : Parts(node.links->nvlink, all)) out.push_back(IndicesOf(node, part));
  return out;
}

std::optional<GpuSet> FreeGpus(const NodeState& node) {
  const Kind* kind = KindFor(node.mode);
  if (node.gpus.size() > 64 || !node.ready() || kind == nullptr) return std::nullopt;
  return kind->FreeGpuSet(node);
}

std::vector<int> LargestFreeConnected(const NodeState& node) {
  std::optional<GpuSet> free = FreeGpus(node);
  if (!HasIslands(node) || !free) return {};
  int best = LargestConnected(node.links->nvlink, *free);
  if (best == 0) return {};
  std::vector<GpuSet> sets;
  ConnectedSets(node.links->nvlink, *free, best, 1, &sets);
  return sets.empty() ? std::vector<int>{} : IndicesOf(node, sets.front());
}

std::string LinksNote(const NodeState& node, const PodRequest& request, const PlacementOptions& options) {
  const Kind* kind = KindFor(request.kind);
  if (!HasIslands(node) || kind == nullptr) return "";
  return kind->LinksNote(node, request, options);
}

std::string DescribeContainerSets(const NodeState& node, const Placement& placement, GpuSet idle) {
  std::vector<int> indices = PositionIndices(node);
  std::string out;
  for (const ContainerAssignment& c : placement.containers) {
    if (c.gpu_indices.size() < 2 && !c.exclusive) continue;
    GpuSet set = 0;
    for (int index : c.gpu_indices) {
      for (size_t p = 0; p < node.gpus.size(); ++p) set |= node.gpus[p].index == index ? GpuSet{1} << p : 0;
    }
    if (!out.empty()) out += "; ";
    out += fmt::format("container {}: {}", c.container, DescribeSet(*node.links, indices, set, idle));
  }
  return out;
}

}  // namespace gpusched::placement
