// File: reservation_book.cc
//
// The reservation book: entries with their Expiry, kept in step with the ledger's indexes by
// every method that enters or removes one; one Expire that asks every Expiry.
#include "gpusched/inventory/reservation_book.h"

#include <set>

#include "gpusched/model/node.h"

namespace gpusched::inventory {

std::vector<AllocationPtr> ReservationBook::CountedOn(std::string_view node) const {
  std::vector<AllocationPtr> out = ledger_.OnNode(node);
  if (auto second = second_.find(node); second != second_.end()) {
    for (const Allocation& a : second->second) out.push_back(std::make_shared<const Allocation>(a));
  }
  return out;
}

Status ReservationBook::Commit(Allocation a) {
  a.origin = AllocationOrigin::kCommitted;
  std::string uid = a.pod_uid;
  Status added = ledger_.Add(std::move(a));
  if (added.ok()) expiry_.insert_or_assign(std::move(uid), Expiry::Through(clock_->Now() + ttls_.assume_ttl));
  return added;
}

void ReservationBook::Observe(Allocation a) {
  a.origin = AllocationOrigin::kObserved;
  Release(a.pod_uid);
  ledger_.Put(std::move(a));
}

void ReservationBook::Book(Allocation a, int64_t booked_at_ms) {
  a.origin = AllocationOrigin::kBooked;
  std::string uid = a.pod_uid;
  Release(uid);
  ledger_.Put(std::move(a));
  expiry_.insert_or_assign(std::move(uid), Expiry::Stamped(booked_at_ms, ttls_.booking_ttl));
}

std::string ReservationBook::Release(std::string_view uid) {
  Erase(expiry_, uid);
  return ledger_.Release(uid);
}

bool ReservationBook::BookingFresh(int64_t booked_at_ms) const {
  return gpusched::BookingFresh(booked_at_ms, clock_->WallMs(), ttls_.booking_ttl);
}

bool ReservationBook::InFlight(std::string_view uid) const {
  auto it = expiry_.find(uid);
  return it != expiry_.end() && !Passed(it->second);
}

bool ReservationBook::SetSecondBookings(const std::string& node, std::vector<Allocation> bookings) {
  auto slot = second_.find(node);
  if (slot == second_.end() ? bookings.empty() : slot->second == bookings) return false;
  if (bookings.empty()) {
    second_.erase(slot);
  } else {
    second_[node] = std::move(bookings);
  }
  return true;
}

void ReservationBook::DropSecondBookings(std::string_view node) {
  if (auto slot = second_.find(node); slot != second_.end()) second_.erase(slot);
}

std::vector<std::string> ReservationBook::NodesWithSecondBookings() const {
  std::vector<std::string> out;
  for (const auto& [node, bookings] : second_) out.push_back(node);
  return out;
}

std::string ReservationBook::Forget(const std::string& uid) {
  bare_.erase(uid);
  MarkGone(uid);
  return Release(uid);
}

void ReservationBook::PutHold(const std::string& about_uid, Reservation h) { holds_.insert_or_assign(about_uid, std::move(h)); }

const Reservation* ReservationBook::FindHold(std::string_view about_uid) const {
  auto it = holds_.find(about_uid);
  return it == holds_.end() ? nullptr : &it->second;
}

std::optional<Reservation> ReservationBook::EndHold(std::string_view about_uid) {
  auto it = holds_.find(about_uid);
  if (it == holds_.end()) return std::nullopt;
  Reservation h = std::move(it->second);
  holds_.erase(it);
  return h;
}

std::string ReservationBook::UseHold(const std::string& pod_uid, const std::string& controller_key, const std::string& node) {
  auto used = holds_.end();
  for (auto it = holds_.begin(); it != holds_.end(); ++it) {
    const Allocation& h = it->second.held;
    if (h.pod_uid == pod_uid) {
      used = it;
      break;
    }
    bool replacement = !controller_key.empty() && h.pod_uid == controller_key && h.node_name == node && it->first != pod_uid;
    if (replacement && (used == holds_.end() || it->second.stamp_ms < used->second.stamp_ms)) used = it;
  }
  if (used == holds_.end()) return "";
  std::string ended = used->second.held.node_name;
  holds_.erase(used);
  return ended;
}

ReservationBook::Due ReservationBook::Expire(const VictimsLeaving& leaving) {
  Due due;
  for (const auto& [uid, expiry] : expiry_) {
    if (Passed(expiry)) due.entries.push_back(uid);
  }
  for (const auto& [uid, expiry] : bare_) {
    if (Passed(expiry)) due.bare.push_back(uid);
  }
  std::erase_if(gone_, [&](const auto& kv) { return Passed(kv.second); });
  std::erase_if(holds_, [&](const auto& kv) {
    if (!Passed(kv.second.expiry)) return false;
    due.hold_nodes.push_back(kv.second.held.node_name);
    return true;
  });
  std::erase_if(ended_, [&](const auto& kv) { return Passed(kv.second.until); });
  std::set<std::string> nominated;
  nominations_.ExpireHolds(clock_->Now(), leaving, &nominated);
  due.hold_nodes.insert(due.hold_nodes.end(), nominated.begin(), nominated.end());
  return due;
}

}  // namespace gpusched::inventory
