// File: expiry.h
//
// Expiry: until when one reservation of the book counts, on the clock that suits where it came
// from. The book's one time type for deadlines: every timed entry, commitment, hold, tombstone,
// nomination and claim in flight carries one, and the book asks each whether it has Passed.
// (The claims' unbound_since, a start time the claim sweep reports, is not a deadline.)
//   - Never: until the cluster says otherwise (an observed allocation).
//   - Through(t) / Before(t): a deadline on the monotonic clock, for what this process started
//     (a commit and assume_ttl; a hold and its TTL), inclusive or exclusive.
//   - BeforeWall(ms): a deadline on the wall clock (Unix ms), for what is remembered about an
//     annotation that other replicas read.
//   - Stamped(ms, span): a stamp another replica wrote, counted while younger than `span`,
//     measured either way (model/node.h BookingFresh: a replica's clock may run ahead).
//
// A value type; thread-compatible.
#pragma once

#include <chrono>
#include <cstdint>

namespace gpusched::inventory {

class Expiry {
 public:
  using Time = std::chrono::steady_clock::time_point;

  Expiry() = default;  // Never
  static Expiry Never() { return Expiry(); }
  static Expiry Through(Time last) { return Expiry(On::kSteady, last, true); }
  static Expiry Before(Time end) { return Expiry(On::kSteady, end, false); }
  static Expiry BeforeWall(int64_t end_ms);
  static Expiry Stamped(int64_t stamp_ms, std::chrono::seconds span);

  // True once it no longer counts at monotonic `now` and wall time `wall_ms`.
  bool Passed(Time now, int64_t wall_ms) const;
  // The monotonic time left at `now` (zero or negative once passed); zero for the other clocks.
  std::chrono::nanoseconds Left(Time now) const;

  bool operator==(const Expiry&) const = default;

 private:
  enum class On { kNever, kSteady, kWall, kStamp };
  Expiry(On on, Time steady, bool inclusive) : on_(on), steady_(steady), inclusive_(inclusive) {}

  On on_ = On::kNever;
  Time steady_{};
  bool inclusive_ = false;  // kSteady: still counts at exactly steady_
  int64_t ms_ = 0;          // kWall: the end; kStamp: the stamp
  int64_t span_s_ = 0;      // kStamp
};

}  // namespace gpusched::inventory
