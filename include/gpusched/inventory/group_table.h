// File: group_table.h
//
// GroupTable: the pod groups the cluster declares (model/pod_group.h), by GroupKey, as the
// snapshots show them. An object is the unit of change: a Workload declares one group per
// spec.podGroups[] entry, so an update replaces all of its groups, a deletion removes them all,
// and a relist of one API replaces that API's groups and leaves the others'.
//
// Thread-compatible: one component of the inventory, guarded by its mutex.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/pod_group.h"

namespace gpusched::inventory {

class GroupTable {
 public:
  using Groups = std::map<std::string, PodGroup, std::less<>>;

  // The key of the object that declares `g`: GroupKey(g), or for a Workload's group that of its
  // Workload ("Workload/ml/job" for "Workload/ml/job/workers").
  static std::string ObjectKey(const PodGroup& g);

  // Applies the groups of some objects (`upserts`: every group each of them declares now),
  // the objects deleted (`deleted`, ObjectKeys) and, for each API in `relisted`, the end of its
  // objects that `upserts` does not hold. Returns true if any group changed.
  bool Apply(std::vector<PodGroup> upserts, const std::vector<std::string>& deleted, const std::vector<GroupApi>& relisted);

  // Every group, as snapshots share it; never null.
  const std::shared_ptr<const Groups>& groups() const { return groups_; }

 private:
  std::shared_ptr<const Groups> groups_ = std::make_shared<const Groups>();
};

}  // namespace gpusched::inventory
