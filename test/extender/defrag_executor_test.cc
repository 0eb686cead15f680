// Applying a defrag plan (defrag_executor.h) with a fake evictor: nothing is evicted unless every
// move passed its checks and every hold was made, and a refusal midway keeps the moves made.
#include "gpusched/extender/defrag_executor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "../placement/test_nodes.h"
#include "../support/fake_clock.h"
#include "gpusched/placement/nomination.h"

namespace gpusched::extender {
namespace defrag_executor_test {

using placement::DefragMove;
using placement::DefragPlan;
using ::testing::ElementsAre;

constexpr std::string_view kController = "rs-1";

// Records every call, "dry ml/a" or "evict ml/a"; refuses the calls named in `refuse`.
class FakeEvictor : public PodEvictor {
 public:
  Status Evict(const std::string& ns, const std::string& name, const std::string& uid, bool dry_run) override {
    std::string call = std::string(dry_run ? "dry " : "evict ") + ns + "/" + name;
    calls.push_back(call);
    if (!dry_run && holds) held_at_eviction.push_back(holds());
    auto it = refuse.find(call);
    return it == refuse.end() ? OkStatus() : it->second;
  }
  std::vector<std::string> calls;
  std::map<std::string, Status> refuse;
  std::function<size_t()> holds;          // counts the holds made so far
  std::vector<size_t> held_at_eviction;   // holds() at each eviction carried out
};

Pod Running(std::string uid, std::string node, int64_t gpus) {
  Pod p = placement::WholePod(gpus);
  p.uid = p.name = std::move(uid);
  p.namespace_name = "ml";
  p.node_name = std::move(node);
  p.phase = PodPhase::kRunning;
  p.controller_uid = std::string(kController);
  return p;
}

DefragMove Move(std::string uid, int64_t gpus) {
  return DefragMove{.pod = "ml/" + uid, .uid = uid, .from = "w", .to = "v",
                    .placement = {.kind = RequestKind::kWholeGpu, .whole_gpus = gpus},
                    .controller_uid = std::string(kController)};
}

class DefragExecutorTest : public ::testing::Test {
 protected:
  DefragExecutorTest() : inv_(inventory::InventoryOptions{.clock = &clock_}) {
    inv_.ReplaceCluster({.nodes = {placement::WholeNode("w", 8), placement::WholeNode("v", 8)},
                         .pods = {Running("a", "w", 4), Running("b", "w", 2)}});
    pending_ = placement::WholePod(8);
    pending_.uid = pending_.name = "p";
    pending_.namespace_name = "ml";
    plan_ = DefragPlan{.fits = true, .node = "w", .placement = {.kind = RequestKind::kWholeGpu, .whole_gpus = 8},
                       .moves = {Move("a", 4), Move("b", 2)}};
  }
  DefragApplied Apply(bool for_pending = true) {
    evictor_.holds = [this] { return HoldsOn("w") + HoldsOn("v"); };
    DefragExecutor executor({.inventory = &inv_, .evictor = &evictor_});
    return executor.Apply(plan_, for_pending ? std::optional<Pod>(pending_) : std::nullopt);
  }
  size_t HoldsOn(const std::string& node) { return inv_.Snapshot()->FindNode(node)->holds.size(); }

