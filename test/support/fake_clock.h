// File: fake_clock.h
//
// A Clock that tests drive: it stands still until advanced. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "gpusched/common/clock.h"

namespace gpusched::testing {

class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t wall_ms = 1764470000000) : wall_ms_(wall_ms) {}

  std::chrono::steady_clock::time_point Now() const override {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(steady_ns_.load()));
  }
  int64_t WallMs() const override { return wall_ms_.load(); }

  // Moves both clocks forward by `d`.
  void Advance(std::chrono::nanoseconds d) {
    steady_ns_ += d.count();
    wall_ms_ += std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  }
  // Sets the wall clock alone (a writer whose clock is off).
  void SetWallMs(int64_t ms) { wall_ms_ = ms; }

 private:
  std::atomic<int64_t> steady_ns_{int64_t{1} << 40};
  std::atomic<int64_t> wall_ms_;
};

}  // namespace gpusched::testing
