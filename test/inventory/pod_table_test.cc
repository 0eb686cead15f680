// The pod table (inventory/pod_table.h): records by UID with the unbound count and the
// unreadable list kept in step, and remembered pending pods forgotten oldest first.
#include "gpusched/inventory/pod_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::inventory {
namespace pod_table_test {

Pod Pending(std::string uid) { return Pod{.uid = uid, .namespace_name = "ml", .name = uid}; }

Pod Bound(std::string uid) {
  Pod p = Pending(std::move(uid));
  p.node_name = "n1";
  p.phase = PodPhase::kRunning;
  return p;
}

TEST(PodTable, TheUnboundCountFollowsEachRecordThroughBindAndDeletion) {
  PodTable table;
  table.Put(Pending("a"));
  table.Put(Pending("b"));
  EXPECT_EQ(table.unbound(), 2u);
  table.Put(Bound("a"));  // a bound: one fewer unbound
  EXPECT_EQ(table.unbound(), 1u);
  ASSERT_NE(table.Find("a"), nullptr);
  EXPECT_EQ(table.Find("a")->node_name, "n1");
  EXPECT_TRUE(table.Erase("b"));
  EXPECT_FALSE(table.Erase("b"));
  EXPECT_EQ(table.unbound(), 0u);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.Find("b"), nullptr);
}

TEST(PodTable, AnUnreadablePodIsListedUntilItIsReadableOrGone) {
  PodTable table;
  Pod bad = Pending("a");
  bad.spec_error = "spec.containers[0].resources.limits[nvidia.com/gpu]: \"1.5\" is not a whole number";
  table.Put(Pod(bad));
  ASSERT_EQ(table.unreadable().size(), 1u);
  EXPECT_THAT(table.unreadable().at("a"), ::testing::StartsWith("pod ml/a (a): spec.containers[0]"));
  table.Put(Pending("a"));
  EXPECT_TRUE(table.unreadable().empty());
  table.Put(std::move(bad));
  table.Erase("a");
  EXPECT_TRUE(table.unreadable().empty());
}

TEST(PodTable, TrimForgetsTheOldestRememberedPendingPodsThatMayBeForgotten) {
  PodTable table;
  for (std::string uid : {"a", "b", "c", "d"}) table.Remember(Pending(uid));
  table.Put(Bound("b"));  // bound meanwhile: never forgotten
  table.Trim(1, [](std::string_view uid) { return uid != "c"; });  // c is pinned (booked)
  EXPECT_EQ(table.Find("a"), nullptr);
  EXPECT_NE(table.Find("b"), nullptr);
  EXPECT_NE(table.Find("c"), nullptr);
  EXPECT_EQ(table.Find("d"), nullptr);
  EXPECT_EQ(table.unbound(), 1u);
}

TEST(PodTable, StaleArrivalsAreDroppedWhenTheyPileUp) {
  PodTable table;
  for (int i = 0; i < 1100; ++i) {
    table.Remember(Pending(std::to_string(i)));
    table.Put(Bound(std::to_string(i)));
  }
  table.Remember(Pending("last"));
  table.Trim(10, [](std::string_view) { return true; });
  EXPECT_EQ(table.remembered(), 1u);  // only the pending pod's arrival is kept
  EXPECT_NE(table.Find("last"), nullptr);
}

}  // namespace pod_table_test
}  // namespace gpusched::inventory
