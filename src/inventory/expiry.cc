// File: expiry.cc
//
// Whether a reservation's time has passed, on its own clock.
#include "gpusched/inventory/expiry.h"

#include "gpusched/model/node.h"

namespace gpusched::inventory {

Expiry Expiry::BeforeWall(int64_t end_ms) {
  Expiry e(On::kWall, Time{}, false);
  e.ms_ = end_ms;
  return e;
}

Expiry Expiry::Stamped(int64_t stamp_ms, std::chrono::seconds span) {
  Expiry e(On::kStamp, Time{}, false);
  e.ms_ = stamp_ms;
  e.span_s_ = span.count();
  return e;
}

bool Expiry::Passed(Time now, int64_t wall_ms) const {
  switch (on_) {
    case On::kNever:
      return false;
    case On::kSteady:
      return inclusive_ ? now > steady_ : now >= steady_;
    case On::kWall:
      return wall_ms >= ms_;
    case On::kStamp:
      return !BookingFresh(ms_, wall_ms, std::chrono::seconds(span_s_));
  }
  return false;
}

std::chrono::nanoseconds Expiry::Left(Time now) const {
  return on_ == On::kSteady ? steady_ - now : std::chrono::nanoseconds::zero();
}

}  // namespace gpusched::inventory
