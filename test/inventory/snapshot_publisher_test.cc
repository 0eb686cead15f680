// The snapshot publisher (inventory/snapshot_publisher.h): rebuilt states stamped with rising
// generations, published into the last table when few changed, into a new table (and a new name
// index when the node set changed) otherwise, one version per snapshot.
#include "gpusched/inventory/snapshot_publisher.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::inventory {
namespace snapshot_publisher_test {

// Nodes n0..n<count-1> (names in order), each with a state of its own.
struct Cluster {
  std::vector<std::string> names;
  std::vector<NodeStatePtr> states;

  explicit Cluster(int count) {
    for (int i = 0; i < count; ++i) {
      names.push_back("n" + std::string(i < 10 ? "0" : "") + std::to_string(i));
      states.push_back(std::make_shared<const placement::NodeState>());
    }
  }
  SnapshotPublisher::AllNodes All(int* calls) const {
    return [this, calls] {
      ++*calls;
      std::vector<std::pair<std::string_view, NodeStatePtr>> out;
      for (size_t i = 0; i < names.size(); ++i) out.emplace_back(names[i], states[i]);
      return out;
    };
  }
};

std::shared_ptr<const InventorySnapshot> Publish(SnapshotPublisher& p, const Cluster& c, bool node_set_changed, int* calls) {
  return p.Publish(node_set_changed, c.names.size(), c.All(calls), nullptr, nullptr, nullptr, nullptr, {});
}

TEST(SnapshotPublisher, AFewRebuiltNodesArePatchedIntoTheLastTable) {
  SnapshotPublisher p;
  Cluster c(8);
  int calls = 0;
  auto first = Publish(p, c, true, &calls);
  EXPECT_EQ(calls, 1);
  c.states[3] = p.Stamp("n03", placement::NodeState{});
  auto second = Publish(p, c, false, &calls);
  EXPECT_EQ(calls, 1);  // patched, not rebuilt
  EXPECT_EQ(second->version(), first->version() + 1);
  EXPECT_EQ(second->FindNode("n03"), c.states[3].get());
  EXPECT_EQ(second->FindNode("n04"), first->FindNode("n04"));
  EXPECT_NE(first->FindNode("n03"), c.states[3].get());  // the old snapshot is untouched
}

TEST(SnapshotPublisher, ManyRebuiltNodesOrANewNodeMakeANewTable) {
  SnapshotPublisher p;
  Cluster c(8);
  int calls = 0;
  Publish(p, c, true, &calls);
  for (int i : {0, 1, 2}) c.states[i] = p.Stamp(c.names[i], placement::NodeState{});  // more than a quarter
  auto rebuilt = Publish(p, c, false, &calls);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(rebuilt->FindNode("n02"), c.states[2].get());
  Cluster grown(9);
  grown.states[8] = p.Stamp("n08", placement::NodeState{});  // unknown to the index
  auto bigger = Publish(p, grown, false, &calls);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(bigger->nodes().size(), 9u);
  EXPECT_EQ(bigger->FindNode("n08"), grown.states[8].get());
}

TEST(SnapshotPublisher, EveryStampTakesTheNextGeneration) {
  SnapshotPublisher p;
  uint64_t a = p.Stamp("n00", placement::NodeState{})->generation;
  uint64_t b = p.Stamp("n00", placement::NodeState{})->generation;
  EXPECT_GT(a, 0u);
  EXPECT_EQ(b, a + 1);
}

}  // namespace snapshot_publisher_test
}  // namespace gpusched::inventory
