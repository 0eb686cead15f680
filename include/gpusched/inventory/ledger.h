// File: ledger.h
//
// The ledger: every GPU allocation in the cluster, keyed by pod UID, whatever the node mode.
// A pod UID appears at most once, so a pod is never counted twice.
//
// Not thread-safe: owned by Inventory, which serializes every access.
#pragma once

#include <map>
#include <set>
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
  // Returns the allocations on `node` (shared: they stay valid after a Release).
  std::vector<AllocationPtr> OnNode(std::string_view node) const;
  // Returns the names of nodes holding at least one allocation.
  std::vector<std::string> Nodes() const;

  size_t size() const { return by_uid_.size(); }
  const std::unordered_map<std::string, AllocationPtr>& all() const { return by_uid_; }

 private:
  std::unordered_map<std::string, AllocationPtr> by_uid_;
  std::map<std::string, std::set<std::string>, std::less<>> uids_by_node_;
};

}  // namespace gpusched::inventory
