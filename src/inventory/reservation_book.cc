// File: reservation_book.cc
//
// The reservation book: entries with the time each counts from, kept in step with the ledger's
// indexes by every method that enters or removes one; one Expire for every kind of time.
#include "gpusched/inventory/reservation_book.h"

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
  if (added.ok()) committed_at_[uid] = clock_->Now();
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
  booked_at_ms_[uid] = booked_at_ms;
}

std::string ReservationBook::Release(std::string_view uid) {
  std::string key(uid);
  committed_at_.erase(key);
  booked_at_ms_.erase(key);
  return ledger_.Release(uid);
}

bool ReservationBook::BookingFresh(int64_t booked_at_ms) const {
  return gpusched::BookingFresh(booked_at_ms, clock_->WallMs(), ttls_.booking_ttl);
}

bool ReservationBook::InFlight(std::string_view uid) const {
  std::string key(uid);
  if (auto at = committed_at_.find(key); at != committed_at_.end()) return CommitFresh(at->second);
  if (auto at = booked_at_ms_.find(key); at != booked_at_ms_.end()) return BookingFresh(at->second);
  return false;
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

ReservationBook::Due ReservationBook::Expire() {
  Due due;
  for (const auto& [uid, held] : ledger_.all()) {
    if (held->origin != AllocationOrigin::kObserved && !InFlight(uid)) due.entries.push_back(held->pod_uid);
  }
  for (const auto& [uid, at] : bare_) {
    if (!CommitFresh(at)) due.bare.push_back(uid);
  }
  auto now = clock_->Now();
  auto keep = 2 * ttls_.booking_ttl;
  std::erase_if(gone_, [&](const auto& kv) { return now - kv.second > keep; });
  return due;
}

}  // namespace gpusched::inventory
