// Victim choice on hand-built nodes: only lower-priority pods, only the GPUs that matter, each
// victim needed, PodDisruptionBudgets honoured first, never on a node evictions cannot help.
#include "gpusched/placement/victims.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <random>
#include <set>

#include "test_nodes.h"

namespace gpusched::placement {
namespace victims_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Allocation WithPriority(Allocation a, int32_t priority) {
  a.priority = priority;
  return a;
}

std::vector<std::string> Uids(const VictimChoice& c) {
  std::vector<std::string> out;
  for (const Allocation* a : c.victims) out.push_back(a->pod_uid);
  return out;
}

VictimChoice Choose(const Pod& pod, const NodeState& node, VictimRules rules) {
  return VictimFinder(PlacementOptions{}).Choose(AnalyzePod(pod), node, rules);
}

TEST(Victims, WholeGpusFreeExactlyWhatThePodNeedsFromLowerPrioritiesOnly) {
  NodeState full = BuildNodeState(WholeNode("w", 8), {WithPriority(WholeAlloc("a", "w", 4), 0), WithPriority(WholeAlloc("b", "w", 2), 0),
                                                      WithPriority(WholeAlloc("c", "w", 2), 5)});
  // Everything below 10 may go: c (the most important) and a are given back, b frees the two.
  VictimChoice c = Choose(WholePod(2), full, {.priority = 10});
  EXPECT_TRUE(c.helps);
  EXPECT_THAT(Uids(c), ElementsAre("b"));
  // Needing 6: c is given back, then neither a nor b can be.
  EXPECT_THAT(Uids(Choose(WholePod(6), full, {.priority = 10})), ElementsAre("a", "b"));
  // Priority 5: c is no candidate (equal), and a pod of priority 0 cannot take anything.
  EXPECT_THAT(Uids(Choose(WholePod(8), full, {.priority = 5})), IsEmpty());
  EXPECT_FALSE(Choose(WholePod(8), full, {.priority = 5}).helps);
  VictimChoice none = Choose(WholePod(1), full, {.priority = 0});
  EXPECT_FALSE(none.helps);
  EXPECT_EQ(none.reason, "no pod of lower priority holds GPUs here");
}

TEST(Victims, AnMgpuShareOnTheWrongGpuIsNeverChosen) {
  // GPU 0 holds x (60%) and y (30%), GPU 1 holds z (50%): 60% free in total, but 10% and 50% per
  // GPU. A pod of 60% needs GPU 1 emptied: only z goes, though x and y are just as cheap.
  NodeState node = BuildNodeState(SharedNode("s", 2, 16384), {SharedAlloc("x", "s", {0}, 600, 1024), SharedAlloc("y", "s", {0}, 300, 1024),
                                                              SharedAlloc("z", "s", {1}, 500, 1024)});
  VictimChoice c = Choose(MgpuPod({MgpuC("c", 60, 2048)}), node, {.priority = 1});
  EXPECT_THAT(Uids(c), ElementsAre("z"));
  // With z more important, the cheapest set on GPU 0 is x alone (y is given back).
  NodeState ranked = BuildNodeState(SharedNode("s", 2, 16384), {SharedAlloc("x", "s", {0}, 600, 1024), SharedAlloc("y", "s", {0}, 300, 1024),
                                                                WithPriority(SharedAlloc("z", "s", {1}, 500, 1024), 3)});
  EXPECT_THAT(Uids(Choose(MgpuPod({MgpuC("c", 60, 2048)}), ranked, {.priority = 10})), ElementsAre("x"));
}

TEST(Victims, APodSpreadOverSeveralGpusIsOneVictim) {
  NodeState node = BuildNodeState(SharedNode("s", 2, 16384), {SharedAlloc("wide", "s", {0, 1}, 800, 8192)});
  VictimChoice c = Choose(MgpuPod({MgpuC("c", 50, 2048)}), node, {.priority = 1});
  EXPECT_THAT(Uids(c), ElementsAre("wide"));
}

TEST(Victims, PodsWhoseEvictionViolatesABudgetAreGivenBackFirst) {
  NodeState full = BuildNodeState(WholeNode("w", 4), {WholeAlloc("a", "w", 2), WholeAlloc("b", "w", 2)});
  // Either frees enough. By UID, a is given back and b goes; with a budget protecting b, b is
  // given back first and a goes.
  EXPECT_THAT(Uids(Choose(WholePod(2), full, {.priority = 1})), ElementsAre("b"));
  VictimChoice c = Choose(WholePod(2), full, {.priority = 1, .violates_pdb = [](const Allocation& a) { return a.pod_uid == "b"; }});
  EXPECT_THAT(Uids(c), ElementsAre("a"));
  EXPECT_EQ(c.pdb_violations, 0);
  // Both needed: the one that violates its budget is counted.
  VictimChoice both = Choose(WholePod(4), full, {.priority = 1, .violates_pdb = [](const Allocation& a) { return a.pod_uid == "b"; }});
  EXPECT_THAT(Uids(both), ElementsAre("a", "b"));
  EXPECT_EQ(both.pdb_violations, 1);
}

TEST(Victims, TerminatingPodsAndPodsTheCallerRulesOutAreNeverVictims) {
  Allocation leaving = WholeAlloc("leaving", "w", 2);
  leaving.terminating = true;
  Allocation unknown = WholeAlloc("unknown", "w", 2);
  unknown.origin = AllocationOrigin::kBooked;  // another replica's booking: kube-scheduler may not have it
  NodeState node = BuildNodeState(WholeNode("w", 4), {leaving, unknown});
  VictimChoice c = Choose(WholePod(2), node, {.priority = 1, .known_only = true});
  EXPECT_FALSE(c.helps);
  EXPECT_THAT(Uids(Choose(WholePod(2), node, {.priority = 1})), ElementsAre("unknown"));
}

// GPUs held for a nominated pod (nomination.h) are never freed by evictions, but bind only pods
// of equal or lower priority, and never the holder itself.
TEST(Victims, HoldsCountOnlyAgainstPodsOfEqualOrLowerPriority) {
  NodeState node = BuildNodeState(WholeNode("w", 4), {WithPriority(WholeAlloc("a", "w", 2), 0)});
  Allocation hold = WithPriority(WholeAlloc("held", "w", 2), 5);
  hold.origin = AllocationOrigin::kHeld;
  AddHold(hold, &node);
  // Priority 5: the hold counts; evicting a frees 2 of the 2 needed, not the 4.
  VictimRules at5{.priority = 5, .viewer = {.priority = 5}};
  EXPECT_FALSE(Choose(WholePod(4), node, at5).helps);
  EXPECT_THAT(Uids(Choose(WholePod(2), node, at5)), ElementsAre("a"));
  // Priority 6, or the holder itself: the hold does not count.
  EXPECT_THAT(Uids(Choose(WholePod(4), node, {.priority = 6, .viewer = {.priority = 6}})), ElementsAre("a"));
  EXPECT_THAT(Uids(Choose(WholePod(4), node, {.priority = 5, .viewer = {.uid = "held", .priority = 5}})), ElementsAre("a"));
}

// Defrag judges victims for a pending pod of its own priority while treating every pod as a
// candidate: the holds follow the pod (the viewer), the candidates the rules' priority.
TEST(Victims, HoldsFollowTheViewerWhileCandidatesFollowTheRulesPriority) {
  NodeState node = BuildNodeState(WholeNode("w", 4), {WithPriority(WholeAlloc("a", "w", 2), 9)});
  Allocation hold = WithPriority(WholeAlloc("held", "w", 2), 5);
  hold.origin = AllocationOrigin::kHeld;
  AddHold(hold, &node);
  EXPECT_FALSE(Choose(WholePod(4), node, {.priority = INT32_MAX, .viewer = {.uid = "new", .priority = 0}}).helps);
  EXPECT_THAT(Uids(Choose(WholePod(4), node, {.priority = INT32_MAX, .viewer = {.uid = "new", .priority = 6}})), ElementsAre("a"));
}

TEST(Victims, VictimsAreListedByDecreasingPriority) {
  NodeState full = BuildNodeState(WholeNode("w", 4), {WithPriority(WholeAlloc("low", "w", 2), 1), WithPriority(WholeAlloc("mid", "w", 2), 7)});
  EXPECT_THAT(Uids(Choose(WholePod(4), full, {.priority = 9})), ElementsAre("mid", "low"));
}

TEST(Victims, ANodeSwitchingModeIsNeverHelpedByEvictions) {
  // Labelled mgpu, but a whole-GPU pod of the old mode still runs: the node takes no GPU pods.
  Allocation old = WholeAlloc("old", "s", 1);
  NodeState switching = BuildNodeState(SharedNode("s", 2, 16384), {old});
  ASSERT_EQ(switching.condition, NodeCondition::kSwitching);
  VictimChoice c = Choose(MgpuPod({MgpuC("c", 50, 1024)}), switching, {.priority = 100});
  EXPECT_FALSE(c.helps);
  EXPECT_THAT(c.reason, HasSubstr("node is switching"));
}

// On random mGPU and whole-GPU nodes, checked against nodes built from scratch: the pod fits once
// the victims are gone, giving any one victim back leaves no room, no victim has the preemptor's
// priority or more, and the victims are those of the plain reprieve (each candidate, in order,
// given back if the planner still finds room), whatever shortcut the choice takes.
TEST(Victims, OnRandomNodesTheVictimsMakeRoomAndEachIsNeeded) {
  std::mt19937 rng(7);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  Planner planner(PlacementOptions{});
  VictimFinder finder(PlacementOptions{});  // one for every round: its buffers carry over
  int helped = 0;
  for (int round = 0; round < 3000; ++round) {
    bool mgpu = round % 2 == 1;
    Node node = mgpu ? SharedNode("n", 4, 16384) : WholeNode("n", 8);
    std::vector<Allocation> pods;
    int64_t whole_left = 8;
    for (int i = 0; i < uniform(1, 10); ++i) {
      Allocation a;
      if (mgpu) {
        std::vector<int> gpus = {uniform(0, 3)};
        if (uniform(0, 4) == 0 && gpus[0] < 3) gpus.push_back(gpus[0] + 1);
        a = SharedAlloc("p" + std::to_string(i), "n", gpus, 100 * uniform(1, 4), 1024 * uniform(1, 4));
      } else {
        int64_t n = std::min<int64_t>(whole_left, uniform(1, 3));
        if (n == 0) break;
        whole_left -= n;
        a = WholeAlloc("p" + std::to_string(i), "n", n);
      }
      a.priority = uniform(0, 3);
      pods.push_back(a);
    }
    NodeState state = BuildNodeState(node, pods);
    if (!state.ready()) continue;  // a random mGPU node may be over-full: not a preemption case
    Pod pending = WholePod(uniform(1, 8));
    if (mgpu) {
      pending = uniform(0, 3) > 0 ? MgpuPod({MgpuC("c", 10 * uniform(3, 9), 1024 * uniform(1, 8))})
                                  : MgpuPod({MgpuC("c", 10 * uniform(2, 6), 1024 * uniform(1, 4)), MgpuC("d", 10 * uniform(2, 6), 1024)});
    }
    PodRequest request = AnalyzePod(pending);
    int32_t priority = uniform(1, 4);
    VictimChoice c = finder.Choose(request, state, {.priority = priority});
    if (!c.helps) continue;
    ++helped;
    std::set<std::string> gone;
    for (const Allocation* v : c.victims) {
      EXPECT_LT(v->priority, priority);
      gone.insert(v->pod_uid);
    }
    auto fits_without = [&](const std::set<std::string>& evicted) {
      std::vector<Allocation> left;
      for (const Allocation& a : pods) {
        if (!evicted.contains(a.pod_uid)) left.push_back(a);
      }
      return planner.Evaluate(request, BuildNodeState(node, left), false).fits();
    };
    EXPECT_TRUE(fits_without(gone)) << "round " << round;
    std::vector<const Allocation*> order;
    for (const Allocation& a : pods) {
      if (a.priority < priority) order.push_back(&a);
    }
    std::sort(order.begin(), order.end(), [](const Allocation* a, const Allocation* b) {
      return a->priority != b->priority ? a->priority > b->priority : a->pod_uid < b->pod_uid;
    });
    std::set<std::string> plain;
    for (const Allocation* a : order) plain.insert(a->pod_uid);
    for (const Allocation* a : order) {
      plain.erase(a->pod_uid);
      if (!fits_without(plain)) plain.insert(a->pod_uid);
    }
    EXPECT_EQ(gone, plain) << "round " << round;
    for (const std::string& uid : gone) {
      std::set<std::string> fewer = gone;
      fewer.erase(uid);
      EXPECT_FALSE(fits_without(fewer)) << "round " << round << ": " << uid << " was not needed";
    }
  }
  EXPECT_GT(helped, 100);
}

}  // namespace victims_test
}  // namespace gpusched::placement
