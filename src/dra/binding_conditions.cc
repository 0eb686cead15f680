// File: binding_conditions.cc
//
// An allocated claim's readiness under binding conditions: failed at the first failure condition
// reported True, else waiting on the first binding condition not yet True (timed out once
// allocationTimestamp is older than the timeout), else ready.
#include "gpusched/dra/binding_conditions.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpusched::dra {
namespace {

const AllocatedDeviceStatus* StatusOf(const ResourceClaim& claim, const DeviceResult& r) {
  for (const AllocatedDeviceStatus& s : claim.device_statuses) {
    if (s.id == r.id && s.share_id == r.share_id) return &s;
  }
  return nullptr;
}

bool IsTrue(const AllocatedDeviceStatus* s, const std::string& type) {
  if (s == nullptr) return false;
  auto it = s->conditions.find(type);
  return it != s->conditions.end() && it->second == "True";
}

std::string DeviceName(const DeviceResult& r) { return fmt::format("{}/{}/{}", r.id.driver, r.id.pool, r.id.device); }

}  // namespace

bool HasBindingConditions(const AllocationResult& allocation) {
  return std::any_of(allocation.results.begin(), allocation.results.end(),
                     [](const DeviceResult& r) { return !r.binding_conditions.empty(); });
}

BindingCheck CheckBindingConditions(const ResourceClaim& claim, int64_t now_ms, std::chrono::seconds timeout) {
  if (!claim.allocation) return {};
  std::string claim_name = fmt::format("{}/{}", claim.namespace_name, claim.name);
  std::string waiting;
  for (const DeviceResult& r : claim.allocation->results) {
    if (r.binding_conditions.empty()) continue;
    const AllocatedDeviceStatus* status = StatusOf(claim, r);
    for (const std::string& failure : r.binding_failure_conditions) {
      if (IsTrue(status, failure)) {
        return {BindingCheck::State::kFailed,
                fmt::format("claim {}: device {} reports binding failure condition {}", claim_name, DeviceName(r), failure)};
      }
    }
    for (const std::string& condition : r.binding_conditions) {
      if (!IsTrue(status, condition) && waiting.empty()) waiting = fmt::format("{} of device {}", condition, DeviceName(r));
    }
  }
  if (waiting.empty()) return {};
  const std::optional<int64_t>& at = claim.allocation->allocation_timestamp_ms;
  int64_t waited_s = at ? std::max<int64_t>(0, (now_ms - *at) / 1000) : 0;
  if (at && now_ms - *at >= std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count()) {
    return {BindingCheck::State::kTimedOut,
            fmt::format("claim {}: binding condition {} did not hold within {} s", claim_name, waiting, timeout.count())};
  }
  return {BindingCheck::State::kWaiting,
          fmt::format("claim {}: waiting for binding condition {} ({} of {} s)", claim_name, waiting, waited_s, timeout.count())};
}

}  // namespace gpusched::dra
