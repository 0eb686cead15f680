// File: claim_reservations.cc
//
// Owner mode's claim reservations: devices in flight dropped once the cluster shows them, a
// reservation refused on any device another holds, owned claims settled by the sweep.
#include "gpusched/inventory/claim_reservations.h"

#include <algorithm>

namespace gpusched::inventory {
namespace {

constexpr std::string_view kCreating = "creating special claim of pod ";

// True if a device of `result` is held in `held` in any way (in flight: never shared).
bool OverlapsAny(const dra::AllocatedDevices& held, const dra::AllocationResult& result) {
  return std::any_of(result.results.begin(), result.results.end(),
                     [&](const dra::DeviceResult& r) { return !r.admin_access && held.Holds(r.id); });
}

// True if a device of `result` is held in `held` in a way the result cannot share: exclusively,
// or shared where the result takes it whole.
bool ConflictsWith(const dra::AllocatedDevices& held, const dra::AllocationResult& result) {
  return std::any_of(result.results.begin(), result.results.end(), [&](const dra::DeviceResult& r) {
    if (r.admin_access) return false;
    return held.exclusive.contains(r.id) || (r.share_id.empty() && held.shared.contains(r.id));
  });
}

}  // namespace

std::string ClaimReservations::CreatingKey(std::string_view pod_uid) { return std::string(kCreating).append(pod_uid); }

ClaimReservations::Shown ClaimReservations::ShownBy(const dra::ClusterState& state) {
  Shown shown;
  for (const auto& [key, claim] : state.claims()) shown[claim.uid] = claim.allocation.has_value();
  return shown;
}

dra::AllocatedDevices ClaimReservations::InFlight(const Shown& allocated, TimePoint now) {
  for (auto it = in_flight_.begin(); it != in_flight_.end();) {
    bool drop = false;
    if (it->first.starts_with(kCreating)) {
      // Being created: the cluster cannot show it yet.
    } else if (auto shown = allocated.find(it->first); shown != allocated.end()) {
      it->second.seen = true;
      drop = shown->second;  // the cluster shows the allocation: it holds the devices from now on
    } else {
      // Not in the state: gone if it was seen; a claim just created is awaited, not forever.
      drop = it->second.seen || it->second.unseen.Passed(now, 0);
    }
    it = drop ? in_flight_.erase(it) : std::next(it);
  }
  dra::AllocatedDevices held;
  for (const auto& [uid, f] : in_flight_) held.Add(f.result);
  return held;
}

bool ClaimReservations::Reserve(const std::vector<std::string>& uids, const std::vector<dra::AllocationResult>& results,
                                const dra::AllocatedDevices& latest, TimePoint now) {
  dra::AllocatedDevices held;
  for (const auto& [uid, f] : in_flight_) held.Add(f.result);
  for (const dra::AllocationResult& r : results) {
    if (OverlapsAny(held, r) || ConflictsWith(latest, r)) return false;
  }
  for (size_t i = 0; i < uids.size(); ++i) in_flight_[uids[i]] = Flight{results[i], true, Expiry::Through(now + kUnseenLimit)};
  return true;
}

void ClaimReservations::Unreserve(const std::vector<std::string>& uids) {
  for (const std::string& uid : uids) in_flight_.erase(uid);
}

void ClaimReservations::Created(const std::string& creating, const std::string& uid, const dra::AllocationResult& result,
                                TimePoint now) {
  in_flight_.erase(creating);
  in_flight_[uid] = Flight{result, false, Expiry::Through(now + kUnseenLimit)};
}

void ClaimReservations::Settle(const std::set<std::string>& settled) {
  for (const std::string& uid : settled) {
    if (!in_flight_.contains(uid)) owned_.erase(uid);  // a claim just written may not show yet
  }
}

std::map<std::string, ClaimReservations::TimePoint> ClaimReservations::SeenUnbound(const std::vector<std::string>& unbound,
                                                                                   TimePoint now) {
  std::map<std::string, TimePoint> seen;
  for (const std::string& uid : unbound) {
    auto it = unbound_since_.find(uid);
    seen[uid] = it == unbound_since_.end() ? now : it->second;
  }
  unbound_since_ = seen;
  return seen;
}

bool ClaimReservations::ReleasedNotShown(const std::string& uid, bool shown_allocated, TimePoint now) {
  auto it = released_.find(uid);
  if (it == released_.end()) return false;
  if (!shown_allocated || it->second.Left(now).count() <= 0) {
    released_.erase(it);
    return false;
  }
  return true;
}

void ClaimReservations::Forget(const std::string& uid) {
  in_flight_.erase(uid);
  owned_.erase(uid);
  unbound_since_.erase(uid);
}

}  // namespace gpusched::inventory
