// Holds other replicas wrote to nodes (the annotation gpusched.io/holds, model/node.h NodeHold):
// every inventory counts them like its own until they are used or run out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../placement/test_nodes.h"
#include "../support/fake_clock.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/nomination.h"

namespace gpusched::inventory {
namespace inventory_holds_test {

using placement::WholeNode;
using placement::WholePod;

constexpr std::string_view kController = "rs-1";

// A hold of `gpus` whole GPUs on node "w" for `holder`, about pod `about`, made at `at_ms`.
NodeHold Held(std::string about, std::string holder, int64_t gpus, int64_t at_ms, std::vector<std::string> present = {}) {
  return NodeHold{.about_uid = about,
                  .hold = {.pod_uid = std::move(holder),
                           .pod_namespace = "ml",
                           .pod_name = about,
                           .node_name = "w",
                           .mode = NodeMode::kNvidia,
                           .placement = {.kind = RequestKind::kWholeGpu, .whole_gpus = gpus},
                           .origin = AllocationOrigin::kHeld,
                           .priority = INT32_MAX},
                  .at_ms = at_ms,
                  .ttl_s = 300,
                  .present = std::move(present)};
}

Node WithHolds(std::vector<NodeHold> holds, std::string rv) {
  Node n = WholeNode("w", 8);
  n.holds = std::move(holds);
  n.resource_version = std::move(rv);
  return n;
}

// A pod of the controller (or of none), bound to `node`.
Pod Of(std::string uid, std::string node, int64_t gpus, bool controlled = true) {
  Pod p = WholePod(gpus);
  p.uid = uid;
  p.name = uid;
  p.namespace_name = "ml";
  p.node_name = std::move(node);
  p.phase = PodPhase::kRunning;
  if (controlled) p.controller_uid = std::string(kController);
  return p;
}

class InventoryHolds : public ::testing::Test {
 protected:
  InventoryHolds() : inv_(InventoryOptions{.clock = &clock_}) {
    inv_.ReplaceCluster({.nodes = {WholeNode("w", 8), WholeNode("v", 8)}});
  }
  const placement::NodeState& W() { return *inv_.Snapshot()->FindNode("w"); }

