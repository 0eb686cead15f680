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
// LinksOfChoice judges a choice already made (upstream's first fit, where kube-scheduler allocates),
// for filter to prefer the nodes where it is connected.
//
// Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/dra/allocated_devices.h"
#include "gpusched/dra/allocator.h"
#include "gpusched/dra/slice_index.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/whole_gpu_sets.h"

namespace gpusched::placement {

// At most `max` restrictions for `claims` on `node`, best first; empty when the node has no
// islands, no request counts, or no request can get a connected set of free GPUs.
std::vector<dra::DeviceRestriction> LinkedChoices(const NodeState& node, const std::vector<const dra::ResourceClaim*>& claims,
                                                  const dra::SliceIndex& slices, const dra::AllocatedDevices& held,
                                                  const std::vector<std::string>& gpu_drivers, size_t max);

// True if some request of `claims` counts: a multi-GPU request (above).
bool HasMultiGpuRequest(const std::vector<const dra::ResourceClaim*>& claims, const std::vector<std::string>& gpu_drivers);

// How a device set chosen for a pod's claims stands on a node's NVLink islands.
struct ChosenLinks {
  LinkedStanding standing = LinkedStanding::kUnknown;
  // kScattered: the first request whose GPUs are not connected (its claim by position) and those
  // GPUs ("GPU1+GPU2"); kConnected: the first request that counts, and its GPUs.
  size_t claim = 0;
  std::string request;
  std::string gpus;
};
// How the device sets `chosen` (one result per claim of `claims`, in order) stand on `node`'s
// islands: kConnected when every request that counts got NVLink-connected GPUs; kScattered when
// one did not; kUnknown where the node has no islands, no request counts, or a chosen device is
// not one of the agent's GPUs.
ChosenLinks LinksOfChoice(const NodeState& node, const std::vector<const dra::ResourceClaim*>& claims,
                          const std::vector<dra::AllocationResult>& chosen, const dra::SliceIndex& slices,
                          const std::vector<std::string>& gpu_drivers);
// "the devices allocated here for claim pair request gpus would be GPU1+GPU2, not NVLink-connected"
// (kScattered) or "..., NVLink-connected" (kConnected), for `links` whose claim is `claim_name`.
std::string DescribeChosenLinks(const ChosenLinks& links, std::string_view claim_name);

}  // namespace gpusched::placement
