// File: allocator.h
//
// The structured allocator of resource.k8s.io/v1, as kube-scheduler's DynamicResources plugin
// runs it (the "incubating" variant of Kubernetes 1.36, shared/specs/dra.md §2): for one node and
// the pod's unallocated claims, a depth-first search over devices in canonical order (pools by
// driver and name, slices by name, devices as published) that returns the first complete
// assignment, so the answer is the one kube-scheduler would write. Covered: pool gathering
// (generations, incomplete and invalid pools), ExactCount and All, firstAvailable,
// matchAttribute/distinctAttribute, shared counters of partitionable devices, consumable capacity,
// device taints and tolerations, adminAccess, and the allocation result (results, config,
// nodeSelector). Counters never leak on rejection (the upstream leak fixed by #140431).
//
// The pieces, in dra/allocator/: pools.h (what a node sees), requests.h (claims checked and
// expanded), device_checks.h (selectors, holds, capacity), constraint.h, search.h (the
// depth-first search), results.h (the AllocationResult) and diagnosis.h (why nothing fits).
//
// Pure: no I/O and no clock. The work is bounded (AllocatorInput::max_steps); hitting the bound
// answers kUnschedulable with a reason that says so, as upstream's filter timeout does.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpusched/dra/allocated_devices.h"
#include "gpusched/dra/cel.h"
#include "gpusched/dra/features.h"
#include "gpusched/dra/node_selection.h"
#include "gpusched/dra/slice_index.h"
#include "gpusched/dra/types.h"

namespace gpusched::dra {

// The pools and candidate devices visible from one node (dra.md §2.2), in canonical order. Pure
// function of the slices, the node and the features: computed once per node and reused.
struct NodePools;
using NodePoolsPtr = std::shared_ptr<const NodePools>;
NodePoolsPtr GatherNodePools(const SliceIndex& slices, const NodeInfo& node, const Features& features);

// Devices a request may take, by (claim, request name): AllocatorInput::only.
using DeviceRestriction = std::map<std::pair<const ResourceClaim*, std::string>, std::set<DeviceId>>;

struct AllocatorInput {
  const NodeInfo* node = nullptr;
  std::vector<const ResourceClaim*> claims;  // unallocated claims, in pod order
  const SliceIndex* slices = nullptr;
  const std::map<std::string, DeviceClass, std::less<>>* classes = nullptr;
  const AllocatedDevices* allocated = nullptr;
  cel::ProgramCache* programs = nullptr;
  // Programs already compiled, by the address of their expression string in `claims` and
  // `classes` (a caller allocating the same claims on many nodes fills it once); optional.
  const std::unordered_map<const std::string*, const cel::Program*>* compiled = nullptr;
  // Namespaces labelled resource.kubernetes.io/admin-access=true (admission's rule for adminAccess).
  const std::set<std::string, std::less<>>* admin_namespaces = nullptr;
  Features features;
  int64_t max_steps = 200'000;  // allocateOne calls before giving up
  // The node's pools, from GatherNodePools with the same slices, node and features; null: gathered
  // by Allocate.
  const NodePools* pools = nullptr;
  // False: only whether the claims fit matters (filter); results are left empty.
  bool want_results = true;
  // False: a refusal's reason is not worked out (what-ifs that try many states); `reason` then
  // says only that no device set fits.
  bool want_reason = true;
  // Not upstream's: gpusched's own choice among the sets upstream's rules allow (a ranked choice,
  // never the compatible answer). Where it names (a claim of `claims`, a request's name), only
  // the devices listed are selectable for that request and its subrequests. Null: none.
  const DeviceRestriction* only = nullptr;
  // Share IDs for consumable-capacity results; default: a counter-derived UUID.
  std::function<std::string()> new_share_id;
};

struct AllocatorOutcome {
  enum class Kind { kAllocated, kUnschedulable, kError };
  Kind kind = Kind::kUnschedulable;
  std::vector<AllocationResult> results;  // per claim, when kAllocated and want_results
  std::set<std::string> drivers;           // kAllocated: the drivers of the allocated devices
  std::string reason;                      // kUnschedulable: why no device set fits; kError: the error
  int64_t steps = 0;                       // allocateOne invocations, as upstream counts them
  bool invalid_pools = false;              // invalid pools were seen on the node
};

AllocatorOutcome Allocate(const AllocatorInput& input);

}  // namespace gpusched::dra