  testing::FakeClock clock_;
  Inventory inv_;
};

TEST_F(InventoryHolds, AnotherReplicasHoldForAPendingPodCountsUntilThePodBindsAnywhere) {
  inv_.Apply({.upsert_nodes = {WithHolds({Held("pending", "pending", 3, clock_.WallMs())}, "2")}});
  EXPECT_EQ(W().whole_used, 3);
  ASSERT_EQ(W().holds.size(), 1u);
  EXPECT_EQ(W().holds[0].pod_uid, "pending");
  EXPECT_THAT(inv_.Snapshot()->held_nodes(), ::testing::ElementsAre("w"));
  inv_.Apply({.upsert_pods = {Of("pending", "v", 3, /*controlled=*/false)}});  // bound elsewhere
  EXPECT_EQ(W().whole_used, 0);
  EXPECT_TRUE(W().holds.empty());
}

TEST_F(InventoryHolds, AControllersHoldEndsOnlyWhenANewPodOfItBindsThere) {
  inv_.Apply({.upsert_pods = {Of("sibling", "w", 1)}});
  std::string key = placement::ControllerHoldKey(kController);
  inv_.Apply({.upsert_nodes = {WithHolds({Held("moved", key, 2, clock_.WallMs(), {"sibling"})}, "2")}});
  EXPECT_EQ(W().whole_used, 3);
  inv_.Apply({.upsert_pods = {Of("sibling", "w", 1), Of("moved", "w", 2)}});  // seen again; the moved pod
  inv_.Apply({.upsert_pods = {Of("other", "w", 1, /*controlled=*/false)}});   // another controller's
  EXPECT_EQ(W().holds.size(), 1u);
  inv_.DeletePod("moved");
  inv_.Apply({.upsert_pods = {Of("replacement", "w", 2)}});
  EXPECT_TRUE(W().holds.empty());
  EXPECT_EQ(W().whole_used, 4);  // sibling, other, replacement
  // Used once, it stays ended: the replacement leaving does not bring it back.
  inv_.DeletePod("replacement");
  inv_.Apply({.upsert_nodes = {WithHolds({Held("moved", key, 2, clock_.WallMs(), {"sibling"})}, "3")}});
  EXPECT_TRUE(W().holds.empty());
}

TEST_F(InventoryHolds, AHoldWhoseReplacementIsAlreadyBoundIsNotCounted) {
  // A replica starting late: the replacement bound before the annotation was read.
  inv_.Apply({.upsert_pods = {Of("replacement", "w", 2)}});
  std::string key = placement::ControllerHoldKey(kController);
  inv_.Apply({.upsert_nodes = {WithHolds({Held("moved", key, 2, clock_.WallMs())}, "2")}});
  EXPECT_TRUE(W().holds.empty());
  EXPECT_EQ(W().whole_used, 2);
}

TEST_F(InventoryHolds, AHoldRunsOutAfterItsSecondsWhateverTheWritersClock) {
  inv_.Apply({.upsert_nodes = {WithHolds({Held("p", "p", 2, clock_.WallMs()), Held("ahead", "ahead", 1, clock_.WallMs() + 900'000)},
                                         "2")}});
  EXPECT_EQ(W().whole_used, 2);  // a hold stamped 15 minutes ahead is past 300 s either way
  clock_.Advance(std::chrono::seconds(299));
  inv_.Expire();
  EXPECT_EQ(W().whole_used, 2);
  clock_.Advance(std::chrono::seconds(2));
  inv_.Expire();  // no node change: the expiry alone rebuilds the node
  EXPECT_EQ(W().whole_used, 0);
  EXPECT_TRUE(inv_.Snapshot()->held_nodes().empty());
}

TEST_F(InventoryHolds, ThisReplicasHoldAndItsAnnotationCountOnce) {
  Allocation about{.pod_uid = "pending", .pod_namespace = "ml", .pod_name = "pending"};
  StatusOr<HoldMade> made = inv_.HoldFor("pending", about, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 3},
                                         std::chrono::seconds(300));
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_EQ(made->hold.at_ms, clock_.WallMs());
  EXPECT_EQ(made->hold.ttl_s, 300);
  inv_.Apply({.upsert_nodes = {WithHolds({made->hold}, "2")}});  // the write seen through the watch
  EXPECT_EQ(W().whole_used, 3);
  // Dropped here (its move failed), its copy in the annotation is not counted either.
  inv_.DropHold("pending");
  EXPECT_EQ(W().whole_used, 0);
}

// A hold kept for a pending pod replaces another replica's hold kept for the same pod (a gang's
// slot moved or renewed by a replica that did not make it): on the same node it is not counted
// against the new one; on another node, the writer is told to withdraw it there.
TEST_F(InventoryHolds, AnotherReplicasHoldForTheSamePodGivesWayToANewOne) {
  inv_.Apply({.upsert_nodes = {WithHolds({Held("p", "p", 6, clock_.WallMs())}, "2")}});
  ASSERT_EQ(W().whole_used, 6);
  clock_.Advance(std::chrono::milliseconds(5));  // this replica's hold is stamped apart from the other's
  Allocation about{.pod_uid = "p", .pod_namespace = "ml", .pod_name = "p"};
  StatusOr<HoldMade> here = inv_.HoldFor("p", about, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 6},
                                         std::chrono::seconds(300));
  ASSERT_TRUE(here.ok()) << here.status().message();
  EXPECT_EQ(W().whole_used, 6);  // once
  EXPECT_EQ(here->replaced_node, "");
  inv_.DropHold("p");
  StatusOr<HoldMade> moved = inv_.HoldFor("p", about, "v", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 6},
                                          std::chrono::seconds(300));
  ASSERT_TRUE(moved.ok()) << moved.status().message();
  EXPECT_EQ(moved->replaced_node, "w");
}

// A pod committed (its bind in flight) gets no hold kept for itself on top: its GPUs would count
// twice, since a hold ends only when its pod is committed or newly seen bound.
TEST_F(InventoryHolds, APodBeingBoundIsRefusedAHoldOfItsOwn) {
  Pod pending{.uid = "pending", .namespace_name = "ml", .name = "pending"};
  ASSERT_TRUE(inv_.Commit(pending, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 1}).ok());
  Allocation about{.pod_uid = "pending", .pod_namespace = "ml", .pod_name = "pending"};
  StatusOr<HoldMade> made = inv_.HoldFor("pending", about, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 1},
                                         std::chrono::seconds(300));
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().message(), "hold on w for ml/pending: the pod is bound or being bound already");
  EXPECT_EQ(W().whole_used, 1);
}

