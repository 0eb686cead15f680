// File: workload_cache.h
//
// The workload mix fgd and the soft policies plan for (M): what is booked in the cluster now. It
// changes slowly, so it is rebuilt from a newer snapshot at most every `refresh`.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "gpusched/common/clock.h"
#include "gpusched/common/mutex.h"
#include "gpusched/inventory/snapshot.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::extender {

class WorkloadCache {
 public:
  // REQUIRES: `clock` outlives the cache.
  explicit WorkloadCache(const Clock* clock, std::chrono::seconds refresh = std::chrono::seconds(30))
      : clock_(clock), refresh_(refresh) {}

  // Returns M as observed on `snapshot`, or as observed on an older snapshot less than `refresh` ago.
  std::shared_ptr<const scoring::TargetWorkload> Get(const inventory::InventorySnapshot& snapshot) const
      GPUSCHED_EXCLUDES(mu_);

 private:
  const Clock* const clock_;
  const std::chrono::seconds refresh_;
  mutable Mutex mu_;
  mutable std::shared_ptr<const scoring::TargetWorkload> workload_ GPUSCHED_GUARDED_BY(mu_);
  mutable uint64_t version_ GPUSCHED_GUARDED_BY(mu_) = 0;
  mutable std::chrono::steady_clock::time_point built_at_ GPUSCHED_GUARDED_BY(mu_);
};

}  // namespace gpusched::extender
