// File: device_checks.cc
//
// The per-device questions of the search: selector verdicts from the slice's per-program cache
// (class selectors first), whether the cluster's claims hold the device (the slice's marks, or a
// lookup for another allocated set), and static and consumable capacity.
#include "gpusched/dra/allocator/device_checks.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpusched::dra {

// The verdict of one selector on one candidate, from the slice's cache.
StatusOr<bool> DeviceChecks::Verdict(const cel::Program* program, const Candidate& c) const {
  IndexedSlice::Verdicts* v = c.slice->VerdictsFor(program);
  uint8_t state = v->state[c.index].load(std::memory_order_acquire);
  if (state == 0) {
    StatusOr<bool> r = cel::Evaluate(*program, cel::DeviceView{.driver = c.id.driver, .device = c.device});
    if (r.ok()) {
      state = *r ? 1 : 2;
    } else {
      MutexLock lock(&v->mu);
      v->errors.emplace(c.index, std::string(r.status().message()));
      state = 3;
    }
    v->state[c.index].store(state, std::memory_order_release);
  }
  if (state == 3) {
    MutexLock lock(&v->mu);
    return InvalidArgumentError(v->errors.at(c.index));
  }
  return state == 1;
}

StatusOr<bool> DeviceChecks::Selectable(const ClaimData& claim, const RequestData& request, size_t index) const {
  const Candidate& c = candidates_[index];
  if (!c.device->binding_conditions.empty() && !in_.features.binding_conditions) return false;
  for (size_t k = 0; k < request.class_selectors.size(); ++k) {
    const CompiledSelector& selector = request.class_selectors[k];
    if (selector.program == nullptr) return InvalidArgumentError(selector.error);
    StatusOr<bool> v = Verdict(selector.program, c);
    if (!v.ok()) {
      return InvalidArgumentError(fmt::format("class {}: selector #{}: CEL runtime error: {}", request.device_class->name, k,
                                              v.status().message()));
    }
    if (!*v) return false;
  }
  for (size_t k = 0; k < request.request_selectors.size(); ++k) {
    const CompiledSelector& selector = request.request_selectors[k];
    if (selector.program == nullptr) return InvalidArgumentError(selector.error);
    StatusOr<bool> v = Verdict(selector.program, c);
    if (!v.ok()) {
      return InvalidArgumentError(fmt::format("claim {}/{}: selector #{}: CEL runtime error: {}", claim.claim->namespace_name,
                                              claim.claim->name, k, v.status().message()));
    }
    if (!*v) return false;
  }
  if (c.slice->slice().per_device_node_selection && !DeviceNodeMatches(*c.device, *in_.node)) return false;
  if (in_.only != nullptr) {
    auto only = in_.only->find({claim.claim, request.parent->name});
    if (only != in_.only->end() && !only->second.contains(c.id)) return false;
  }
  return true;
}

// Held without the slice's precomputed marks (an `allocated` set other than the marked one).
uint8_t DeviceChecks::HeldSlow(const Candidate& c) const {
  uint8_t held = in_.allocated->exclusive.contains(c.id) ? IndexedSlice::kHeldExclusive : 0;
  if (in_.allocated->shared.contains(c.id) || in_.allocated->consumed_capacity_milli.contains(c.id)) {
    held |= IndexedSlice::kHeldShared;
  }
  return held;
}

bool DeviceChecks::HeldAgainst(const RequestData& request, size_t index) const {
  if (request.admin) return false;
  if (Shareable(candidates_[index])) return (Held(index) & IndexedSlice::kHeldExclusive) != 0;
  return Held(index) != 0;
}

bool DeviceChecks::StaticCapacityFits(const RequestData& request, const Candidate& c) {
  for (const auto& [name, milli] : request.req->capacity_requests_milli) {
    auto it = c.device->capacity.find(name);
    if (it == c.device->capacity.end()) return false;
    std::optional<int64_t> want = Consumed(it->second, milli);
    if (!want || *want > it->second.value_milli) return false;
  }
  return true;
}

std::optional<int64_t> DeviceChecks::Consumed(const Capacity& cap, std::optional<int64_t> requested) {
  const RequestPolicy& p = cap.policy;
  int64_t want = requested ? *requested : p.default_milli ? *p.default_milli : cap.value_milli;
  if (p.default_milli && want == *p.default_milli) return want;
  if (p.range_min_milli) {
    if (want < *p.range_min_milli) want = *p.range_min_milli;
    if (p.range_step_milli && *p.range_step_milli > 0) {
      int64_t over = want - *p.range_min_milli;
      int64_t steps = (over + *p.range_step_milli - 1) / *p.range_step_milli;
      want = *p.range_min_milli + steps * *p.range_step_milli;
    }
    if (p.range_max_milli && want > *p.range_max_milli) return std::nullopt;
  } else if (!p.valid_values_milli.empty()) {
    auto it = std::lower_bound(p.valid_values_milli.begin(), p.valid_values_milli.end(), want);
    if (it == p.valid_values_milli.end()) return std::nullopt;
    want = *it;
  }
  return want;
}

}  // namespace gpusched::dra