// A hold this replica made counts up to its TTL, not at it, whether or not its annotation is seen.
TEST_F(InventoryHolds, ThisReplicasHoldEndsExactlyAtItsTtl) {
  Allocation about{.pod_uid = "pending", .pod_namespace = "ml", .pod_name = "pending"};
  ASSERT_TRUE(inv_.HoldFor("pending", about, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 3},
                           std::chrono::seconds(300)).ok());
  clock_.Advance(std::chrono::milliseconds(299'999));
  inv_.Expire();
  EXPECT_EQ(W().whole_used, 3);
  clock_.Advance(std::chrono::milliseconds(1));
  inv_.Expire();
  EXPECT_EQ(W().whole_used, 0);
}

// A hold dropped here is remembered as ended for the rest of its TTL: its copy in the node's
// annotation, still fresh, is not counted again meanwhile.
TEST_F(InventoryHolds, ADroppedHoldsAnnotationStaysIgnoredForTheRestOfItsTtl) {
  Allocation about{.pod_uid = "pending", .pod_namespace = "ml", .pod_name = "pending"};
  StatusOr<HoldMade> made = inv_.HoldFor("pending", about, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 3},
                                         std::chrono::seconds(300));
  ASSERT_TRUE(made.ok()) << made.status().message();
  inv_.Apply({.upsert_nodes = {WithHolds({made->hold}, "2")}});
  clock_.Advance(std::chrono::seconds(100));
  inv_.DropHold("pending");
  clock_.Advance(std::chrono::seconds(199));
  inv_.Expire();
  EXPECT_EQ(W().whole_used, 0);  // 299 s after it was written: fresh, but ended here
  clock_.Advance(std::chrono::seconds(2));
  inv_.Expire();
  EXPECT_EQ(W().whole_used, 0);  // past its TTL either way
}

TEST_F(InventoryHolds, AHoldMovedToAnotherNodeNamesTheNodeItLeft) {
  Allocation about{.pod_uid = "pending", .pod_namespace = "ml", .pod_name = "pending"};
  Placement two{.kind = RequestKind::kWholeGpu, .whole_gpus = 2};
  ASSERT_TRUE(inv_.HoldFor("pending", about, "w", two, std::chrono::seconds(300)).ok());
  StatusOr<HoldMade> again = inv_.HoldFor("pending", about, "w", two, std::chrono::seconds(300));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->replaced_node, "");  // replaced in place
  StatusOr<HoldMade> moved = inv_.HoldFor("pending", about, "v", two, std::chrono::seconds(300));
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->replaced_node, "w");  // its copy in w's annotation is to be withdrawn
  EXPECT_EQ(W().whole_used, 0);
  EXPECT_EQ(inv_.Snapshot()->FindNode("v")->whole_used, 2);
}

TEST_F(InventoryHolds, AHoldListsTheControllersPodsAlreadyOnTheNode) {
  inv_.Apply({.upsert_pods = {Of("a", "w", 1), Of("b", "w", 1), Of("c", "v", 1), Of("x", "w", 1, false)}});
  Allocation about{.pod_uid = "c", .pod_namespace = "ml", .pod_name = "c"};
  StatusOr<HoldMade> made = inv_.HoldFor(placement::ControllerHoldKey(kController), about, "w",
                                         Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 1}, std::chrono::seconds(60),
                                         {"c"});
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_THAT(made->hold.present, ::testing::ElementsAre("a", "b"));
}

TEST_F(InventoryHolds, AnotherReplicasHoldBlocksACommitButNotItsOwnPod) {
  inv_.Apply({.upsert_nodes = {WithHolds({Held("pending", "pending", 8, clock_.WallMs())}, "2")}});
  Pod other = WholePod(1);
  other.uid = "other";
  EXPECT_FALSE(inv_.Commit(other, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 1}).ok());
  Pod pending = WholePod(8);
  pending.uid = "pending";
  EXPECT_TRUE(inv_.Commit(pending, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 8}).ok());
  EXPECT_TRUE(W().holds.empty());
  EXPECT_EQ(W().whole_used, 8);
  // The bind failed: the hold counts again. Seen bound, it ends for good.
  inv_.Release("pending");
  EXPECT_EQ(W().holds.size(), 1u);
  EXPECT_EQ(W().whole_used, 8);
  inv_.Apply({.upsert_pods = {Of("pending", "w", 8, /*controlled=*/false)}});
  EXPECT_TRUE(W().holds.empty());
  inv_.DeletePod("pending");
  EXPECT_TRUE(W().holds.empty());
  EXPECT_EQ(W().whole_used, 0);
}

