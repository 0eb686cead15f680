// The what-if view: which holds bind which pod, and a node seen without a pod, with another, or by
// one pod, built from the base's allocations and judged like the node itself.
#include "gpusched/placement/what_if.h"

#include <climits>

#include <gtest/gtest.h>

#include "test_nodes.h"

namespace gpusched::placement {
namespace what_if_test {

Allocation Hold(std::string holder, int64_t gpus, int32_t priority) {
  Allocation h = WholeAlloc(std::move(holder), "w", gpus);
  h.origin = AllocationOrigin::kHeld;
  h.priority = priority;
  return h;
}

// w: 8 GPUs; a holds 2 and b 1; 2 are held for pod hi (priority 10) and 1 for the next pod of
// ReplicaSet rs (a defrag move's hold, of the highest priority).
NodeState W() {
  NodeState w = BuildNodeState(WholeNode("w", 8), {WholeAlloc("a", "w", 2), WholeAlloc("b", "w", 1)});
  AddHold(Hold("hi", 2, 10), &w);
  AddHold(Hold(ControllerHoldKey("rs"), 1, INT32_MAX), &w);
  return w;
}

TEST(HoldBinds, AHoldBindsOtherPodsOfItsPriorityOrLowerButNeitherItsHolderNorAHigherPod) {
  Allocation hold = Hold("hi", 2, 10);
  EXPECT_TRUE(HoldBinds(hold, Viewer{.uid = "lo", .priority = 10}));
  EXPECT_TRUE(HoldBinds(hold, Viewer{.uid = "lo", .priority = 0}));
  EXPECT_FALSE(HoldBinds(hold, Viewer{.uid = "hi", .priority = 10}));
  EXPECT_FALSE(HoldBinds(hold, Viewer{.uid = "top", .priority = 11}));
}

TEST(HoldBinds, AHoldKeptForAControllerBindsEveryPodButThatControllersNext) {
  Allocation hold = Hold(ControllerHoldKey("rs"), 1, INT32_MAX);
  EXPECT_FALSE(HoldBinds(hold, Viewer{.uid = "new", .priority = 0, .controller_uid = "rs"}));
  EXPECT_TRUE(HoldBinds(hold, Viewer{.uid = "new", .priority = 1000, .controller_uid = "rs-2"}));
  EXPECT_TRUE(HoldBinds(hold, Viewer{.uid = "new", .priority = 1000}));
}

TEST(WhatIf, AViewWithoutEditsIsItsBaseItself) {
  NodeState w = W();
  WhatIf view(w);
  EXPECT_FALSE(view.changed());
  EXPECT_EQ(&view.state(), &w);
  // Seen by a pod every hold binds, and without a pod the node does not hold: still the base.
  EXPECT_EQ(&view.SeenBy(Viewer{.uid = "lo", .priority = 0}).Without("nobody").state(), &w);
}

TEST(WhatIf, APodSeesTheNodeWithoutItsOwnHoldNorHoldsOfLowerPriority) {
  NodeState w = W();
  EXPECT_EQ(w.whole_used, 6);  // 3 booked + 3 held
  WhatIf by_hi(w);
  const NodeState& seen = by_hi.SeenBy(Viewer{.uid = "hi", .priority = 10}).state();
  EXPECT_EQ(seen.whole_used, 4);
  ASSERT_EQ(seen.holds.size(), 1u);
  EXPECT_EQ(seen.holds[0].pod_uid, ControllerHoldKey("rs"));
  EXPECT_EQ(seen.generation, 0u);
  WhatIf by_next(w);
  const NodeState& next = by_next.SeenBy(Viewer{.uid = "new", .priority = 0, .controller_uid = "rs"}).state();
  EXPECT_EQ(next.whole_used, 5);
  ASSERT_EQ(next.holds.size(), 1u);
  EXPECT_EQ(next.holds[0].pod_uid, "hi");
}

TEST(WhatIf, APodRemovedFreesItsGpusAndAnAllocationAddedTakesSomeKeepingTheHolds) {
  NodeState w = W();
  WhatIf view(w);
  {
    const NodeState& without_a = view.Without("a").state();
    EXPECT_EQ(without_a.whole_used, 4);
    EXPECT_EQ(without_a.FindAllocation("a"), nullptr);
    EXPECT_EQ(without_a.holds.size(), 2u);
    EXPECT_EQ(without_a.generation, 0u);
    EXPECT_EQ(without_a.uses, w.uses);
    EXPECT_EQ(without_a.FindAllocation("b"), w.FindAllocation("b"));  // shared, not copied
  }
  const NodeState& moved_in = view.With(WholeAlloc("c", "w", 2)).state();
  EXPECT_EQ(moved_in.whole_used, 6);
  EXPECT_NE(moved_in.FindAllocation("c"), nullptr);
  EXPECT_EQ(w.whole_used, 6);  // the base is untouched
  EXPECT_EQ(w.FindAllocation("c"), nullptr);
}

// Explain's view of a placed pod: without its own allocation and the holds that do not bind it;
// a hold of lower priority is free for it too, and the pods nominated to the node stay.
TEST(WhatIf, APlacedPodIsJudgedWithoutItselfAndWithoutHoldsOfLowerPriority) {
  NodeState w = W();
  w.nominated.push_back(PodUse{.uid = "q", .name = "q", .priority = 20});
  WhatIf view(w);
  const NodeState& seen = view.SeenBy(Viewer{.uid = "a", .priority = 50}).Without("a").state();
  // b's 1 and the controller hold's 1 (it binds every pod but rs's): a is gone, and hi's hold
  // (priority 10) is free for a pod of priority 50.
  EXPECT_EQ(seen.whole_used, 2);
  ASSERT_EQ(seen.holds.size(), 1u);
  EXPECT_EQ(seen.holds[0].pod_uid, ControllerHoldKey("rs"));
  ASSERT_EQ(seen.nominated.size(), 1u);
  EXPECT_EQ(seen.nominated[0].uid, "q");
}

// A what-if bind (defrag landing the pod it makes room for): the pod's allocation takes the room
// of the holds kept for it, its own and its controller's; the others stay.
TEST(WhatIf, ABookingConsumesTheHoldsKeptForItsPod) {
  NodeState w = W();
  Allocation booked = WholeAlloc("new", "w", 2);
  Viewer next{.uid = "new", .priority = 0, .controller_uid = "rs"};
  WhatIf view(w);
  const NodeState& after = view.With(booked).Consumed(next).state();
  EXPECT_EQ(after.whole_used, 7);  // a, b, the booking, hi's hold; rs's hold is taken
  ASSERT_EQ(after.holds.size(), 1u);
  EXPECT_EQ(after.holds[0].pod_uid, "hi");
  EXPECT_TRUE(HeldFor(w.holds[1], next));
  EXPECT_FALSE(HeldFor(w.holds[0], next));
}

// A gang planned again: the slots of its members are free in the view, every other hold stays.
TEST(WhatIf, ReleasedHoldersLeaveTheirHoldsFreeAndOthersKeepTheirs) {
  NodeState w = W();
  std::set<std::string, std::less<>> members = {"hi", "absent"};
  WhatIf view(w);
  const NodeState& after = view.Releasing(members).state();
  EXPECT_TRUE(view.changed());
  EXPECT_EQ(after.whole_used, 4);  // a, b and rs's hold; hi's 2 GPUs are free
  ASSERT_EQ(after.holds.size(), 1u);
  EXPECT_EQ(after.holds[0].pod_uid, ControllerHoldKey("rs"));
  std::set<std::string, std::less<>> strangers = {"x"};
  EXPECT_FALSE(WhatIf(w).Releasing(strangers).changed());
}

TEST(WhatIf, TakenTheViewIsTheSameStateAndABaseUnchangedIsCopied) {
  NodeState w = W();
  NodeState taken = std::move(WhatIf(w).Without("b")).Take();
  EXPECT_EQ(taken.whole_used, 5);
  NodeState copy = std::move(WhatIf(w).Without("nobody")).Take();
  EXPECT_EQ(copy.whole_used, w.whole_used);
  EXPECT_EQ(copy.holds.size(), w.holds.size());
}

TEST(WhatIf, DevicesHeldInTheViewLeaveTheNodesOwnStateAlone) {
  NodeState w = W();
  dra::AllocatedDevices none;
  WhatIf view(w);
  EXPECT_EQ(view.devices_held(), nullptr);  // the cluster's
  view.HoldingDevices(none);
  EXPECT_EQ(view.devices_held(), &none);
  EXPECT_FALSE(view.changed());
  EXPECT_EQ(&view.state(), &w);
}

}  // namespace what_if_test
}  // namespace gpusched::placement
