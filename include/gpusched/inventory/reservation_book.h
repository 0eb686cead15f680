// File: reservation_book.h
//
// ReservationBook: what each pod holds on its node and how long that counts. One entry per pod
// UID (its allocation, indexed by UID and by node), counted from a time kept for its origin:
//   - kObserved: the cluster shows the pod bound; it counts until the cluster says otherwise.
//   - kCommitted: this gpusched bound it (Commit); it counts for assume_ttl from the commit.
//   - kBooked: a node's bookings annotation lists it; it counts for booking_ttl from the writer's
//     stamp (wall clock, measured either way as BookingFresh).
// Beside the entries, each with a time of its own: pods committed to a node without GPUs of their
// own (bare commitments, assume_ttl); bookings of a pod on a second node while its entry is on
// another (two bind attempts in flight, both counted there); pods seen gone, which no booking may
// bring back for 2 x booking_ttl; the defrag holds this replica made (Inventory::HoldFor), each
// until its own time; and the holds of nodes' annotations that ended here, remembered until
// theirs; pending pods nominated to a node after preemption (nomination_table.h); and DRA owner
// mode's claims (claim_reservations.h: devices in flight, owned claims). Expire() is where all
// of them but the claims (dropped when the cluster shows them, or at the claim allocator's sweep)
// run out; a nomination's GPU hold by nomination_ttl, counted again while pods of lower priority
// are still leaving its node (the caller says which: the book does not know the nodes' pods).
//
// The book keeps time; it does not decide what a release means for the pod's record (Inventory
// does that with what Expire returns).
//
// Thread-compatible: owned by Inventory, which serializes every access.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/common/clock.h"
#include "gpusched/common/status.h"
#include "gpusched/inventory/claim_reservations.h"
#include "gpusched/inventory/ledger.h"
#include "gpusched/inventory/nomination_table.h"
#include "gpusched/model/allocation.h"

namespace gpusched::inventory {

struct ReservationTtls {
  std::chrono::seconds assume_ttl{600};   // kCommitted entries and bare commitments
  std::chrono::seconds booking_ttl{300};  // kBooked entries; gone pods are kept twice as long
  std::chrono::seconds nomination_ttl{300};  // a nominated pod's GPU hold, once its victims are gone
};

// Whether pods of lower priority than `priority` are still terminating on `node` (a preemption's
// victims leaving), for the nominations' holds.
using VictimsLeaving = std::function<bool(std::string_view node, int32_t priority)>;

class ReservationBook {
 public:
  // `clock` is not owned and must outlive the book.
  ReservationBook(ReservationTtls ttls, const Clock* clock) : ttls_(ttls), clock_(clock) {}

  // The entry of `uid`, or nullptr. Valid until the next mutation.
  const Allocation* Find(std::string_view uid) const { return ledger_.Find(uid); }
  // The entries on `node` (shared: they stay valid after a release).
  std::vector<AllocationPtr> OnNode(std::string_view node) const { return ledger_.OnNode(node); }
  // What counts on `node`: its entries and the second bookings there.
  std::vector<AllocationPtr> CountedOn(std::string_view node) const;
  const Ledger::ByUid& all() const { return ledger_.all(); }
  size_t size() const { return ledger_.size(); }

  // Enters `a` as committed now. Errors: FailedPrecondition if its pod already holds an entry.
  [[nodiscard]] Status Commit(Allocation a);
  // Enters `a` as the cluster shows it, replacing the pod's entry if any.
  void Observe(Allocation a);
  // Enters `a` as booked by a node's annotation at `booked_at_ms`, replacing the pod's entry.
  void Book(Allocation a, int64_t booked_at_ms);
  // Removes the entry of `uid`; returns its node, or "" if there was none.
  std::string Release(std::string_view uid);
  // True if the entry of `uid` is committed or booked and its time is not up.
  bool InFlight(std::string_view uid) const;
  // True if a booking stamped `booked_at_ms` still counts now.
  bool BookingFresh(int64_t booked_at_ms) const;

  // Bare commitments: a pod committed to a node without GPUs of its own, until the cluster
  // reports it (EndBare) or assume_ttl passes.
  void CommitBare(const std::string& uid) { bare_[uid] = clock_->Now(); }
  bool IsBare(std::string_view uid) const { return bare_.contains(uid); }
  // Ends the bare commitment of `uid`; returns whether there was one.
  bool EndBare(std::string_view uid) { return Erase(bare_, uid); }

