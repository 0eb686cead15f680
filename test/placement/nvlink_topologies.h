// NVLink topologies of the churn tests (nvlink_churn_test.cc and its DRA and whole-GPU
// companions): peers by GPU index, as the node agent publishes them (GpuDevice::nvlink_peers).
#pragma once

#include <cstddef>
#include <vector>

#include "gpusched/common/random.h"
#include "gpusched/placement/gpu_links.h"

namespace gpusched::placement {

using Peers = std::vector<std::vector<int>>;

// `n` GPUs in NVLink pairs: GPU i with GPU i ^ stride (stride 1: 0-1, 2-3; stride 2: 0-2, 1-3).
inline Peers Pairs(int n, int stride = 1) {
  Peers out;
  for (int i = 0; i < n; ++i) out.push_back({i ^ stride});
  return out;
}

// The V100 hybrid cube mesh of DGX-1: two fully linked quads, each GPU linked to its twin.
inline const Peers& CubeMesh() {
  static const Peers cube = {{1, 2, 3, 4}, {0, 2, 3, 5}, {0, 1, 3, 6}, {0, 1, 2, 7},
                             {0, 5, 6, 7}, {1, 4, 6, 7}, {2, 4, 5, 7}, {3, 4, 5, 6}};
  return cube;
}

// NVSwitch: every GPU linked to every other (no set better than another).
inline Peers Switched(int n) {
  Peers out(n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (i != j) out[i].push_back(j);
    }
  }
  return out;
}

// The links as a graph by position (index = position).
inline std::vector<GpuSet> Graph(const Peers& peers) {
  std::vector<GpuSet> graph(peers.size(), 0);
  for (size_t i = 0; i < peers.size(); ++i) {
    for (int j : peers[i]) graph[i] |= GpuSet{1} << j;
  }
  return graph;
}

// True if `free` GPUs hold an NVLink-connected set of `k` over `graph`.
inline bool HasConnectedSet(const std::vector<GpuSet>& graph, GpuSet free, int k) {
  std::vector<GpuSet> sets;
  ConnectedSets(graph, free, k, 1, &sets);
  return !sets.empty();
}

// The churn's step: removes one of `running` at random.
template <typename T>
void EraseOneAtRandom(std::vector<T>* running, Rng& rng) {
  size_t at = static_cast<size_t>(rng.Unit() * static_cast<double>(running->size())) % running->size();
  running->erase(running->begin() + static_cast<std::ptrdiff_t>(at));
}

}  // namespace gpusched::placement
