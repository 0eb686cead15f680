// File: ledger.h
//
// The ledger: every GPU allocation in the cluster, indexed by pod UID and by node, whatever the
// node mode. A pod UID appears at most once, so a pod is never counted twice. It keeps no time:
// the reservation book (reservation_book.h) that owns it does.
//
// Not thread-safe: owned by the ReservationBook, whose owner serializes every access.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/model/allocation.h"
#include "gpusched/model/allocation_list.h"

namespace gpusched::inventory {

class Ledger {
 public:
  // Books `allocation`. Errors: FailedPrecondition if its pod UID already holds an allocation.
  [[nodiscard]] Status Add(Allocation allocation);
  // Replaces or inserts the allocation of allocation.pod_uid.
  void Put(Allocation allocation);
  // Removes the allocation of `pod_uid`; returns the node it was on, or "" if there was none.
  std::string Release(std::string_view pod_uid);

  // Returns the allocation of `pod_uid`, or nullptr. Valid until the next mutation.
  const Allocation* Find(std::string_view pod_uid) const;
  // Returns the allocations on `node`, in no particular order (shared: they stay valid after a
  // Release).
  std::vector<AllocationPtr> OnNode(std::string_view node) const;
  // Returns the names of nodes holding at least one allocation.
  std::vector<std::string> Nodes() const;

  // Hashes a UID given as any string type (heterogeneous lookup by string_view).
  struct UidHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // Keys view the pod_uid of the allocation they map to.
  using ByUid = std::unordered_map<std::string_view, AllocationPtr, UidHash, std::equal_to<>>;

  size_t size() const { return by_uid_.size(); }
  const ByUid& all() const { return by_uid_; }

 private:
  // Each allocation is held once and indexed twice without copying its UID: at 300,000 bound
  // pods a string per index entry costs tens of MB.
  ByUid by_uid_;
  std::map<std::string, std::vector<AllocationPtr>, std::less<>> by_node_;
};

}  // namespace gpusched::inventory
