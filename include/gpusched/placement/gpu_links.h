// File: gpu_links.h
//
// The links between a node's GPUs as the node agent publishes them (GpuDevice::nvlink_peers and
// pcie_peers, from `nvidia-smi topo -m`), as graphs over the GPUs' positions in NodeState::gpus,
// and the choice of a GPU set by them: multi-GPU work runs only as fast as the links between its
// GPUs, and PCIe cards joined by NVLink bridges come in islands (pairs, quads, a hybrid cube mesh).
//
// A set is NVLink-connected when its GPUs reach one another over NVLink links inside the set.
// Among connected sets, the better one leaves the largest NVLink-connected set of idle GPUs for
// the next pod, then has more links inside it.
//
// Pure.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/model/gpu.h"

namespace gpusched::placement {

// A set of GPU positions, bit p for position p.
using GpuSet = uint64_t;

struct GpuLinks {
  std::vector<GpuSet> nvlink;  // by position: the positions joined to it by NVLink
  std::vector<GpuSet> pcie;    // by position: the positions behind the same PCIe switch
  bool islands = false;        // NVLink joins some pairs but not all (false on NVSwitch nodes)
};

// The links of `devices` (positions as in the vector; peers name device indices). Null when they
// tell placement nothing, so that the node is placed as it was before topology: no links
// published, NVLink joining every pair (an NVSwitch node) with no PCIe switch shared by only some,
// a link to an index the node does not have, or more than 64 GPUs.
std::shared_ptr<const GpuLinks> LinksOf(const std::vector<GpuDevice>& devices);

// Whether the GPUs of `set` reach one another over `graph`'s links inside `set` (true for sets of
// zero or one GPU).
bool Connected(const std::vector<GpuSet>& graph, GpuSet set);
// The connected parts of `set` over `graph`, the one with the lowest position first.
std::vector<GpuSet> Parts(const std::vector<GpuSet>& graph, GpuSet set);
// The size of the largest connected part of `set` over `graph`.
int LargestConnected(const std::vector<GpuSet>& graph, GpuSet set);
// True if `among` holds a connected set of `k` over `graph` (k >= 1; false otherwise), without
// listing any: filter asks it of every node. ConnectedSets finds one too, unless its cut of the
// intermediate levels drops it.
bool HoldsConnectedSet(const std::vector<GpuSet>& graph, GpuSet among, int k);
// The links of `graph` between GPUs of `set`.
int LinksInside(const std::vector<GpuSet>& graph, GpuSet set);
// Appends to *out the connected subsets of `among` with `k` GPUs, ascending, at most `cap` of them
// (every smaller connected set is grown, so a set of k is found whenever one exists).
void ConnectedSets(const std::vector<GpuSet>& graph, GpuSet among, int k, size_t cap, std::vector<GpuSet>* out);

// How `set` stands on `links` with `idle` GPUs idle (`set` among them or not), for explain:
// "NVLink-connected GPU2+GPU3; 2 NVLink-connected idle GPUs left (GPU0+GPU1)", or why no
// connected set was taken. `indices[p]` is position p's device index.
std::string DescribeSet(const GpuLinks& links, const std::vector<int>& indices, GpuSet set, GpuSet idle);

}  // namespace gpusched::placement
