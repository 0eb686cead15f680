// File: dra_links.h
//
// NVLink islands for DRA: on a node whose GPUs form islands (gpu_links.h), the sets of its free
// GPU devices that a pod's multi-GPU requests should take, best first, as restrictions for the
// allocator (dra::AllocatorInput::only). A DRA device is one of the node's GPUs when its driver
// is a GPU driver and its `uuid` attribute is a GPU's UUID as the node agent publishes it; MIG
// devices and devices without that attribute are never in a set.
//
// A request counts when it asks for an exact count of two or more devices (`exactly`) of a class
// named after a GPU driver (the NVIDIA chart's `gpu.nvidia.com`; not `mig.nvidia.com`); each
// choice gives every such request of the pod one NVLink-connected set of free GPUs, the first
// request its sets in order of preference (the largest connected idle set left, then more links
// inside), each later request the best set of what is left. The allocator still applies every
// rule of the request (selectors, constraints, taints): a choice it refuses is simply not taken.
//
// Pure.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "gpusched/dra/allocated_devices.h"
#include "gpusched/dra/allocator.h"
#include "gpusched/dra/slice_index.h"
#include "gpusched/placement/node_state.h"

namespace gpusched::placement {

// At most `max` restrictions for `claims` on `node`, best first; empty when the node has no
// islands, no request counts, or no request can get a connected set of free GPUs.
std::vector<dra::DeviceRestriction> LinkedChoices(const NodeState& node, const std::vector<const dra::ResourceClaim*>& claims,
                                                  const dra::SliceIndex& slices, const dra::AllocatedDevices& held,
                                                  const std::vector<std::string>& gpu_drivers, size_t max);

}  // namespace gpusched::placement
