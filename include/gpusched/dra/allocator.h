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
#include <string_view>
#include <unordered_map>
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
  // Pools numbered in (driver, pool name) order by the SliceIndex that holds the slice.
  size_t pool_id() const { return pool_id_; }

  // What `allocated` holds of this slice's devices, precomputed (a bitmap beats a set of
  // strings on the hot path): kHeldExclusive / kHeldShared per device index.
  static constexpr uint8_t kHeldExclusive = 1, kHeldShared = 2;
  void MarkHeld(const struct AllocatedDevices& allocated);
  // Returns the marks if they were computed for `allocated`, else nullptr.
  const std::vector<uint8_t>* HeldBy(const struct AllocatedDevices* allocated) const {
    return held_for_ == allocated ? &held_ : nullptr;
  }

 private:
  ResourceSlice slice_;
  friend class SliceIndex;
  size_t pool_id_ = 0;
  const struct AllocatedDevices* held_for_ = nullptr;
  std::vector<uint8_t> held_;
  mutable Mutex mu_;
  mutable std::vector<std::pair<const cel::Program*, std::unique_ptr<Verdicts>>> verdicts_ GPUSCHED_GUARDED_BY(mu_);
};

// Every ResourceSlice of the cluster, indexed for per-node gathering.
class SliceIndex {
 public:
  explicit SliceIndex(std::vector<ResourceSlice> slices);

  // Slices that may be relevant for `node`: its own (spec.nodeName) and every slice that selects
  // nodes otherwise (allNodes, nodeSelector, perDeviceNodeSelection).
  std::vector<const IndexedSlice*> Candidates(std::string_view node) const;
  // Every slice of the slice's pool (driver, pool), on any node.
  const std::vector<const IndexedSlice*>& PoolOf(const IndexedSlice& slice) const { return pools_[slice.pool_id()]; }
  const std::vector<std::unique_ptr<IndexedSlice>>& all() const { return slices_; }
  // True if some slice selects nodes by label (allNodes, nodeSelector, per device).
  bool has_unpinned() const { return !unpinned_.empty(); }

 private:
  std::vector<std::unique_ptr<IndexedSlice>> slices_;
  std::map<std::string, std::vector<const IndexedSlice*>, std::less<>> by_node_;
  std::vector<const IndexedSlice*> unpinned_;
  std::vector<std::vector<const IndexedSlice*>> pools_;  // by pool id: ids follow (driver, pool) order
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

// The node being judged. REQUIRES: what the pointers and views refer to outlives the use.
struct NodeInfo {
  std::string_view name;
  const std::map<std::string, std::string, std::less<>>* labels = nullptr;  // null: no labels
};

// The pools and candidate devices visible from one node (dra.md §2.2), in canonical order. Pure
// function of the slices, the node and the features: computed once per node and reused.
struct NodePools;
using NodePoolsPtr = std::shared_ptr<const NodePools>;
NodePoolsPtr GatherNodePools(const SliceIndex& slices, const NodeInfo& node, const Features& features);

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

// Returns true if `selector` selects the node (terms ORed, requirements ANDed).
bool NodeSelectorMatches(const NodeSelector& selector, const NodeInfo& node);

// Returns true if `toleration` tolerates `taint` (resourceclaim.ToleratesTaint).
bool ToleratesTaint(const DeviceToleration& toleration, const DeviceTaint& taint);

}  // namespace gpusched::dra