  // Sets the second bookings counted on `node` (bookings of pods whose entry is elsewhere);
  // returns whether they changed.
  bool SetSecondBookings(const std::string& node, std::vector<Allocation> bookings);
  void DropSecondBookings(std::string_view node);
  std::vector<std::string> NodesWithSecondBookings() const;

  // Remembers that `uid` was deleted or finished: a booking of it no longer counts.
  void MarkGone(const std::string& uid) { gone_[uid] = clock_->Now(); }
  bool IsGone(std::string_view uid) const { return gone_.contains(uid); }
  // Ends everything about `uid` and marks it gone; returns the node of its entry, or "".
  std::string Forget(const std::string& uid);

  // A defrag hold this replica made, about one pod: `hold` (origin kHeld; pod_uid its holder)
  // counts on its node until `until`, or until a pod it is for is placed.
  struct Hold {
    Allocation hold;
    std::chrono::steady_clock::time_point until;
    int64_t at_ms = 0;  // as written to the node's annotation
  };
  // Keeps `h` about pod `about_uid`, replacing a hold about the same pod.
  void PutHold(const std::string& about_uid, Hold h);
  const Hold* FindHold(std::string_view about_uid) const;
  // Ends the hold about `about_uid` and returns it, or nullopt if there was none.
  std::optional<Hold> EndHold(std::string_view about_uid);
  // Ends the hold a pod placed on `node` uses: the one made for it (`pod_uid` its holder,
  // wherever), else the oldest kept on `node` for `controller_key` (its controller's next pod),
  // unless the pod is the one that hold is about. Returns the node of the hold ended, or "".
  std::string UseHold(const std::string& pod_uid, const std::string& controller_key, const std::string& node);
  // Every hold, by the UID of the pod it is about.
  const std::map<std::string, Hold, std::less<>>& holds() const { return holds_; }

  // An annotated hold (model/node.h NodeHold) that ended here, by its key: on which node, the pod
  // that used it ("" for a hold this replica dropped), and until when (Unix ms) it is remembered.
  struct EndedHold {
    std::string node;
    std::string pod;
    int64_t until_ms = 0;
  };
  void EndAnnotated(const std::string& key, EndedHold ended) { ended_.insert_or_assign(key, std::move(ended)); }
  void ForgetEnded(const std::string& key) { ended_.erase(key); }
  bool AnnotatedEnded(std::string_view key) const { return ended_.contains(key); }
  const std::map<std::string, EndedHold, std::less<>>& ended() const { return ended_; }

  // DRA owner mode's claim reservations.
  ClaimReservations& claims() { return claims_; }
  // Pending pods nominated to a node after preemption, with their GPU holds.
  NominationTable& nominations() { return nominations_; }
  const NominationTable& nominations() const { return nominations_; }

  struct Due {
    std::vector<std::string> entries;     // committed or booked entries whose time is up
    std::vector<std::string> bare;        // bare commitments whose time is up
    std::vector<std::string> hold_nodes;  // nodes of the defrag and nomination holds that ran out (now ended)
  };
  // Returns what ran out, for the caller to release with what that means for each pod; ends the
  // holds past their time (a nomination's pod still counts against its node's other resources)
  // and forgets gone pods and ended annotated holds past theirs.
  Due Expire(const VictimsLeaving& leaving);

 private:
  bool CommitFresh(std::chrono::steady_clock::time_point at) const { return clock_->Now() - at <= ttls_.assume_ttl; }
  // Keyed by pod UID, looked up by any string type without a copy.
  template <typename V>
  using ByUid = std::unordered_map<std::string, V, Ledger::UidHash, std::equal_to<>>;
  template <typename V>
  static bool Erase(ByUid<V>& map, std::string_view uid) {
    auto it = map.find(uid);
    if (it == map.end()) return false;
    map.erase(it);
    return true;
  }

  const ReservationTtls ttls_;
  const Clock* clock_;
  Ledger ledger_;
  // The time each committed entry counts from (steady), or each booked entry's stamp (wall ms).
  // Observed entries have neither.
  ByUid<std::chrono::steady_clock::time_point> committed_at_;
  ByUid<int64_t> booked_at_ms_;
  ByUid<std::chrono::steady_clock::time_point> bare_;
  std::map<std::string, std::vector<Allocation>, std::less<>> second_;
  ByUid<std::chrono::steady_clock::time_point> gone_;
  std::map<std::string, Hold, std::less<>> holds_;
  std::map<std::string, EndedHold, std::less<>> ended_;
  ClaimReservations claims_;
  NominationTable nominations_;
};

}  // namespace gpusched::inventory
