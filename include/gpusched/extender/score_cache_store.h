// File: score_cache_store.h
//
// The score caches (placement/score_cache.h) of the last few pod shapes, each under one node
// policy and one target workload. A request borrows its shape's cache for the length of its
// scan and hands it back; two requests of the same shape at once each get one (the second a
// fresh one), so no lock is held while nodes are evaluated.
//
// Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/placement/score_cache.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::extender {

class ScoreCacheStore {
 public:
  struct Loan {
    std::string key;
    std::shared_ptr<const scoring::TargetWorkload> workload;  // held: the key names it by address
    std::unique_ptr<placement::ScoreCache> cache;
  };

  explicit ScoreCacheStore(size_t capacity = 8) : capacity_(capacity) {}

  // Lends the cache for (policy, shape key, workload); a new empty one if none is held.
  Loan Borrow(std::string_view policy, const std::string& shape_key,
              std::shared_ptr<const scoring::TargetWorkload> workload) GPUSCHED_EXCLUDES(mu_);
  // Takes a loan back; the least recently returned cache goes beyond `capacity`.
  void Return(Loan loan) GPUSCHED_EXCLUDES(mu_);

 private:
  const size_t capacity_;
  Mutex mu_;
  std::vector<Loan> held_ GPUSCHED_GUARDED_BY(mu_);  // most recently returned last
};

}  // namespace gpusched::extender
