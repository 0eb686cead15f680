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
// Pure: no I/O and no clock. The work is bounded (AllocatorInput::max_steps); hitting the bound
// answers kUnschedulable with a reason that says so, as upstream's filter timeout does.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/dra/cel.h"
#include "gpusched/dra/types.h"

namespace gpusched::dra {

// A ResourceSlice plus a cache of selector verdicts for its devices: the slice is immutable, so a
// (selector, device) verdict never changes and is computed once across all pods and nodes.
class IndexedSlice {
 public:
  explicit IndexedSlice(ResourceSlice slice) : slice_(std::move(slice)) {}
  const ResourceSlice& slice() const { return slice_; }

  // Verdicts of one compiled selector on this slice's devices. Thread-safe.
  struct Verdicts {
    explicit Verdicts(size_t n) : state(new std::atomic<uint8_t>[n]), size(n) {
      for (size_t i = 0; i < n; ++i) state[i].store(0, std::memory_order_relaxed);
    }
    std::unique_ptr<std::atomic<uint8_t>[]> state;  // 0 unknown, 1 true, 2 false, 3 error
    size_t size;
    mutable Mutex mu;
    std::map<size_t, std::string> errors GPUSCHED_GUARDED_BY(mu);
  };
  Verdicts* VerdictsFor(const cel::Program* program) const;

 private:
  ResourceSlice slice_;
  mutable Mutex mu_;
  mutable std::vector<std::pair<const cel::Program*, std::unique_ptr<Verdicts>>> verdicts_ GPUSCHED_GUARDED_BY(mu_);
};

// Every ResourceSlice of the cluster, indexed for per-node gathering.
class SliceIndex {
 public:
  explicit SliceIndex(std::vector<ResourceSlice> slices);

  // Slices that may be relevant for `node`: its own (spec.nodeName) and every slice that selects
  // nodes otherwise (allNodes, nodeSelector, perDeviceNodeSelection).
  std::vector<const IndexedSlice*> Candidates(const std::string& node) const;
  // Every slice of pool (driver, pool), on any node.
  const std::vector<const IndexedSlice*>& Pool(const std::string& driver, const std::string& pool) const;
  const std::vector<std::unique_ptr<IndexedSlice>>& all() const { return slices_; }

 private:
  std::vector<std::unique_ptr<IndexedSlice>> slices_;
  std::map<std::string, std::vector<const IndexedSlice*>, std::less<>> by_node_;
  std::vector<const IndexedSlice*> unpinned_;
  std::map<std::pair<std::string, std::string>, std::vector<const IndexedSlice*>> by_pool_;
};

// Devices held by the cluster's allocated claims (and allocations in flight).
struct AllocatedDevices {
  std::set<DeviceId> exclusive;
  std::set<DeviceId> shared;  // devices with at least one shareID allocation
  std::map<DeviceId, std::map<std::string, int64_t>> consumed_capacity_milli;

  // Adds the devices of `result`; adminAccess results hold nothing.
  void Add(const AllocationResult& result);
  bool Holds(const DeviceId& id) const { return exclusive.contains(id) || shared.contains(id) || consumed_capacity_milli.contains(id); }
};

struct Features {
  bool admin_access = true;
  bool prioritized_list = true;
  bool partitionable_devices = true;
  bool device_taints = true;
  bool consumable_capacity = true;
  bool binding_conditions = true;
};

struct NodeInfo {
  std::string name;
  std::map<std::string, std::string, std::less<>> labels;
};

struct AllocatorInput {
  const NodeInfo* node = nullptr;
  std::vector<const ResourceClaim*> claims;  // unallocated claims, in pod order
  const SliceIndex* slices = nullptr;
  const std::map<std::string, DeviceClass, std::less<>>* classes = nullptr;
  const AllocatedDevices* allocated = nullptr;
  cel::ProgramCache* programs = nullptr;
  // Namespaces labelled resource.kubernetes.io/admin-access=true (admission's rule for adminAccess).
  const std::set<std::string, std::less<>>* admin_namespaces = nullptr;
  Features features;
  int64_t max_steps = 200'000;  // allocateOne calls before giving up
  // Share IDs for consumable-capacity results; default: a counter-derived UUID.
  std::function<std::string()> new_share_id;
};

struct AllocatorOutcome {
  enum class Kind { kAllocated, kUnschedulable, kError };
  Kind kind = Kind::kUnschedulable;
  std::vector<AllocationResult> results;  // per claim, when kAllocated
  std::string reason;                      // kUnschedulable: why no device set fits; kError: the error
  int64_t steps = 0;                       // allocateOne invocations, as upstream counts them
  bool invalid_pools = false;              // invalid pools were seen on the node
};

AllocatorOutcome Allocate(const AllocatorInput& input);

// Returns true if `selector` selects the node (terms ORed, requirements ANDed).
bool NodeSelectorMatches(const NodeSelector& selector, const NodeInfo& node);

// Returns true if `toleration` tolerates `taint` (resourceclaim.ToleratesTaint).
bool ToleratesTaint(const DeviceToleration& toleration, const DeviceTaint& taint);

}  // namespace gpusched::dra
