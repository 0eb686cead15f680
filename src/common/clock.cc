// File: clock.cc
//
// The real clock: Now() from std::chrono::steady_clock and WallMs() from system_clock, one instance
// created on first use and never destroyed.
#include "gpusched/common/clock.h"

namespace gpusched {
namespace {

class SystemClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() const override { return std::chrono::steady_clock::now(); }
  int64_t WallMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

}  // namespace

const Clock& RealClock() {
  static const SystemClock* clock = new SystemClock();
  return *clock;
}

}  // namespace gpusched
