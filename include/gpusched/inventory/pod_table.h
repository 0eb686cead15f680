// File: pod_table.h
//
// The pods the inventory knows by their objects, by UID: bound ones as the cluster reports them
// (or as gpusched's own bind recorded them), pending ones it saw through a verb or the cluster,
// with a count of the unbound and the pods whose spec could not be read. Pending pods remembered
// from a verb (not from the cluster) are kept in arrival order, so that the oldest are forgotten
// first when there are too many.
//
// Thread-compatible: one component of the inventory, guarded by its mutex.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>

#include "gpusched/inventory/ledger.h"
#include "gpusched/model/pod.h"

namespace gpusched::inventory {

class PodTable {
 public:
  using ByUid = std::unordered_map<std::string, Pod, Ledger::UidHash, std::equal_to<>>;

  // Keeps `pod` as the record of its UID, replacing any.
  void Put(Pod&& pod);
  // Forgets pod `uid`; returns false if it was not known.
  bool Erase(std::string_view uid);
  // Returns the record of pod `uid`, or nullptr. Valid until the table changes.
  const Pod* Find(std::string_view uid) const;
  bool contains(std::string_view uid) const { return pods_.contains(uid); }

  // Keeps `pod`, a pending pod learned from a verb, as Put does, and remembers its arrival.
  void Remember(Pod&& pod);
  // While more than `max` pods are unbound, forgets the oldest remembered pods that are still
  // unbound and that `may_forget(uid)` allows (the others are skipped for good).
  void Trim(size_t max, const std::function<bool(std::string_view uid)>& may_forget);

  const ByUid& all() const { return pods_; }
  size_t size() const { return pods_.size(); }
  // The pods without a node.
  size_t unbound() const { return unbound_; }
  // The pods whose spec could not be read, by UID: "pod ns/name (uid): error".
  const std::map<std::string, std::string>& unreadable() const { return unreadable_; }
  // The number of arrivals Remember keeps (for tests of the trimming).
  size_t remembered() const { return arrivals_.size(); }

 private:
  ByUid pods_;
  std::map<std::string, std::string> unreadable_;
  std::deque<std::string> arrivals_;  // UIDs Remember saw, oldest first; some may be gone or bound
  size_t unbound_ = 0;
};

}  // namespace gpusched::inventory
