// The annotated nodes (inventory/annotated_nodes.h): which nodes carry bookings and holds
// annotations, until when their holds last, and which annotated holds each node's state counts.
#include "gpusched/inventory/annotated_nodes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::inventory {
namespace annotated_nodes_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

NodeHold Hold(std::string about, int64_t at_ms, int64_t ttl_s) {
  return NodeHold{.about_uid = std::move(about), .at_ms = at_ms, .ttl_s = ttl_s};
}

Node WithHolds(std::string name, std::vector<NodeHold> holds) {
  return Node{.name = std::move(name), .holds = std::move(holds)};
}

TEST(AnnotatedNodes, ANodeIsBookedWhileItsBookingsAnnotationIsNotEmpty) {
  AnnotatedNodes nodes;
  Node n{.name = "n1"};
  n.bookings.push_back(NodeBooking{.booked_at_ms = 1});
  nodes.Update(n);
  nodes.Update(Node{.name = "n2"});
  EXPECT_THAT(nodes.booked(), ElementsAre("n1"));
  n.bookings.clear();
  nodes.Update(n);
  EXPECT_THAT(nodes.booked(), IsEmpty());
}

TEST(AnnotatedNodes, ANodeIsHeldUntilTheLastOfItsHoldsEnds) {
  AnnotatedNodes nodes;
  // Ends at 5,000 + 30 s and at 1,000 + 60 s: the later one, 61,000, keeps the node listed.
  nodes.Update(WithHolds("n1", {Hold("b", 5'000, 30), Hold("a", 1'000, 60)}));
  EXPECT_THAT(nodes.held(), ElementsAre(Pair("n1", 61'000)));
  nodes.ExpireHolds(61'000 - 1);
  EXPECT_THAT(nodes.held(), ElementsAre(Pair("n1", 61'000)));
  nodes.ExpireHolds(61'000);
  EXPECT_THAT(nodes.held(), IsEmpty());
}

TEST(AnnotatedNodes, AnUpdatedAnnotationReplacesTheNodesEnd) {
  AnnotatedNodes nodes;
  nodes.Update(WithHolds("n1", {Hold("a", 1'000, 60)}));
  nodes.Update(WithHolds("n1", {Hold("c", 100'000, 10)}));
  EXPECT_THAT(nodes.held(), ElementsAre(Pair("n1", 110'000)));
  nodes.Update(WithHolds("n1", {}));
  EXPECT_THAT(nodes.held(), IsEmpty());
}

TEST(AnnotatedNodes, TheCountedHoldsOfANodeAreComparedByKeyAndOrder) {
  AnnotatedNodes nodes;
  EXPECT_FALSE(nodes.CountsOther("n1", {}));
  EXPECT_TRUE(nodes.CountsOther("n1", {"a@1"}));
  nodes.SetCounted("n1", {"a@1", "b@2"});
  EXPECT_FALSE(nodes.CountsOther("n1", {"a@1", "b@2"}));
  EXPECT_TRUE(nodes.CountsOther("n1", {"a@1"}));
  EXPECT_TRUE(nodes.CountsOther("n1", {}));
  nodes.SetCounted("n1", {});  // counts none: no longer listed
  EXPECT_THAT(nodes.counted(), IsEmpty());
  EXPECT_FALSE(nodes.CountsOther("n1", {}));
}

TEST(AnnotatedNodes, ARemovedNodeIsForgottenEverywhere) {
  AnnotatedNodes nodes;
  Node n = WithHolds("n1", {Hold("a", 1'000, 60)});
  n.bookings.push_back(NodeBooking{.booked_at_ms = 1});
  nodes.Update(n);
  nodes.SetCounted("n1", {"a@1000"});
  nodes.Remove("n1");
  EXPECT_THAT(nodes.booked(), IsEmpty());
  EXPECT_THAT(nodes.held(), IsEmpty());
  EXPECT_THAT(nodes.counted(), IsEmpty());
}

}  // namespace annotated_nodes_test
}  // namespace gpusched::inventory
