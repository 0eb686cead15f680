// File: snapshot_publisher.cc
//
// Stamping rebuilt node states and publishing them: a patched table when few changed, a new table
// (and a new name index when the node set changed) otherwise.
#include "gpusched/inventory/snapshot_publisher.h"

namespace gpusched::inventory {

NodeStatePtr SnapshotPublisher::Stamp(const std::string& name, placement::NodeState state) {
  auto fresh = std::make_shared<placement::NodeState>(std::move(state));
  fresh->generation = ++generation_;
  // A fresh copy of the GPU array, allocated right after its state: see Inventory::RebuildLocked.
  fresh->gpus = std::vector<placement::GpuSlot>(fresh->gpus.begin(), fresh->gpus.end());
  NodeStatePtr out = std::move(fresh);
  rebuilt_.emplace_back(name, out);
  return out;
}

std::shared_ptr<const InventorySnapshot> SnapshotPublisher::Publish(bool node_set_changed, size_t node_count, const AllNodes& all,
                                                                    dra::ClusterStatePtr dra,
                                                                    std::shared_ptr<const std::vector<DisruptionBudget>> budgets,
                                                                    std::shared_ptr<const GroupTable::Groups> groups,
                                                                    std::shared_ptr<const GroupTable::MembersByKey> members,
                                                                    std::vector<std::string> held_nodes) {
  std::vector<std::pair<size_t, NodeStatePtr>> changes;
  bool whole = node_set_changed || index_ == nullptr || rebuilt_.size() > node_count / 4;
  for (size_t i = 0; i < rebuilt_.size() && !whole; ++i) {
    size_t pos = index_->Find(rebuilt_[i].first);
    whole = pos == NameIndex::kNone;  // a node the index does not know yet
    changes.emplace_back(pos, std::move(rebuilt_[i].second));
  }
  rebuilt_.clear();
  if (!whole) {
    table_ = table_.With(changes);
  } else {
    std::vector<NodeStatePtr> nodes;
    std::vector<std::string_view> names;
    for (auto& [name, state] : all()) {
      names.push_back(name);
      nodes.push_back(std::move(state));
    }
    if (node_set_changed || index_ == nullptr || index_->size() != names.size()) {
      index_ = std::make_shared<const NameIndex>(names);
    }
    table_ = NodeTable::Of(nodes);
  }
  return std::make_shared<const InventorySnapshot>(++version_, table_, index_, std::move(dra), std::move(budgets),
                                                   std::move(held_nodes), std::move(groups), std::move(members));
}

}  // namespace gpusched::inventory
