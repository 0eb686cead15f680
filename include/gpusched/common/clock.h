// File: clock.h
//
// The one source of time for every decision that depends on it: deadlines, intervals and expiry
// read Now() (monotonic); stamps that other processes read back (node bookings, Event times) use
// WallMs() (Unix milliseconds). Production code gets RealClock(); tests inject a clock they drive
// (test/support/fake_clock.h). Waiting itself (a condition variable's timeout) stays on the real
// monotonic clock: only what is decided from the time goes through a Clock.
//
// Thread-safe: implementations must be.
#pragma once

#include <chrono>
#include <cstdint>

namespace gpusched {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point Now() const = 0;
  virtual int64_t WallMs() const = 0;
};

// Returns the process's real clock: steady_clock and system_clock. Lives forever.
const Clock& RealClock();

}  // namespace gpusched
