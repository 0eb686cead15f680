// File: backoff.h
//
// Capped exponential backoff with jitter, for reconnecting watches and retrying lists: the n-th
// delay is min(max, initial * 2^n), stretched by a random factor in [1, 1 + jitter).
//
// Not thread-safe.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "gpusched/common/random.h"

namespace gpusched::kubeapi {

class Backoff {
 public:
  // REQUIRES: `rng` outlives the backoff (its owner's random source).
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max, double jitter, Rng* rng)
      : initial_(initial), max_(max), jitter_(jitter), rng_(rng) {}

  // Returns the next delay and doubles the base (up to max).
  std::chrono::milliseconds Next() {
    std::chrono::milliseconds base = current_.count() == 0 ? initial_ : current_;
    current_ = std::min(max_, base * 2);
    double stretch = 1.0 + jitter_ * rng_->Unit();
    return std::chrono::milliseconds(static_cast<int64_t>(static_cast<double>(std::min(base, max_).count()) * stretch));
  }
  // Starts over at `initial` (after a success).
  void Reset() { current_ = std::chrono::milliseconds(0); }

 private:
  const std::chrono::milliseconds initial_;
  const std::chrono::milliseconds max_;
  const double jitter_;
  Rng* const rng_;
  std::chrono::milliseconds current_{0};
};

}  // namespace gpusched::kubeapi