  testing::FakeClock clock_;
  inventory::Inventory inv_;
  FakeEvictor evictor_;
  Pod pending_;
  DefragPlan plan_;
};

TEST_F(DefragExecutorTest, EveryCheckPassesThenEveryHoldIsMadeThenPodsAreEvictedInOrder) {
  DefragApplied out = Apply();
  EXPECT_THAT(evictor_.calls, ElementsAre("dry ml/a", "dry ml/b", "evict ml/a", "evict ml/b"));
  EXPECT_TRUE(out.held);
  ASSERT_EQ(out.moves.size(), 2u);
  EXPECT_TRUE(out.moves[0].evicted && out.moves[1].evicted);
  EXPECT_EQ(HoldsOn("w"), 1u);  // the pending pod's
  EXPECT_EQ(HoldsOn("v"), 2u);  // one per move, for the controller's next pod
  EXPECT_THAT(evictor_.held_at_eviction, ElementsAre(3u, 3u));  // every hold before the first eviction
}

TEST_F(DefragExecutorTest, AMoveWhoseHoldFailsDropsTheHoldsMadeAndEvictsNothing) {
  plan_.moves[1].placement.whole_gpus = 9;  // more than v has: its hold cannot be made
  DefragApplied out = Apply();
  EXPECT_THAT(evictor_.calls, ElementsAre("dry ml/a", "dry ml/b"));
  EXPECT_FALSE(out.moves[0].evicted || out.moves[1].evicted);
  EXPECT_FALSE(out.moves[1].error.empty());
  EXPECT_EQ(HoldsOn("w") + HoldsOn("v"), 0u);  // the pending pod's and a's dropped too
}

TEST_F(DefragExecutorTest, APlanForAFragmentationTargetHoldsOnlyForTheMovedPods) {
  DefragApplied out = Apply(/*for_pending=*/false);
  EXPECT_FALSE(out.held);
  EXPECT_EQ(HoldsOn("w"), 0u);
  EXPECT_EQ(HoldsOn("v"), 2u);
  EXPECT_THAT(evictor_.held_at_eviction, ElementsAre(2u, 2u));
}

TEST_F(DefragExecutorTest, ADryRunRefusalEvictsNothingAndHoldsNothing) {
  evictor_.refuse["dry ml/b"] = ResourceExhaustedError("budget ml/pdb allows 0 disruptions");
  DefragApplied out = Apply();
  EXPECT_THAT(evictor_.calls, ElementsAre("dry ml/a", "dry ml/b"));
  EXPECT_FALSE(out.held);
  ASSERT_EQ(out.moves.size(), 2u);
  EXPECT_FALSE(out.moves[0].evicted);
  EXPECT_EQ(out.moves[0].error, "not evicted: the plan stopped");
  EXPECT_THAT(out.moves[1].error, ::testing::HasSubstr("(dry run: nothing was evicted)"));
  EXPECT_EQ(HoldsOn("w") + HoldsOn("v"), 0u);
}

TEST_F(DefragExecutorTest, AMoveWithoutAControllerStopsThePlanBeforeAnything) {
  plan_.moves[1].controller_uid.clear();
  DefragApplied out = Apply();
  EXPECT_THAT(evictor_.calls, ElementsAre("dry ml/a"));
  EXPECT_THAT(out.moves[1].error, ::testing::HasSubstr("no controller"));
  EXPECT_EQ(HoldsOn("w") + HoldsOn("v"), 0u);
}

TEST_F(DefragExecutorTest, ARefusalMidwayKeepsTheMovesMadeAndDropsTheHoldsOfTheRest) {
  evictor_.refuse["evict ml/b"] = ResourceExhaustedError("budget used up meanwhile");
  DefragApplied out = Apply();
  EXPECT_THAT(evictor_.calls, ElementsAre("dry ml/a", "dry ml/b", "evict ml/a", "evict ml/b"));
  EXPECT_TRUE(out.held);
  EXPECT_TRUE(out.moves[0].evicted);
  EXPECT_FALSE(out.moves[1].evicted);
  EXPECT_EQ(HoldsOn("w"), 1u);  // the pending pod keeps its hold
  EXPECT_EQ(HoldsOn("v"), 1u);  // a's stays, b's ends
}

TEST_F(DefragExecutorTest, AnEvictionOfUnknownOutcomeKeepsItsHold) {
  evictor_.refuse["evict ml/b"] = UnavailableError("connection reset");
  DefragApplied out = Apply();
  EXPECT_THAT(out.moves[1].error, ::testing::HasSubstr("outcome unknown"));
  EXPECT_EQ(HoldsOn("v"), 2u);  // b may be gone: its replacement's GPUs stay held
}

TEST_F(DefragExecutorTest, APlanThatDoesNotFitDoesNothing) {
  plan_.fits = false;
  DefragApplied out = Apply();
  EXPECT_TRUE(evictor_.calls.empty());
  EXPECT_TRUE(out.moves.empty());
  EXPECT_FALSE(out.held);
}

// A pod group's room: one per member, each held for the member before the first move's hold.
std::vector<PendingRoom> MemberRooms(int64_t first, int64_t second) {
  auto room = [](std::string uid, int64_t gpus) {
    return PendingRoom{.about = Allocation{.pod_uid = uid, .pod_namespace = "ml", .pod_name = uid}, .node = "w",
                       .placement = {.kind = RequestKind::kWholeGpu, .whole_gpus = gpus}};
  };
  return {room("m0", first), room("m1", second)};
}

TEST_F(DefragExecutorTest, EveryMembersRoomIsHeldBeforeTheFirstEviction) {
  evictor_.holds = [this] { return HoldsOn("w") + HoldsOn("v"); };
  DefragExecutor executor({.inventory = &inv_, .evictor = &evictor_});
  DefragApplied out = executor.ApplyRoom(plan_.moves, MemberRooms(4, 4), Unjudged{}, UnjudgedPolicy::kRefuse);
  EXPECT_TRUE(out.held);
  EXPECT_THAT(evictor_.calls, ElementsAre("dry ml/a", "dry ml/b", "evict ml/a", "evict ml/b"));
  EXPECT_THAT(evictor_.held_at_eviction, ElementsAre(4u, 4u));
  EXPECT_EQ(HoldsOn("w"), 2u);  // each member's, its UID the holder: the slot gang_holds.h reads
  EXPECT_EQ(inv_.Snapshot()->FindNode("w")->holds[1].pod_uid, "m1");
}

TEST_F(DefragExecutorTest, AMembersRoomThatCannotBeHeldDropsTheOthersAndEvictsNothing) {
  DefragExecutor executor({.inventory = &inv_, .evictor = &evictor_});
  DefragApplied out = executor.ApplyRoom(plan_.moves, MemberRooms(8, 4), Unjudged{}, UnjudgedPolicy::kRefuse);
  EXPECT_FALSE(out.held);
  EXPECT_THAT(evictor_.calls, ElementsAre("dry ml/a", "dry ml/b"));
  ASSERT_FALSE(out.moves.empty());
  EXPECT_EQ(out.moves[0].pod, "ml/m1");
  EXPECT_FALSE(out.moves[0].error.empty());
  EXPECT_EQ(HoldsOn("w") + HoldsOn("v"), 0u);  // m0's room dropped too
}

TEST_F(DefragExecutorTest, ASlotAMembersRoomReplacedIsHeldAgainWhenThePlanStops) {
  Allocation m0{.pod_uid = "m0", .pod_namespace = "ml", .pod_name = "m0"};
  Placement two{.kind = RequestKind::kWholeGpu, .whole_gpus = 2};
  ASSERT_TRUE(inv_.HoldFor("m0", m0, "v", two, std::chrono::seconds(300), {}).ok());  // m0's slot
  std::vector<PendingRoom> rooms = MemberRooms(4, 8);  // m1's 8 beside m0's 4 cannot be held
  rooms[0].replaced = Allocation{.pod_uid = "m0", .node_name = "v", .placement = two};
  DefragExecutor executor({.inventory = &inv_, .evictor = &evictor_});
  DefragApplied out = executor.ApplyRoom(plan_.moves, rooms, Unjudged{}, UnjudgedPolicy::kRefuse);
  EXPECT_FALSE(out.held);
  EXPECT_EQ(HoldsOn("w"), 0u);
  ASSERT_EQ(HoldsOn("v"), 1u);  // m0's slot, back where it was
  EXPECT_EQ(inv_.Snapshot()->FindNode("v")->holds[0].pod_uid, "m0");
}

// m0's slot fills v; the plan gives v to m1 and m0 a room on w: m1's room is held once m0's old
// slot gave way, whatever the rooms' order.
TEST_F(DefragExecutorTest, ARoomOnASiblingsOldSlotIsHeld) {
  Allocation m0{.pod_uid = "m0", .pod_namespace = "ml", .pod_name = "m0"};
  Placement eight{.kind = RequestKind::kWholeGpu, .whole_gpus = 8};
  ASSERT_TRUE(inv_.HoldFor("m0", m0, "v", eight, std::chrono::seconds(300), {}).ok());
  std::vector<PendingRoom> rooms = {PendingRoom{.about = Allocation{.pod_uid = "m1", .pod_namespace = "ml", .pod_name = "m1"}, .node = "v", .placement = eight},
           PendingRoom{.about = m0, .node = "w", .placement = {.kind = RequestKind::kWholeGpu, .whole_gpus = 4},
                       .replaced = Allocation{.pod_uid = "m0", .node_name = "v", .placement = eight}}};
  DefragExecutor executor({.inventory = &inv_, .evictor = &evictor_});  // no moves: a and b stay on w
  DefragApplied out = executor.ApplyRoom({}, rooms, Unjudged{}, UnjudgedPolicy::kRefuse);
  EXPECT_FALSE(out.held);  // w has 2 free GPUs (a and b stay): m0's room fails ...
  ASSERT_EQ(HoldsOn("v"), 1u);  // ... and m0's slot is back on v, m1's dropped
  EXPECT_EQ(inv_.Snapshot()->FindNode("v")->holds[0].pod_uid, "m0");
  rooms[1].placement.whole_gpus = 2;  // a room that fits beside a and b
  DefragApplied fits = executor.ApplyRoom({}, rooms, Unjudged{}, UnjudgedPolicy::kRefuse);
  EXPECT_TRUE(fits.held);
  ASSERT_EQ(HoldsOn("v"), 1u);
  EXPECT_EQ(inv_.Snapshot()->FindNode("v")->holds[0].pod_uid, "m1");
  ASSERT_EQ(HoldsOn("w"), 1u);
  EXPECT_EQ(inv_.Snapshot()->FindNode("w")->holds[0].pod_uid, "m0");
}

TEST_F(DefragExecutorTest, MembersAskingWhatGpuschedDoesNotJudgeStopThePlanUnlessAccepted) {
  DefragExecutor executor({.inventory = &inv_, .evictor = &evictor_});
  Unjudged affinity{.what = "required pod affinity", .pod = "a member of pod group ml/train", .node = "the nodes of its plan"};
  DefragApplied refused = executor.ApplyRoom(plan_.moves, MemberRooms(4, 4), affinity, UnjudgedPolicy::kRefuse);
  EXPECT_TRUE(evictor_.calls.empty());
  EXPECT_THAT(refused.moves[0].error, ::testing::HasSubstr("cannot judge its required pod affinity"));
  DefragApplied accepted = executor.ApplyRoom(plan_.moves, MemberRooms(4, 4), affinity, UnjudgedPolicy::kAccept);
  EXPECT_TRUE(accepted.held);
  EXPECT_EQ(evictor_.calls.size(), 4u);
}

}  // namespace defrag_executor_test
}  // namespace gpusched::extender
