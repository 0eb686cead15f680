// Room for a pod group at once, on hand-built clusters: members never count on the same room,
// a group that cannot have room whole gets no moves, moves are counted over the whole plan, a
// launcher lands beside the workers, claim members are named, and evictions by preempt's rules
// (lower priority only, never a sibling, budget violations counted).
#include "gpusched/placement/group_defrag.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "defrag_cluster.h"
#include "test_nodes.h"

namespace gpusched::placement {
namespace group_defrag_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Pod Member(const std::string& name, int64_t gpus, int32_t priority = 0) {
  Pod p = WholePod(gpus);
  p.uid = "uid-" + name;
  p.name = name;
  p.priority = priority;
  return p;
}

std::vector<GangMember> Members(const std::vector<Pod>& pods) {
  std::vector<GangMember> out;
  for (const Pod& p : pods) out.push_back(GangMember{.pod = &p, .request = AnalyzePod(p)});
  return out;
}

std::vector<std::string> Moves(const GroupRoomPlan& p) {
  std::vector<std::string> out;
  for (const DefragMove& m : p.moves) out.push_back(m.pod + " " + m.from + "->" + m.to);
  return out;
}

std::vector<std::string> Nodes(const GroupRoomPlan& p) {
  std::vector<std::string> out;
  for (const GangSlot& s : p.slots) out.push_back(s.node);
  return out;
}

GroupRoomPlan Room(const std::vector<Pod>& pods, DefragCluster& c, int max_moves = 8) {
  return MakeRoomForGroup(Members(pods), c.Input(), DefragOptions{.max_moves = max_moves});
}

// a: a4 and a2 of 8 GPUs; b: b6 of 8; c: c4 of 8. One 4-GPU pod fits on c as it is; a second
// fits only once a2 moves to b.
DefragCluster OneFreeBlock() {
  DefragCluster c;
  c.Add(WholeNode("a", 8), {WholeAlloc("a4", "a", 4), WholeAlloc("a2", "a", 2)});
  c.Add(WholeNode("b", 8), {WholeAlloc("b6", "b", 6)});
  c.Add(WholeNode("c", 8), {WholeAlloc("c4", "c", 4)});
  return c;
}

TEST(GroupDefrag, TwoMembersNeverCountOnTheSameRoom) {
  DefragCluster c = OneFreeBlock();
  std::vector<Pod> pods = {Member("w0", 4), Member("w1", 4)};
  // Alone, each member fits on c without a move: the room one pod sees is not room for two.
  DefragPlan alone = MakeRoom(AnalyzePod(pods[1]), pods[1], c.Input(), DefragOptions{});
  ASSERT_TRUE(alone.fits);
  EXPECT_THAT(alone.moves, IsEmpty());
  GroupRoomPlan p = Room(pods, c);
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_THAT(Nodes(p), ElementsAre("c", "a"));
  EXPECT_THAT(Moves(p), ElementsAre("ns/a2 a->b"));
  EXPECT_EQ(p.nodes, 2u);
  EXPECT_EQ(p.slots[0].placement.whole_gpus, 4);
}

TEST(GroupDefrag, AGroupThatCannotHaveRoomWholeGetsNoMoves) {
  DefragCluster c = OneFreeBlock();
  GroupRoomPlan p = Room({Member("w0", 4), Member("w1", 4), Member("w2", 4)}, c);
  EXPECT_FALSE(p.fits);
  EXPECT_THAT(p.moves, IsEmpty());
  EXPECT_THAT(p.slots, IsEmpty());
  EXPECT_THAT(p.reason, HasSubstr("2 of 3 members have room; ns/w2:"));
}

// a: a4 + a2; b: b4 + b2; s and t: 14 of 16 used each (fuller than a and b, so the moved pods
// go there). Each of two 4-GPU members needs one 2-GPU pod moved out of its way.
TEST(GroupDefrag, MovesAreCountedOverTheWholePlan) {
  DefragCluster c;
  c.Add(WholeNode("a", 8), {WholeAlloc("a4", "a", 4), WholeAlloc("a2", "a", 2)});
  c.Add(WholeNode("b", 8), {WholeAlloc("b4", "b", 4), WholeAlloc("b2", "b", 2)});
  c.Add(WholeNode("s", 16), {WholeAlloc("s14", "s", 14)});
  c.Add(WholeNode("t", 16), {WholeAlloc("t14", "t", 14)});
  std::vector<Pod> pods = {Member("w0", 4), Member("w1", 4)};
  GroupRoomPlan two = Room(pods, c, 2);
  ASSERT_TRUE(two.fits) << two.reason;
  EXPECT_THAT(Moves(two), ElementsAre("ns/a2 a->s", "ns/b2 b->t"));
  GroupRoomPlan one = Room(pods, c, 1);
  EXPECT_FALSE(one.fits);
  EXPECT_THAT(one.moves, IsEmpty());
  EXPECT_THAT(one.reason, HasSubstr("1 of 2 members have room; ns/w1: no node makes room with at most 0 moves"));
}

TEST(GroupDefrag, ABudgetsAllowanceIsSharedByTheWholePlan) {
  DefragCluster c;
  c.Add(WholeNode("a", 8), {WholeAlloc("a4", "a", 4), WholeAlloc("a2", "a", 2)});
  c.Add(WholeNode("b", 8), {WholeAlloc("b4", "b", 4), WholeAlloc("b2", "b", 2)});
  c.Add(WholeNode("s", 16), {WholeAlloc("s14", "s", 14)});
  c.Add(WholeNode("t", 16), {WholeAlloc("t14", "t", 14)});
  // One budget over every pod of the namespace, allowing one disruption: a2's move uses it, and
  // b2's would violate it.
  c.budgets->push_back(DisruptionBudget{.namespace_name = "ns", .name = "all", .selector_set = true, .disruptions_allowed = 1});
  GroupRoomPlan p = Room({Member("w0", 4), Member("w1", 4)}, c);
  EXPECT_FALSE(p.fits);
  EXPECT_THAT(p.moves, IsEmpty());
  EXPECT_THAT(p.reason, HasSubstr("1 of 2 members have room"));
}

// Main-pool nodes a (a4 + a2 of 8) and b (b2, terminating, of 4), and x (2 GPUs) of another pool.
// The members may run in the main pool only: w0 gets a once a2 moves to b (the fuller); w1 could
// then have b only if a2 moved again, to x.
TEST(GroupDefrag, AMovedPodNeverMovesAgainForAnotherMember) {
  DefragCluster c;
  auto pool = [](Node n, const char* name) {
    n.labels["pool"] = name;
    return n;
  };
  Allocation leaving = WholeAlloc("b2", "b", 2);
  leaving.terminating = true;
  c.Add(pool(WholeNode("a", 8), "main"), {WholeAlloc("a4", "a", 4), WholeAlloc("a2", "a", 2)});
  c.Add(pool(WholeNode("b", 4), "main"), {leaving});
  c.Add(pool(WholeNode("x", 2), "other"), {});
  std::vector<Pod> pods = {Member("w0", 4), Member("w1", 2)};
  for (Pod& p : pods) p.constraints.node_selector = {{"pool", "main"}};
  GroupRoomPlan p = Room(pods, c);
  EXPECT_FALSE(p.fits) << fmt::format("{}", fmt::join(Moves(p), ", "));
  EXPECT_THAT(p.reason, HasSubstr("1 of 2 members have room; ns/w1:"));
  // Alone, w1 fits b as it is (2 free).
  EXPECT_TRUE(Room({pods[1]}, c).fits);
}

TEST(GroupDefrag, ALauncherWithoutGpusLandsOnANodeOfThePlan) {
  DefragCluster c = OneFreeBlock();
  Pod launcher{.uid = "uid-launcher", .namespace_name = "ns", .name = "launcher", .containers = {Container{.name = "c"}}};
  GroupRoomPlan p = Room({launcher, Member("w0", 4)}, c);
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_THAT(Nodes(p), ElementsAre("c", "c"));
  EXPECT_TRUE(p.slots[0].placement.empty());
  EXPECT_THAT(p.moves, IsEmpty());
}

TEST(GroupDefrag, AMemberWithClaimsIsNamedAndTheGroupGetsNoPlan) {
  DefragCluster c = OneFreeBlock();
  Pod claims{.uid = "uid-dra", .namespace_name = "ns", .name = "dra", .containers = {Container{.name = "c"}},
             .resource_claims = {PodClaimRef{.name = "gpus", .claim_name = "c1"}}};
  GroupRoomPlan p = Room({Member("w0", 4), claims}, c);
  EXPECT_FALSE(p.fits);
  EXPECT_THAT(p.reason, HasSubstr("ns/dra gets its GPUs through ResourceClaims"));
}

TEST(GroupDefrag, EvictionsTakeOnlyPodsOfLowerPriorityAndNeverASibling) {
  DefragCluster c;
  Allocation mid = WholeAlloc("mid", "b", 4);
  mid.priority = 50;
  Allocation high = WholeAlloc("high", "b", 4);
  high.priority = 1000;
  c.Add(WholeNode("a", 8), {WholeAlloc("low", "a", 4), WholeAlloc("low2", "a", 4)});
  c.Add(WholeNode("b", 8), {high, mid});
  c.Protect("low2");
  // big (priority 10) needs a whole node: only a's pods are below it. small (priority 100) could
  // then evict big's booking on a (priority 10, cheaper than mid's 50), but a sibling never goes.
  std::vector<Pod> pods = {Member("small", 4, 100), Member("big", 8, 10)};
  GroupRoomPlan p = EvictForGroup(Members(pods), c.Input(), DefragOptions{});
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_THAT(Nodes(p), ElementsAre("b", "a"));
  EXPECT_THAT(Moves(p), ElementsAre("ns/low a->", "ns/low2 a->", "ns/mid b->"));
  EXPECT_EQ(p.pdb_violations, 1);
  // A third member finds nothing below its priority left to evict: no evictions at all.
  pods.push_back(Member("third", 4, 100));
  GroupRoomPlan more = EvictForGroup(Members(pods), c.Input(), DefragOptions{});
  EXPECT_FALSE(more.fits);
  EXPECT_THAT(more.moves, IsEmpty());
  EXPECT_THAT(more.reason, HasSubstr("2 of 3 members have room"));
}

TEST(GroupDefrag, ABoundMemberOfTheGroupIsNeverEvictedForASibling) {
  // The reprieve gives back the higher priority first: without the rule, other (10) would stay
  // and bound (0) go.
  DefragCluster c;
  Allocation other = WholeAlloc("other", "a", 4);
  other.priority = 10;
  c.Add(WholeNode("a", 8), {WholeAlloc("bound", "a", 4), other});
  PodGroupRef train{.api = GroupApi::kPodGroup, .name = "train"};
  auto uses = std::make_shared<NodeUses>(*c.nodes[0].uses);
  PodUse use = *uses->Find("bound");
  auto labels = std::make_shared<PodLabels>(*use.labels);
  labels->group = train;  // a running member of the same group, priority 0
  use.labels = labels;
  uses->Put(std::move(use));
  c.nodes[0].uses = uses;
  Pod w = Member("w", 4, 100);
  w.group = train;
  GroupRoomPlan p = EvictForGroup(Members({w}), c.Input(), DefragOptions{});
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_THAT(Moves(p), ElementsAre("ns/other a->"));  // not ns/bound, though both are below 100
}

}  // namespace group_defrag_test
}  // namespace gpusched::placement