TEST_F(InventoryHolds, AHoldForAPodWhoseBindElsewhereFailedCountsAgainAtOnce) {
  inv_.Apply({.upsert_nodes = {WithHolds({Held("pending", "pending", 2, clock_.WallMs())}, "2")}});
  Pod pending = WholePod(2);
  pending.uid = "pending";
  ASSERT_TRUE(inv_.Commit(pending, "v", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 2}).ok());
  EXPECT_EQ(W().whole_used, 0);
  inv_.Release("pending");  // only v changed: w is rebuilt too
  EXPECT_EQ(W().whole_used, 2);
  EXPECT_EQ(W().holds.size(), 1u);
}

TEST_F(InventoryHolds, APodThatUsedAHoldNeverUsesAnotherOne) {
  std::string key = placement::ControllerHoldKey(kController);
  int64_t t0 = clock_.WallMs();
  inv_.Apply({.upsert_nodes = {WithHolds({Held("m1", key, 2, t0), Held("m2", key, 2, t0 + 200'000)}, "2")}});
  inv_.Apply({.upsert_pods = {Of("r1", "w", 2)}});
  ASSERT_EQ(W().holds.size(), 1u);
  EXPECT_EQ(W().holds[0].pod_name, "m2");
  clock_.Advance(std::chrono::seconds(301));  // m1's hold runs out: r1 is still not m2's replacement
  inv_.Expire();
  ASSERT_EQ(W().holds.size(), 1u);
  EXPECT_EQ(W().holds[0].pod_name, "m2");
  inv_.DeletePod("r1");  // nor is a pod after it m1's again
  inv_.Apply({.upsert_pods = {Of("r2", "w", 2)}});
  EXPECT_TRUE(W().holds.empty());
}

TEST_F(InventoryHolds, APendingPodOfAControllerEndsItsOwnHoldNotItsControllers) {
  Allocation pending{.pod_uid = "p", .pod_namespace = "ml", .pod_name = "p"};
  Allocation moved{.pod_uid = "m", .pod_namespace = "ml", .pod_name = "m"};
  Placement two{.kind = RequestKind::kWholeGpu, .whole_gpus = 2};
  ASSERT_TRUE(inv_.HoldFor(placement::ControllerHoldKey(kController), moved, "w", two, std::chrono::seconds(300)).ok());
  ASSERT_TRUE(inv_.HoldFor("p", pending, "w", two, std::chrono::seconds(300)).ok());
  inv_.Apply({.upsert_pods = {Of("p", "w", 2)}});
  ASSERT_EQ(W().holds.size(), 1u);
  EXPECT_EQ(W().holds[0].pod_uid, placement::ControllerHoldKey(kController));
}

TEST_F(InventoryHolds, EachNewPodOfAControllerUsesOneHoldOldestFirst) {
  std::string key = placement::ControllerHoldKey(kController);
  inv_.Apply({.upsert_nodes = {WithHolds({Held("m1", key, 2, clock_.WallMs()), Held("m2", key, 3, clock_.WallMs() + 1)}, "2")}});
  EXPECT_EQ(W().whole_used, 5);
  inv_.Apply({.upsert_pods = {Of("r1", "w", 2)}});
  ASSERT_EQ(W().holds.size(), 1u);
  EXPECT_EQ(W().holds[0].pod_name, "m2");
  EXPECT_EQ(W().whole_used, 5);  // r1 and m2's hold
  inv_.Apply({.upsert_pods = {Of("r2", "w", 3)}});
  EXPECT_TRUE(W().holds.empty());
}

TEST_F(InventoryHolds, ALaterHoldAboutTheSamePodCountsAgain) {
  inv_.Apply({.upsert_nodes = {WithHolds({Held("p", "p", 2, clock_.WallMs())}, "2")}});
  inv_.Apply({.upsert_pods = {Of("p", "v", 2, /*controlled=*/false)}});
  EXPECT_TRUE(W().holds.empty());
  inv_.DeletePod("p");  // it left; a new plan holds room for a pod of the same UID again
  inv_.Apply({.upsert_nodes = {WithHolds({Held("p", "p", 2, clock_.WallMs() + 5)}, "3")}});
  EXPECT_EQ(W().holds.size(), 1u);
}

}  // namespace inventory_holds_test
}  // namespace gpusched::inventory
