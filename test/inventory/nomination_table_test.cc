// The nomination table (inventory/nomination_table.h): nominations keep their age while they ask
// for the same, their GPU holds expire by the TTL counted from when their victims are gone, and a
// relist ends those no longer pending.
#include "gpusched/inventory/nomination_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::inventory {
namespace nomination_table_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Clock = NominationTable::Clock;

Pod Nominated(std::string uid, std::string node) {
  return Pod{.uid = uid, .namespace_name = "ml", .name = uid, .priority = 100, .nominated_node = std::move(node)};
}

TEST(NominationTable, ANominationThatAsksForTheSameKeepsItsAgeAndTouchesNothing) {
  NominationTable table(std::chrono::seconds(60));
  Clock::time_point t0{};
  std::set<std::string> touched;
  table.Nominate(Nominated("p", "a"), true, t0, &touched);
  EXPECT_THAT(touched, ElementsAre("a"));
  touched.clear();
  table.Nominate(Nominated("p", "a"), true, t0 + std::chrono::seconds(30), &touched);
  EXPECT_THAT(touched, IsEmpty());
  EXPECT_EQ(table.all().at("p").hold, Expiry::Through(t0 + std::chrono::seconds(60)));  // from t0
}

// What a nominated pod counts on its node besides GPUs carries its host ports: kube-scheduler
// checks ports against the pods nominated there (defrag's landings, move_rules.h).
TEST(NominationTable, ANominationsUseCarriesItsHostPorts) {
  NominationTable table(std::chrono::seconds(60));
  std::set<std::string> touched;
  Pod p = Nominated("p", "a");
  p.constraints.host_ports = {HostPort{.port = 8080, .protocol = "TCP"}};
  table.Nominate(std::move(p), true, Clock::time_point{}, &touched);
  const PodUse& use = table.all().at("p").use;
  ASSERT_NE(use.labels, nullptr);
  EXPECT_EQ(use.labels->namespace_name, "ml");
  EXPECT_THAT(use.labels->constraints.host_ports, ElementsAre(HostPort{.port = 8080, .protocol = "TCP"}));
}

TEST(NominationTable, ANominationMovedToAnotherNodeTouchesBoth) {
  NominationTable table(std::chrono::seconds(60));
  std::set<std::string> touched;
  table.Nominate(Nominated("p", "a"), true, Clock::time_point{}, &touched);
  touched.clear();
  table.Nominate(Nominated("p", "b"), true, Clock::time_point{}, &touched);
  EXPECT_THAT(touched, ElementsAre("a", "b"));
  EXPECT_EQ(table.all().at("p").pod.nominated_node, "b");
}

TEST(NominationTable, AHoldExpiresAfterTheTtlOnceItsVictimsAreGoneAndThePodStillCounts) {
  NominationTable table(std::chrono::seconds(60));
  Clock::time_point t0{};
  std::set<std::string> touched;
  table.Nominate(Nominated("p", "a"), true, t0, &touched);
  table.Nominate(Nominated("cpu", "a"), false, t0, &touched);  // no GPUs: nothing to expire
  touched.clear();
  bool leaving = true;
  auto victims = [&](std::string_view node, int32_t priority) { return leaving && node == "a" && priority == 100; };
  table.ExpireHolds(t0 + std::chrono::seconds(120), victims, &touched);
  EXPECT_TRUE(table.all().at("p").gpus);  // victims still leaving: the clock restarted at 120 s
  leaving = false;
  table.ExpireHolds(t0 + std::chrono::seconds(170), victims, &touched);
  EXPECT_TRUE(table.all().at("p").gpus);
  EXPECT_THAT(touched, IsEmpty());
  table.ExpireHolds(t0 + std::chrono::seconds(181), victims, &touched);
  EXPECT_FALSE(table.all().at("p").gpus);
  EXPECT_THAT(touched, ElementsAre("a"));
  EXPECT_EQ(table.all().size(), 2u);  // both still count against the node's other resources
}

TEST(NominationTable, ARelistEndsTheNominationsOfPodsNoLongerPending) {
  NominationTable table(std::chrono::seconds(60));
  std::set<std::string> touched;
  table.Nominate(Nominated("p", "a"), true, Clock::time_point{}, &touched);
  table.Nominate(Nominated("q", "b"), true, Clock::time_point{}, &touched);
  touched.clear();
  table.EndUnlisted({"q"}, &touched);
  EXPECT_THAT(touched, ElementsAre("a"));
  EXPECT_EQ(table.all().count("p"), 0u);
  table.End("q", &touched);
  EXPECT_TRUE(table.all().empty());
}

}  // namespace nomination_table_test
}  // namespace gpusched::inventory
