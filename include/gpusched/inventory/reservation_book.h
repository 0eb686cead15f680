// File: reservation_book.h
//
// ReservationBook: everything held for a pod (or a claim) on a node, and until when it counts.
// What holds GPUs is an Allocation (holder, node, what it holds, origin) with an Expiry
// (expiry.h), the book's one time type: a hold is kept as one Reservation; a ledger entry's
// Expiry sits in a side map (only committed and booked entries have one), so that the many
// observed entries carry none. What the book keeps, by origin:
//   - entries, one per pod UID (indexed by UID and by node, the ledger):
//       - kObserved: the cluster shows the pod bound; Never expires (the cluster says when);
//       - kCommitted: this gpusched bound it (Commit): Through(commit + assume_ttl);
//       - kBooked: a node's bookings annotation lists it: Stamped(the writer's stamp, booking_ttl);
//   - second bookings: bookings of a pod on a second node while its entry is on another (two
//     bind attempts in flight, both counted there), kept as their node's annotation lists them;
//   - defrag holds (kHeld) this replica made (Inventory::HoldFor), one per pod they are about,
//     Before(their TTL), or until a pod they are for is placed;
//   - pending pods nominated to a node after preemption (nomination_table.h), their GPU hold
//     Through(nomination_ttl) counted again while pods of lower priority are still leaving its
//     node (the caller says which: the book does not know the nodes' pods);
//   - DRA owner mode's claims in flight (claim_reservations.h), dropped when the cluster shows
//     them (Through(their unseen limit) while it has not);
// and, holding nothing, with an Expiry of the same type: pods committed to a node without GPUs
// of their own (bare commitments, assume_ttl); pods seen gone, which no booking may bring back
// for 2 x booking_ttl; the holds of nodes' annotations that ended here, remembered
// BeforeWall(theirs). Expire() runs out every kind; InFlight reads an entry's Expiry, and
// ClaimReservations::InFlight a claim's, whenever a plan asks.
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
#include "gpusched/inventory/expiry.h"
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

// One reservation of GPUs, shares or devices: `held` names the holder (pod_uid), the node, what
// it holds and where it came from (origin); `expiry` says until when it counts; `stamp_ms` is the
// time written beside it in a node's annotation (a hold's), or 0.
struct Reservation {
  Allocation held;
  Expiry expiry;
  int64_t stamp_ms = 0;
};

class ReservationBook {
 public:
  // `clock` is not owned and must outlive the book.
  ReservationBook(ReservationTtls ttls, const Clock* clock)
      : ttls_(ttls), clock_(clock), nominations_(ttls.nomination_ttl) {}

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
  void CommitBare(const std::string& uid) { bare_.insert_or_assign(uid, Expiry::Through(clock_->Now() + ttls_.assume_ttl)); }
  bool IsBare(std::string_view uid) const { return bare_.contains(uid); }
  // Ends the bare commitment of `uid`; returns whether there was one.
  bool EndBare(std::string_view uid) { return Erase(bare_, uid); }

  // Sets the second bookings counted on `node` (bookings of pods whose entry is elsewhere);
  // returns whether they changed.
  bool SetSecondBookings(const std::string& node, std::vector<Allocation> bookings);
  void DropSecondBookings(std::string_view node);
  std::vector<std::string> NodesWithSecondBookings() const;

  // Remembers that `uid` was deleted or finished: a booking of it no longer counts.
  void MarkGone(const std::string& uid) { gone_.insert_or_assign(uid, Expiry::Through(clock_->Now() + 2 * ttls_.booking_ttl)); }
  bool IsGone(std::string_view uid) const { return gone_.contains(uid); }
  // Ends everything about `uid` and marks it gone; returns the node of its entry, or "".
  std::string Forget(const std::string& uid);

  // A defrag hold this replica made, about one pod: `h.held` (origin kHeld; pod_uid its holder)
  // counts on its node until h.expiry, or until a pod it is for is placed; h.stamp_ms is as
  // written to the node's annotation. Replaces a hold about the same pod.
  void PutHold(const std::string& about_uid, Reservation h);
  const Reservation* FindHold(std::string_view about_uid) const;
  // Ends the hold about `about_uid` and returns it, or nullopt if there was none.
  std::optional<Reservation> EndHold(std::string_view about_uid);
  // Ends the hold a pod placed on `node` uses: the one made for it (`pod_uid` its holder,
  // wherever), else the oldest kept on `node` for `controller_key` (its controller's next pod),
  // unless the pod is the one that hold is about. Returns the node of the hold ended, or "".
  std::string UseHold(const std::string& pod_uid, const std::string& controller_key, const std::string& node);
  // Every hold, by the UID of the pod it is about.
  const std::map<std::string, Reservation, std::less<>>& holds() const { return holds_; }

  // An annotated hold (model/node.h NodeHold) that ended here, by its key: on which node, the pod
  // that used it ("" for a hold this replica dropped), and until when it is remembered.
  struct EndedHold {
    std::string node;
    std::string pod;
    Expiry until;
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
  bool Passed(const Expiry& e) const { return e.Passed(clock_->Now(), clock_->WallMs()); }
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
  // The Expiry of each committed or booked entry; an observed entry has none (Never).
  ByUid<Expiry> expiry_;
  ByUid<Expiry> bare_;
  std::map<std::string, std::vector<Allocation>, std::less<>> second_;
  ByUid<Expiry> gone_;
  std::map<std::string, Reservation, std::less<>> holds_;
  std::map<std::string, EndedHold, std::less<>> ended_;
  ClaimReservations claims_;
  NominationTable nominations_;
};

}  // namespace gpusched::inventory
