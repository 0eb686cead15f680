// File: annotated_nodes.h
//
// The nodes whose annotations carry what gpusched replicas wrote there (model/node.h: bookings,
// holds), so that the inventory visits only those when it syncs bookings and when annotated
// holds run out; and, by node, which annotated holds the node's published state counts (their
// keys), so that a node is rebuilt exactly when that set changes. What each hold means, and
// whether it counts, is the inventory's to judge: this component keeps names and keys.
//
// Thread-compatible: one component of the inventory, guarded by its mutex.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/node.h"

namespace gpusched::inventory {

class AnnotatedNodes {
 public:
  using Names = std::set<std::string, std::less<>>;

  // Records what `node` carries now (a node added or updated).
  void Update(const Node& node);
  // Forgets node `name` (deleted), with the holds its state counted.
  void Remove(std::string_view name);

  // The nodes whose bookings annotation is not empty.
  const Names& booked() const { return booked_; }
  // The nodes whose holds annotation is not empty, by name, with when (Unix ms) the last of its
  // holds ends; a node leaves at the first ExpireHolds past that.
  const std::map<std::string, int64_t, std::less<>>& held() const { return held_; }
  // Forgets the held nodes whose every hold has ended at `now_ms`.
  void ExpireHolds(int64_t now_ms);

  // The keys of the annotated holds node `name`'s state counts, as it was last built (none: the
  // node is no longer listed).
  void SetCounted(const std::string& name, std::vector<std::string> keys);
  // True if node `name`'s state counts other annotated holds than `keys` (in the same order).
  bool CountsOther(std::string_view name, const std::vector<std::string>& keys) const;
  // The nodes whose state counts annotated holds, by name.
  const std::map<std::string, std::vector<std::string>, std::less<>>& counted() const { return counted_; }

 private:
  Names booked_;
  std::map<std::string, int64_t, std::less<>> held_;
  std::map<std::string, std::vector<std::string>, std::less<>> counted_;
};

}  // namespace gpusched::inventory
