// File: claim_reservations.h
//
// ClaimReservations: the DRA claims this process allocates in owner mode
// (extender/claim_allocator.h), as reservations of the reservation book:
//   - in flight: the devices of an allocation being written, or written and not yet shown by the
//     cluster's state, held for every later plan so that two binds never take one device;
//   - owned: the claims it allocated whose pods have not been seen bound, the only ones its sweep
//     may release (other schedulers allocate claims too; a restart forgets them);
//   - unbound since: when a sweep first saw an owned claim reserved for unbound pods only;
//   - released: claims it deallocated that the cluster's state does not show deallocated yet (a
//     state showing them allocated is older than the deallocation: never a reason to bind).
//
// Thread-compatible: part of the ReservationBook, whose owner serializes every access.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/dra/allocated_devices.h"
#include "gpusched/dra/cluster_state.h"
#include "gpusched/dra/types.h"
#include "gpusched/inventory/expiry.h"

namespace gpusched::inventory {

class ClaimReservations {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // How long a claim created here is held in flight while the cluster's state does not show it.
  static constexpr std::chrono::minutes kUnseenLimit{2};
  // The key under which the special claim of pod `pod_uid` (KEP 5004) is held while it is
  // created and has no UID yet; InFlight never drops it (Created or Unreserve ends it).
  static std::string CreatingKey(std::string_view pod_uid);

  // Whether each claim of `state` is allocated, by claim UID: what InFlight reads of the state a
  // plan reads (built before taking the lock that guards the reservations).
  using Shown = std::unordered_map<std::string, bool>;
  static Shown ShownBy(const dra::ClusterState& state);
  // The devices held in flight, after dropping the claims `shown` (of the state a plan reads) has
  // allocated, or does not have; a claim created here and never seen is awaited kUnseenLimit, and
  // one being created stays.
  dra::AllocatedDevices InFlight(const Shown& shown, TimePoint now);
  // Holds `results[i]` in flight for the claim of UID `uids[i]`, unless a device of theirs is in
  // flight already, or `latest` (the cluster's newest state, which a plan made on an older one
  // may not have seen) holds it in a way the result cannot share: returns false then (plan again).
  bool Reserve(const std::vector<std::string>& uids, const std::vector<dra::AllocationResult>& results,
               const dra::AllocatedDevices& latest, TimePoint now);
  // Ends the reservations of `uids` (not written, or deallocated).
  void Unreserve(const std::vector<std::string>& uids);
  // The claim reserved under `creating` (its key while it has no UID) was created as `uid`: held
  // in flight under that UID, awaited until the cluster's state shows it.
  void Created(const std::string& creating, const std::string& uid, const dra::AllocationResult& result, TimePoint now);
  bool InFlightContains(const std::string& uid) const { return in_flight_.contains(uid); }

  void Own(const std::string& uid) { owned_.insert(uid); }
  const std::set<std::string>& owned() const { return owned_; }
  // Forgets the owned claims among `settled` (gone, or their pods bound), but those in flight.
  void Settle(const std::set<std::string>& settled);
  // Returns since when a sweep has seen each claim of `unbound` reserved for unbound pods only
  // (`now` for one seen so the first time); a claim not listed starts afresh.
  std::map<std::string, TimePoint> SeenUnbound(const std::vector<std::string>& unbound, TimePoint now);
  // Forgets everything about claim `uid` (deallocated).
  void Forget(const std::string& uid);
  // Claim `uid` was deallocated here at `now`: until the cluster's state shows it so (or
  // kUnseenLimit passes), a state that shows it allocated is older than the deallocation.
  void Released(const std::string& uid, TimePoint now) { released_[uid] = Expiry::Before(now + kUnseenLimit); }
  // True if a state showing claim `uid` allocated (`shown_allocated`) is stale: it was released
  // here and the state has not shown that yet. A state showing it deallocated ends the wait.
  bool ReleasedNotShown(const std::string& uid, bool shown_allocated, TimePoint now);

 private:
  struct Flight {
    dra::AllocationResult result;
    bool seen = true;  // the cluster's state has shown the claim (false: created, not seen yet)
    Expiry unseen;     // until when a claim not seen yet is awaited (kUnseenLimit)
  };
  std::map<std::string, Flight> in_flight_;  // by claim UID, or creating key
  std::set<std::string> owned_;
  std::map<std::string, TimePoint> unbound_since_;
  std::map<std::string, Expiry> released_;  // deallocated here, not yet shown so: by claim UID
};

}  // namespace gpusched::inventory
