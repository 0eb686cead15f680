// File: group_table.h
//
// GroupTable: the pod groups the cluster declares (model/pod_group.h), by GroupKey, as the
// snapshots show them. An object is the unit of change: a Workload declares one group per
// spec.podGroups[] entry, so an update replaces all of its groups, a deletion removes them all,
// and a relist of one API replaces that API's groups and leaves the others'. Beside the groups,
// the pods that name one, whether or not the group is known yet (a member can arrive before its
// group): the pending ones whole, the bound ones by UID.
//
// Thread-compatible: one component of the inventory, guarded by its mutex.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/pod.h"
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

  // The key of an instance of a group: its GroupKey, and a Workload's replica key after "#"
  // ("Workload/ml/job/workers#r1").
  static std::string MemberKey(GroupApi api, std::string_view namespace_name, std::string_view name,
                               std::string_view replica);
  // The key of the group instance `pod` is a member of; "" for a pod of no group.
  static std::string MemberKey(const Pod& pod);

  // Keeps `pod` as a member if it names a group and is not terminal or terminating: pending, or
  // bound; otherwise forgets it as one.
  void PutMember(const Pod& pod);
  void DropMember(std::string_view uid);
  // Forgets `uid` as a pending member only: the watch of pending pods saw it go (bound, or
  // deleted), and a bound member stays counted.
  void DropPending(std::string_view uid);
  // Forgets the pending members whose UID `listed` does not hold (a relist of pending pods).
  void KeepPending(const std::set<std::string_view>& listed);
  // A group instance's members as snapshots show them: the pending ones by UID, and how many
  // are bound.
  struct Members {
    std::vector<std::shared_ptr<const Pod>> pending;
    size_t bound = 0;
    std::vector<std::string> bound_uids;  // the `bound` members' UIDs, ascending
    // Every member's GPU demand in milli-GPU (placement::GangDemand; 0: a launcher without GPUs,
    // or GPUs through claims): the pending ones' in `pending` order, then the bound ones' in
    // `bound_uids` order. Read from each pod when it was put, so a bound member's is known
    // without its pod.
    std::vector<int64_t> demands;
  };
  using MembersByKey = std::map<std::string, Members, std::less<>>;
  // True if the members changed since members() was last asked.
  bool members_changed() const { return members_changed_; }
  // Every group instance's members, by MemberKey, as snapshots share them; never null.
  const std::shared_ptr<const MembersByKey>& members();

 private:
  std::shared_ptr<const Groups> groups_ = std::make_shared<const Groups>();
  struct Membership {
    std::string key;  // MemberKey
    bool bound = false;
    int64_t demand = 0;  // Members::demands
  };
  std::map<std::string, std::map<std::string, std::shared_ptr<const Pod>>, std::less<>> pending_;  // by MemberKey, then UID
  std::map<std::string, std::set<std::string>, std::less<>> bound_;         // by MemberKey: UIDs
  std::map<std::string, Membership, std::less<>> member_of_;                // by UID
  bool members_changed_ = false;
  std::shared_ptr<const MembersByKey> members_ = std::make_shared<const MembersByKey>();
};

}  // namespace gpusched::inventory
