// File: device_checks.h
//
// What the search asks about one candidate device, apart from what the attempt itself holds:
// does a request select it (class selectors, then request selectors, then per-device node
// selection; verdicts cached per slice), do the cluster's claims hold it, does a request's
// capacity fit it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/dra/allocator.h"
#include "gpusched/dra/allocator/pools.h"
#include "gpusched/dra/allocator/requests.h"

namespace gpusched::dra {

class DeviceChecks {
 public:
  // REQUIRES: in and pools outlive the checks.
  DeviceChecks(const AllocatorInput& in, const NodePools& pools) : in_(in), candidates_(pools.candidates) {}

  const std::vector<Candidate>& candidates() const { return candidates_; }

  // isSelectable for candidate `index`. Errors: a selector that did not compile or fails at
  // runtime, naming the class or claim and the selector.
  StatusOr<bool> Selectable(const ClaimData& claim, const RequestData& request, size_t index) const;

  // What the cluster's allocated claims hold of candidate `index` (IndexedSlice::kHeld* bits).
  uint8_t Held(size_t index) const {
    const Candidate& c = candidates_[index];
    if (const std::vector<uint8_t>* marks = c.slice->HeldBy(in_.allocated)) return (*marks)[c.index];
    return HeldSlow(c);
  }
  // True if the device can be allocated more than once (consumable capacity).
  bool Shareable(const Candidate& c) const { return c.device->allow_multiple_allocations && in_.features.consumable_capacity; }
  // True if the cluster's claims alone keep `request` off candidate `index`.
  bool HeldAgainst(const RequestData& request, size_t index) const;

  // A non-shareable device: the request's capacities fit its static capacity after the
  // request policy's rounding (CmpRequestOverCapacity); a request the policy forbids does not.
  static bool StaticCapacityFits(const RequestData& request, const Candidate& c);
  // The amount capacity `cap` gives to a request for `requested` (absent: the default), or
  // nullopt if the policy forbids it.
  static std::optional<int64_t> Consumed(const Capacity& cap, std::optional<int64_t> requested);

 private:
  uint8_t HeldSlow(const Candidate& c) const;
  StatusOr<bool> Verdict(const cel::Program* program, const Candidate& c) const;

  const AllocatorInput& in_;
  const std::vector<Candidate>& candidates_;
};

}  // namespace gpusched::dra
