// File: token_bucket.h
//
// A token bucket: `rate` tokens per second up to `burst` banked, as client-go's QPS/burst limiter
// and the event budget use it.
//
// Thread-safe.
#pragma once

#include <chrono>

#include "gpusched/common/clock.h"
#include "gpusched/common/mutex.h"

namespace gpusched {

class TokenBucket {
 public:
  // rate <= 0: unlimited. The bucket starts full. `clock` is not owned and must outlive the bucket.
  TokenBucket(double rate, double burst, const Clock* clock = &RealClock());

  // Takes a token if one is banked now; returns false otherwise (nothing taken).
  bool TryTake();
  // Takes a token, possibly from the future; returns how long the caller must wait before using
  // it (zero if one was banked).
  std::chrono::nanoseconds Reserve();
  // Reserve(), then sleeps the wait.
  void Take();

 private:
  void RefillLocked(std::chrono::steady_clock::time_point now) GPUSCHED_REQUIRES(mu_);

  const double rate_;
  const double burst_;
  const Clock* const clock_;
  Mutex mu_;
  double tokens_ GPUSCHED_GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point last_ GPUSCHED_GUARDED_BY(mu_);
};

}  // namespace gpusched
