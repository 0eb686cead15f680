// File: token_bucket.cc
//
// The token bucket's arithmetic: lazy refill from the injected clock under a mutex; a take is
// refused when the bucket is empty, or goes into debt and returns (or sleeps) the wait. A rate of
// zero or less never limits.
#include "gpusched/common/token_bucket.h"

#include <algorithm>
#include <thread>

namespace gpusched {

TokenBucket::TokenBucket(double rate, double burst, const Clock* clock)
    : rate_(rate), burst_(std::max(1.0, burst)), clock_(clock), tokens_(burst_), last_(clock->Now()) {}

void TokenBucket::RefillLocked(std::chrono::steady_clock::time_point now) {
  if (now > last_) {
    tokens_ = std::min(burst_, tokens_ + rate_ * std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }
}

bool TokenBucket::TryTake() {
  if (rate_ <= 0) return true;
  MutexLock lock(&mu_);
  RefillLocked(clock_->Now());
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

std::chrono::nanoseconds TokenBucket::Reserve() {
  if (rate_ <= 0) return std::chrono::nanoseconds(0);
  MutexLock lock(&mu_);
  RefillLocked(clock_->Now());
  tokens_ -= 1;
  if (tokens_ >= 0) return std::chrono::nanoseconds(0);
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(-tokens_ / rate_));
}

void TokenBucket::Take() {
  std::chrono::nanoseconds wait = Reserve();
  if (wait.count() > 0) std::this_thread::sleep_for(wait);
}

}  // namespace gpusched
