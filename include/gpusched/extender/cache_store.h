// File: cache_store.h
//
// CacheStore: the per-shape caches of the last few pod shapes (placement/score_cache.h for
// device-plugin pods, keyed by node policy, target workload and request shape;
// placement/dra_verdict_cache.h for claim pods, keyed by DraPlanner::shape()). A request borrows
// its shape's cache for the length of its scan and hands it back; two requests of the same shape
// at once each get one (the second a fresh one), so no lock is held while nodes are evaluated.
//
// Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/dra/types.h"
#include "gpusched/placement/dra_verdict_cache.h"
#include "gpusched/placement/score_cache.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::extender {

template <typename Key, typename Cache>
class CacheStore {
 public:
  struct Loan {
    Key key;
    std::shared_ptr<const void> pinned;  // what the key names by address, held while cached
    std::unique_ptr<Cache> cache;
  };

  explicit CacheStore(size_t capacity = 8) : capacity_(capacity) {}

  // Lends the cache kept under `key`; a new empty one if none is held.
  Loan Borrow(Key key, std::shared_ptr<const void> pinned = nullptr) GPUSCHED_EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      for (auto it = held_.begin(); it != held_.end(); ++it) {
        if (!(it->key == key)) continue;
        Loan loan = std::move(*it);
        held_.erase(it);
        return loan;
      }
    }
    return Loan{std::move(key), std::move(pinned), std::make_unique<Cache>()};
  }
  // Takes a loan back; the least recently returned cache goes beyond `capacity`.
  void Return(Loan loan) GPUSCHED_EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    held_.push_back(std::move(loan));
    if (held_.size() > capacity_) held_.erase(held_.begin());
  }

 private:
  const size_t capacity_;
  Mutex mu_;
  std::vector<Loan> held_ GPUSCHED_GUARDED_BY(mu_);  // most recently returned last
};

using ScoreCacheStore = CacheStore<std::string, placement::ScoreCache>;
using DraVerdictCacheStore = CacheStore<std::vector<dra::ResourceClaim>, placement::DraVerdictCache>;

}  // namespace gpusched::extender
