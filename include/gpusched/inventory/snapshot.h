// File: snapshot.h
//
// An immutable view of the inventory at one version: every node's NodeState, by name. Readers
// (filter, prioritize, /debug) work on a snapshot without locks; the owner publishes a new one
// after every mutation and shares unchanged NodeStates between versions.
//
// Thread-safe: all methods are const and the object never changes after construction.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/dra/cluster_state.h"
#include "gpusched/inventory/group_table.h"
#include "gpusched/inventory/name_index.h"
#include "gpusched/inventory/node_table.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/placement/node_state.h"

namespace gpusched::inventory {

class InventorySnapshot {
 public:
  // REQUIRES: `nodes` sorted by name; `index` maps each node name to its position in `nodes`.
  InventorySnapshot(uint64_t version, NodeTable nodes, std::shared_ptr<const NameIndex> index,
                    dra::ClusterStatePtr dra, std::shared_ptr<const std::vector<DisruptionBudget>> budgets = nullptr,
                    std::vector<std::string> held_nodes = {},
                    std::shared_ptr<const GroupTable::Groups> groups = nullptr,
                    std::shared_ptr<const GroupTable::MembersByKey> members = nullptr)
      : version_(version),
        nodes_(std::move(nodes)),
        index_(std::move(index)),
        dra_(std::move(dra)),
        budgets_(std::move(budgets)),
        held_nodes_(std::move(held_nodes)),
        groups_(groups != nullptr ? std::move(groups) : std::make_shared<const GroupTable::Groups>()),
        members_(members != nullptr ? std::move(members) : std::make_shared<const GroupTable::MembersByKey>()) {}

  // Returns a monotonically increasing number; equal versions mean equal contents.
  uint64_t version() const { return version_; }
  // This snapshot with `dra` in place of its DRA objects: a what-if of claims not created yet
  // (a Kueue Workload's pods, kueue_check.h). Same version; not for caches keyed by it.
  std::shared_ptr<const InventorySnapshot> WithDra(dra::ClusterStatePtr dra) const {
    return std::make_shared<const InventorySnapshot>(version_, nodes_, index_, std::move(dra), budgets_, held_nodes_, groups_, members_);
  }
  static constexpr size_t kNoNode = static_cast<size_t>(-1);

  // Returns the position of node `name` in nodes(), or kNoNode.
  size_t FindIndex(std::string_view name) const {
    size_t i = index_->Find(name);
    return i == NameIndex::kNone ? kNoNode : i;
  }
  // Returns the node named `name`, or nullptr. Valid as long as this snapshot is alive.
  const placement::NodeState* FindNode(std::string_view name) const {
    size_t i = FindIndex(name);
    return i == kNoNode ? nullptr : nodes_[i].get();
  }
  // Returns the name index of nodes() (shared by every snapshot with the same node set).
  const std::shared_ptr<const NameIndex>& name_index() const { return index_; }
  // Returns every node, sorted by name.
  const NodeTable& nodes() const { return nodes_; }
  // Returns the cluster's DRA objects as of this snapshot. Never null.
  const dra::ClusterState& dra() const { return *dra_; }
  const dra::ClusterStatePtr& dra_ptr() const { return dra_; }
  // Returns the cluster's PodDisruptionBudgets (null when none are known).
  const std::shared_ptr<const std::vector<DisruptionBudget>>& budgets() const { return budgets_; }
  // Returns the nodes where GPUs may be held for nominated pods (placement/nomination.h).
  const std::vector<std::string>& held_nodes() const { return held_nodes_; }
  // Returns the pod groups (gangs) the cluster declares, by GroupKey. Never null.
  const GroupTable::Groups& groups() const { return *groups_; }
  // Returns the members of each group instance (GroupTable::MemberKey): pending, and how many
  // are bound. A member may name a group groups() does not hold (yet).
  const GroupTable::MembersByKey& group_members() const { return *members_; }
  // The same two, as snapshots share them (a cache keyed by them holds them alive). Never null.
  const std::shared_ptr<const GroupTable::Groups>& groups_ptr() const { return groups_; }
  const std::shared_ptr<const GroupTable::MembersByKey>& group_members_ptr() const { return members_; }
  // The members of group instance `member_key`; none when it has none.
  const GroupTable::Members& MembersOf(std::string_view member_key) const {
    static const GroupTable::Members kNone;
    auto it = members_->find(member_key);
    return it == members_->end() ? kNone : it->second;
  }

 private:
  const uint64_t version_;
  const NodeTable nodes_;
  const std::shared_ptr<const NameIndex> index_;
  const dra::ClusterStatePtr dra_;
  const std::shared_ptr<const std::vector<DisruptionBudget>> budgets_;
  const std::vector<std::string> held_nodes_;
  const std::shared_ptr<const GroupTable::Groups> groups_;
  const std::shared_ptr<const GroupTable::MembersByKey> members_;
};

}  // namespace gpusched::inventory
