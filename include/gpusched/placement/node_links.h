// File: node_links.h
//
// What explain and the inventory say about a node's NVLink islands (gpu_links.h): the islands,
// the largest NVLink-connected set of free GPUs, and for a pod that fits, how its GPUs stand:
// the connected set an mGPU container was given (and what it leaves), or for whole GPUs whether
// the node has a connected set of the pod's size (whole_gpu_sets.h; the device plugin picks the
// cards). Nodes without islands say nothing.
//
// Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpusched/placement/gpu_links.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::placement {

// The node's islands (connected parts of its NVLink graph), as device indices; empty without
// islands.
std::vector<std::vector<int>> Islands(const NodeState& node);
// The free GPUs of a ready node where its mode's kind knows them (Kind::FreeGpuSet: on an mGPU
// node the healthy GPUs no container uses, on a whole-GPU node KnownFreeGpus); else nullopt.
std::optional<GpuSet> FreeGpus(const NodeState& node);
// The device indices of the largest NVLink-connected set of free GPUs (empty when unknown or none).
std::vector<int> LargestFreeConnected(const NodeState& node);
// For a pod that fits `node` (judged with `options`): how its GPUs stand on the node's links
// (Kind::LinksNote); "" without islands.
std::string LinksNote(const NodeState& node, const PodRequest& request, const PlacementOptions& options);
// "container c: NVLink-connected GPU2+GPU3; largest NVLink-connected idle set left: GPU0+GPU1" for
// each container of `placement` on two or more GPUs or a whole card, `idle` the node's free GPUs
// before the pod. REQUIRES: `node` has links.
std::string DescribeContainerSets(const NodeState& node, const Placement& placement, GpuSet idle);

}  // namespace gpusched::placement
