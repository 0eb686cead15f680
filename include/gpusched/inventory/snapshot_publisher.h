// File: snapshot_publisher.h
//
// SnapshotPublisher: how the inventory turns rebuilt node states into the next immutable
// InventorySnapshot. It stamps each rebuilt state with the next generation (the key of every
// per-node cache), remembers it until the next Publish, and publishes either the last table with
// those states swapped in (copying only the chunks they are in) or, when nodes were added or
// removed or more than a quarter of them were rebuilt, a new table and name index. Versions
// increase by one per snapshot.
//
// Thread-compatible: owned by Inventory, which serializes every access and stores what Publish
// returns in the atomic pointer its readers load.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/inventory/name_index.h"
#include "gpusched/inventory/node_table.h"
#include "gpusched/inventory/snapshot.h"

namespace gpusched::inventory {

class SnapshotPublisher {
 public:
  // Every node's name and current state, in name order.
  using AllNodes = std::function<std::vector<std::pair<std::string_view, NodeStatePtr>>()>;

  // Returns `state` of node `name`, stamped with the next generation, and remembers it for the
  // next Publish.
  NodeStatePtr Stamp(const std::string& name, placement::NodeState state);

  // Returns the next snapshot. `node_set_changed`: nodes were added or removed since the last;
  // `node_count`: how many there are now; `all` is called only when a new table is built. The
  // rest is carried into the snapshot as given.
  std::shared_ptr<const InventorySnapshot> Publish(bool node_set_changed, size_t node_count, const AllNodes& all,
                                                   dra::ClusterStatePtr dra,
                                                   std::shared_ptr<const std::vector<DisruptionBudget>> budgets,
                                                   std::shared_ptr<const GroupTable::Groups> groups,
                                                   std::shared_ptr<const GroupTable::MembersByKey> members,
                                                   std::vector<std::string> held_nodes);

 private:
  uint64_t version_ = 0;
  uint64_t generation_ = 0;  // the last NodeState::generation given
  std::shared_ptr<const NameIndex> index_;
  NodeTable table_;  // the last published snapshot's nodes
  std::vector<std::pair<std::string, NodeStatePtr>> rebuilt_;  // since the last Publish, by name
};

}  // namespace gpusched::inventory
