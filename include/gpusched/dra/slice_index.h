// File: slice_index.h
//
// Every ResourceSlice of the cluster, indexed for per-node gathering and per-pool counting, with
// what is computed once per slice: the verdicts of each compiled selector on its devices (a slice
// is immutable, so a verdict never changes) and which of its devices the cluster holds.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/dra/allocated_devices.h"
#include "gpusched/dra/cel.h"
#include "gpusched/dra/types.h"

namespace gpusched::dra {

// A ResourceSlice plus a cache of selector verdicts for its devices: the slice is immutable, so a
// (selector, device) verdict never changes and is computed once across all pods and nodes.
class IndexedSlice {
 public:
  explicit IndexedSlice(SlicePtr slice) : slice_(std::move(slice)) {}
  const ResourceSlice& slice() const { return *slice_; }
  const SlicePtr& shared() const { return slice_; }

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
  void MarkHeld(const AllocatedDevices& allocated);
  // Returns the marks if they were computed for `allocated`, else nullptr.
  const std::vector<uint8_t>* HeldBy(const AllocatedDevices* allocated) const {
    return held_for_ == allocated ? &held_ : nullptr;
  }
  // True if both hold the same slice and the same devices of it are held and consumed.
  bool SameAs(const IndexedSlice& other) const {
    return slice_ == other.slice_ && held_ == other.held_ && consumed_ == other.consumed_;
  }

 private:
  SlicePtr slice_;
  friend class SliceIndex;
  size_t pool_id_ = 0;
  const AllocatedDevices* held_for_ = nullptr;
  std::vector<uint8_t> held_;
  // The capacity `allocated` consumes of each device that has some, by device index, computed
  // with the marks above.
  std::vector<std::pair<size_t, std::map<std::string, int64_t>>> consumed_;
  mutable Mutex mu_;
  mutable std::vector<std::pair<const cel::Program*, std::unique_ptr<Verdicts>>> verdicts_ GPUSCHED_GUARDED_BY(mu_);
};

// Every ResourceSlice of the cluster, indexed for per-node gathering.
class SliceIndex {
 public:
  explicit SliceIndex(std::vector<SlicePtr> slices);
  explicit SliceIndex(std::vector<ResourceSlice> slices);  // each shared anew

  // Slices that may be relevant for `node`: its own (spec.nodeName) and every slice that selects
  // nodes otherwise (allNodes, nodeSelector, perDeviceNodeSelection).
  std::vector<const IndexedSlice*> Candidates(std::string_view node) const;
  // The slices published for `node` (spec.nodeName), in index order; empty if none.
  const std::vector<const IndexedSlice*>& PinnedTo(std::string_view node) const;
  // Names of the nodes that have pinned slices, with them, in name order.
  const std::map<std::string, std::vector<const IndexedSlice*>, std::less<>>& by_node() const { return by_node_; }
  // Slices that select nodes otherwise (allNodes, nodeSelector, perDeviceNodeSelection).
  const std::vector<const IndexedSlice*>& unpinned() const { return unpinned_; }
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

}  // namespace gpusched::dra
