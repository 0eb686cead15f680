// File: binding_conditions.h
//
// Binding conditions (KEP 5007, DRADeviceBindingConditions): a device may publish
// bindingConditions, which its driver must report True in the claim's status.devices before a
// pod using it is bound, and bindingFailureConditions, any of which True means the device cannot
// be used. The allocating scheduler copies both into the allocation's results, stamps
// allocationTimestamp, and gives up after a timeout counted from it (kube-scheduler: 600 s).
// Upstream's rules (dynamicresources.go isClaimReadyForBinding, isPodReadyForBinding): a result
// with conditions whose device has no status entry is not ready; a failure condition True fails
// the claim; a binding condition not True keeps it waiting; a claim without allocationTimestamp
// never times out.
//
// Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "gpusched/dra/types.h"

namespace gpusched::dra {

struct BindingCheck {
  enum class State { kReady, kWaiting, kFailed, kTimedOut };
  State state = State::kReady;
  std::string reason;  // kWaiting, kFailed, kTimedOut: which device and condition, and how long

  bool ready() const { return state == State::kReady; }
};

// True if some result of `allocation` has binding conditions.
bool HasBindingConditions(const AllocationResult& allocation);

// Checks `claim` (allocated) at Unix time `now_ms` against `timeout`.
BindingCheck CheckBindingConditions(const ResourceClaim& claim, int64_t now_ms, std::chrono::seconds timeout);

}  // namespace gpusched::dra
