#include "gpusched/inventory/node_table.h"

#include <gtest/gtest.h>

namespace gpusched::inventory {
namespace node_table_test {

std::vector<NodeStatePtr> States(size_t n) {
  std::vector<NodeStatePtr> out;
  for (size_t i = 0; i < n; ++i) {
    placement::NodeState s;
    s.node.name = "n" + std::to_string(i);
    out.push_back(std::make_shared<const placement::NodeState>(std::move(s)));
  }
  return out;
}

TEST(NodeTable, HoldsEveryStateAtItsPosition) {
  std::vector<NodeStatePtr> states = States(3 * NodeTable::kChunk + 5);
  NodeTable t = NodeTable::Of(states);
  ASSERT_EQ(t.size(), states.size());
  for (size_t i = 0; i < states.size(); ++i) EXPECT_EQ(t[i], states[i]);
  size_t visited = 0;
  for (const NodeStatePtr& s : t) EXPECT_EQ(s, states[visited++]);
  EXPECT_EQ(visited, states.size());
  EXPECT_TRUE(NodeTable::Of({}).empty());
}

TEST(NodeTable, AChangeReplacesItsPositionAndLeavesTheOldVersionIntact) {
  std::vector<NodeStatePtr> states = States(2 * NodeTable::kChunk);
  NodeTable before = NodeTable::Of(states);
  std::vector<NodeStatePtr> fresh = States(2);
  std::vector<std::pair<size_t, NodeStatePtr>> changes = {{3, fresh[0]}, {NodeTable::kChunk + 1, fresh[1]}, {4, fresh[1]}};
  NodeTable after = before.With(changes);
  for (size_t i = 0; i < states.size(); ++i) {
    EXPECT_EQ(before[i], states[i]) << i;
    NodeStatePtr want = i == 3 ? fresh[0] : (i == 4 || i == NodeTable::kChunk + 1) ? fresh[1] : states[i];
    EXPECT_EQ(after[i], want) << i;
  }
}

TEST(NodeTable, ALaterChangeOfTheSamePositionWins) {
  std::vector<NodeStatePtr> states = States(4);
  std::vector<NodeStatePtr> fresh = States(2);
  std::vector<std::pair<size_t, NodeStatePtr>> changes = {{1, fresh[0]}, {1, fresh[1]}};
  EXPECT_EQ(NodeTable::Of(states).With(changes)[1], fresh[1]);
}

}  // namespace node_table_test
}  // namespace gpusched::inventory
