// File: random.h
//
// A small, portable, seeded random source: the same seed gives the same stream on every platform
// and compiler (unlike std::uniform_int_distribution). xoshiro256** seeded through SplitMix64;
// bounded integers by Lemire's multiply-shift with rejection.
//
// Not thread-safe: one Rng per thread or per run.
#pragma once

#include <cstdint>

namespace gpusched {

class Rng {
 public:
  explicit Rng(uint64_t seed);

  // Returns 64 uniformly random bits.
  uint64_t Next();
  // Returns an integer uniform in [0, n). REQUIRES: n > 0.
  uint64_t Below(uint64_t n);
  // Returns a double uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t s_[4];
};

}  // namespace gpusched
