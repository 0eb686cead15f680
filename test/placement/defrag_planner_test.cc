// The defragmentation planner on hand-built clusters: the fewest moves for a pod in each device-
// plugin mode, budgets that allow no disruption, nodes that cannot take pods, plans that never
// over-book (checked by replaying random plans), and consolidation to a fragmentation target.
#include "gpusched/placement/defrag_planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <climits>
#include <map>
#include <random>

#include "gpusched/placement/planner.h"
#include "gpusched/placement/what_if.h"
#include "defrag_cluster.h"
#include "test_nodes.h"

namespace gpusched::placement {
namespace defrag_planner_test {

using Cluster = DefragCluster;

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> Moves(const DefragPlan& p) {
  std::vector<std::string> out;
  for (const DefragMove& m : p.moves) out.push_back(m.pod + " " + m.from + "->" + m.to);
  return out;
}

DefragPlan Room(const Pod& pod, Cluster& c, int max_moves = 8) {
  return MakeRoom(AnalyzePod(pod), pod, c.Input(), DefragOptions{.max_moves = max_moves});
}

// a: a4 and a2 of 8 GPUs; b: b6 of 8. A 4-GPU pod fits only once a2 moves to b.
Cluster Tight() {
  Cluster c;
  c.Add(WholeNode("a", 8), {WholeAlloc("a4", "a", 4), WholeAlloc("a2", "a", 2)});
  c.Add(WholeNode("b", 8), {WholeAlloc("b6", "b", 6)});
  return c;
}

TEST(DefragPlanner, APodThatFitsAlreadyNeedsNoMove) {
  Cluster c;
  c.Add(WholeNode("a", 8), {WholeAlloc("x", "a", 4)});
  DefragPlan p = Room(WholePod(4), c);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.node, "a");
  EXPECT_TRUE(p.moves.empty());
}

Allocation Held(std::string holder, std::string node, int64_t gpus, int32_t priority) {
  Allocation h = WholeAlloc(std::move(holder), std::move(node), gpus);
  h.origin = AllocationOrigin::kHeld;
  h.priority = priority;
  return h;
}

// The pending pod sees each node as filter does (what_if.h). a: 4 GPUs, x holds 2 and 2 are held
// for the pending pod after its preemption: it fits there now. Before, defrag counted its own
// hold against it and found no room at all.
TEST(DefragPlanner, APodsOwnHoldIsRoomForIt) {
  Cluster c;
  c.Add(WholeNode("a", 4), {WholeAlloc("x", "a", 2)});
  AddHold(Held("new", "a", 2, 10), &c.nodes[0]);
  Pod pod = WholePod(2);
  pod.priority = 10;
  DefragPlan p = Room(pod, c);
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_EQ(p.node, "a");
  EXPECT_TRUE(p.moves.empty());
}

// h6: 6 GPUs; l1 and l2 hold 2 each, and 2 are held for the next pod of ReplicaSet rs-1 (a
// defrag move's hold); b has 3 free. rs-1's next pod asks 4: the hold is room for it, so one move
// does. Before, defrag counted that hold against it, needed both pods moved, and b takes one.
TEST(DefragPlanner, AHoldKeptForThePodsControllerIsRoomForIt) {
  Cluster c;
  c.Add(WholeNode("h6", 6), {WholeAlloc("l1", "h6", 2), WholeAlloc("l2", "h6", 2)});
  AddHold(Held(ControllerHoldKey("rs-1"), "h6", 2, INT32_MAX), &c.nodes[0]);
  c.Add(WholeNode("b", 8), {WholeAlloc("b5", "b", 5)});
  Pod next = WholePod(4);
  next.controller_uid = "rs-1";
  DefragPlan p = Room(next, c);
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_EQ(p.node, "h6");
  EXPECT_THAT(Moves(p), ElementsAre("ns/l2 h6->b"));
}

// kube-scheduler's NodePorts refuses a pod a host port of which a pod on the node uses. a: a4
// (port 8080) and a2; b: b6. Moving a2 to b makes room on a, but a4 stays there with the port the
// pending pod asks: before, the plan evicted a2 for a pod kube-scheduler then refused on a.
TEST(DefragPlanner, ThePendingPodNeverLandsBesideAPodUsingItsHostPort) {
  Cluster c = Tight();
  c.UsesPort(0, "a4", 8080);
  Pod pod = WholePod(4);
  pod.constraints.host_ports = {HostPort{.port = 8080, .protocol = "TCP", .host_ip = "10.0.0.1"}};
  DefragPlan p = Room(pod, c);
  EXPECT_FALSE(p.fits) << Moves(p)[0];
  EXPECT_TRUE(p.moves.empty());
  EXPECT_EQ(p.not_judged, "");  // host ports are judged here
  // Another protocol is no conflict: the same plan as without ports.
  pod.constraints.host_ports[0].protocol = "UDP";
  p = Room(pod, c);
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_THAT(Moves(p), ElementsAre("ns/a2 a->b"));
}

// A pod with a host port moves now that landings judge ports: a2 (port 9000) lands on c, not on
// b (first by name, as full as c) where b6 uses 9000. Before, a pod with host ports never moved.
TEST(DefragPlanner, AMovedPodWithAHostPortLandsWhereThePortIsFree) {
  Cluster c = Tight();
  c.Add(WholeNode("c", 8), {WholeAlloc("c6", "c", 6)});
  c.UsesPort(0, "a2", 9000);
  c.UsesPort(1, "b6", 9000);
  DefragPlan p = Room(WholePod(4), c);
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_EQ(p.node, "a");
  EXPECT_THAT(Moves(p), ElementsAre("ns/a2 a->c"));
}

// A pod nominated to a node with equal or higher priority counts there (kube-scheduler runs its
// filters with nominated pods added): its host port refuses the pending pod as a bound pod's does.
TEST(DefragPlanner, APodNominatedThereWithItsHostPortRefusesThePendingPod) {
  Cluster c = Tight();
  PodLabels labels{"ns", {}, "", ""};
  labels.constraints.host_ports = {HostPort{.port = 8080, .protocol = "TCP"}};
  c.nodes[0].nominated.push_back(PodUse{.uid = "nom", .name = "nom", .priority = 5,
                                        .labels = std::make_shared<PodLabels>(labels)});
  Pod pod = WholePod(4);
  pod.constraints.host_ports = {HostPort{.port = 8080, .protocol = "TCP"}};
  pod.priority = 5;
  EXPECT_FALSE(Room(pod, c).fits);
  pod.priority = 6;  // a nominated pod of lower priority does not count
  DefragPlan p = Room(pod, c);
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_THAT(Moves(p), ElementsAre("ns/a2 a->b"));
}

TEST(DefragPlanner, WholeGpusMoveTheOneSmallPodThatOpensANode) {
  // a: 4+2 used, b: 2+2+2 used; 2 free on each. A 4-GPU pod fits after one move: a's 2-GPU pod to b.
  Cluster c;
  c.Add(WholeNode("a", 8), {WholeAlloc("a4", "a", 4), WholeAlloc("a2", "a", 2)});
  c.Add(WholeNode("b", 8), {WholeAlloc("b1", "b", 2), WholeAlloc("b2", "b", 2), WholeAlloc("b3", "b", 2)});
  DefragPlan p = Room(WholePod(4), c);
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_EQ(p.node, "a");
  EXPECT_EQ(p.placement.whole_gpus, 4);
  EXPECT_THAT(Moves(p), ElementsAre("ns/a2 a->b"));
  EXPECT_EQ(p.moves[0].placement.whole_gpus, 2);
}

// Tight() with `a2` as a2's labels.
Cluster WithA2(PodLabels a2) {
  Cluster c = Tight();
  auto uses = std::make_shared<NodeUses>(*c.nodes[0].uses);
  uses->Put(PodUse{.uid = "a2", .name = "a2", .labels = std::make_shared<PodLabels>(std::move(a2))});
  c.nodes[0].uses = uses;
  return c;
}

// Before, such a pod was planned, and applying the plan evicted the earlier moves before refusing it.
TEST(DefragPlanner, APodNoControllerRecreatesIsNeverMoved) {
  Cluster c = WithA2(PodLabels{"ns", {{"app", "a2"}}});
  DefragPlan p = Room(WholePod(4), c);
  EXPECT_FALSE(p.fits);
  EXPECT_THAT(p.reason, HasSubstr("not moved: 1 pod (no controller would recreate it)"));
}

TEST(DefragPlanner, APodWithPodRelationsGpuschedCannotJudgeIsNeverMoved) {
  PodLabels a2{"ns", {{"app", "a2"}}, "rs-a2", "ReplicaSet"};
  a2.constraints.anti_affinity.push_back(PodTerm{.selector = LabelSelector{.match_labels = {{"app", "a2"}}}, .topology_key = "zone"});
  Cluster c = WithA2(a2);
  DefragPlan p = Room(WholePod(4), c);
  EXPECT_FALSE(p.fits);
  EXPECT_THAT(p.reason, HasSubstr("gpusched cannot judge its required pod anti-affinity"));
  // Nor volumes a volume filter reads (a zonal PV would keep its replacement out); host ports are
  // judged where it lands (AMovedPodWithAHostPortLandsWhereThePortIsFree).
  PodLabels ported{"ns", {{"app", "a2"}}, "rs-a2", "ReplicaSet"};
  ported.constraints.host_ports.push_back(HostPort{.port = 8080, .protocol = "TCP"});
  ported.constraints.filter_volumes = true;
  Cluster d = WithA2(ported);
  EXPECT_THAT(Room(WholePod(4), d).reason, HasSubstr("not moved: 1 pod (gpusched cannot judge its volumes)"));
}

// A running gang is useless without any of its members: defrag never evicts one of them.
TEST(DefragPlanner, AMemberOfAPodGroupIsNeverMoved) {
  PodLabels member{"ns", {{"app", "a2"}}, "job-a2", "Job"};
  member.group = PodGroupRef{.api = GroupApi::kPodGroup, .name = "train"};
  Cluster c = WithA2(member);
  DefragPlan p = Room(WholePod(4), c);
  EXPECT_FALSE(p.fits);
  EXPECT_THAT(p.reason, HasSubstr("not moved: 1 pod (a member of PodGroup train: a group moves whole or not at all)"));
}

// Budgets are counted as the Eviction API counts them: an empty selector covers every pod of its
// namespace (kube-scheduler's preemption ignores it), a nil one none; a pod two budgets cover is
// refused by the Eviction API (500) and never moved.
TEST(DefragPlanner, BudgetsCoverPodsAsTheEvictionApiCountsThem) {
  Cluster c = WithA2(PodLabels{"ns", {{"app", "a2"}}, "rs-a2", "ReplicaSet"});
  c.budgets->push_back(DisruptionBudget{.namespace_name = "ns", .name = "all", .selector_set = true, .disruptions_allowed = 0});
  EXPECT_FALSE(Room(WholePod(4), c).fits);  // the empty selector covers a2: no disruption allowed
  c.budgets->back().disruptions_allowed = 5;
  EXPECT_TRUE(Room(WholePod(4), c).fits);
  c.Protect("a2", 5);
  DefragPlan p = Room(WholePod(4), c);
  EXPECT_FALSE(p.fits);
  EXPECT_THAT(p.reason, HasSubstr("2 PodDisruptionBudgets cover it"));
  c.budgets->front().selector_set = false;  // nil: covers nothing
  EXPECT_TRUE(Room(WholePod(4), c).fits);
}

TEST(DefragPlanner, ATerminatingPodIsNeverMovedItLeavesOnItsOwn) {
  // As above, but a's 2-GPU pod is terminating (its GPUs stay booked until it is gone): the plan
  // moves one of b's pods to a instead, and the pod lands on b.
  Cluster c;
  Allocation leaving = WholeAlloc("a2", "a", 2);
  leaving.terminating = true;
  c.Add(WholeNode("a", 8), {WholeAlloc("a4", "a", 4), leaving});
  c.Add(WholeNode("b", 8), {WholeAlloc("b1", "b", 2), WholeAlloc("b2", "b", 2), WholeAlloc("b3", "b", 2)});
  DefragPlan p = Room(WholePod(4), c);
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_EQ(p.node, "b");
  ASSERT_EQ(p.moves.size(), 1u);
  EXPECT_EQ(p.moves[0].from, "b");
  EXPECT_EQ(p.moves[0].to, "a");  // were a2 movable, "a2 a->b" would win (node a comes first)
}

TEST(DefragPlanner, ADaemonSetPodIsNeverMovedItsReplacementWouldComeBack) {
  // As in WholeGpusMoveTheOneSmallPodThatOpensANode, but a2 belongs to a DaemonSet: one of b's
  // pods moves to a instead, and the pod lands on b.
  Cluster c;
  c.Add(WholeNode("a", 8), {WholeAlloc("a4", "a", 4), WholeAlloc("a2", "a", 2)});
  c.Add(WholeNode("b", 8), {WholeAlloc("b1", "b", 2), WholeAlloc("b2", "b", 2), WholeAlloc("b3", "b", 2)});
  auto uses = std::make_shared<NodeUses>(*c.nodes[0].uses);
  uses->Put(PodUse{.uid = "a2", .name = "a2",
                   .labels = std::make_shared<PodLabels>(PodLabels{"ns", {{"app", "a2"}}, "ds-uid", "DaemonSet"})});
  c.nodes[0].uses = uses;
  DefragPlan p = Room(WholePod(4), c);
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_EQ(p.node, "b");
  for (const DefragMove& m : p.moves) EXPECT_NE(m.pod, "ns/a2");
}

TEST(DefragPlanner, AnMgpuShareMovesOffTheGpuThePodNeeds) {
  // m1: GPU 0 and GPU 1 at 50%; m2: 40% and 50%. A 70% pod needs a GPU with 70% free: one share
  // moves. m1 comes first (same cost, then name); its share lands on the fullest node that takes
  // it, m1 itself once the pod is booked there: GPU 1, now full.
  Cluster c;
  c.Add(SharedNode("m1", 2, 16384), {SharedAlloc("p1", "m1", {0}, 500, 4096), SharedAlloc("p2", "m1", {1}, 500, 4096)});
  c.Add(SharedNode("m2", 2, 16384), {SharedAlloc("q1", "m2", {0}, 400, 4096), SharedAlloc("q2", "m2", {1}, 500, 4096)});
  DefragPlan p = Room(MgpuPod({MgpuC("c", 70, 4096)}), c);
  ASSERT_TRUE(p.fits) << p.reason;
  ASSERT_EQ(p.moves.size(), 1u);
  EXPECT_EQ(p.node, "m1");
  EXPECT_EQ(p.moves[0].from, "m1");
  EXPECT_EQ(p.moves[0].to, "m1");
  ASSERT_EQ(p.moves[0].placement.containers.size(), 1u);
  EXPECT_EQ(p.moves[0].placement.containers[0].milli_per_gpu, 500);
  ASSERT_EQ(p.placement.containers.size(), 1u);
  int pod_gpu = p.placement.containers[0].gpu_indices.at(0);
  EXPECT_THAT(p.moves[0].placement.containers[0].gpu_indices, ElementsAre(1 - pod_gpu));
}

TEST(DefragPlanner, APodWhoseBudgetAllowsNoDisruptionNeverMoves) {
  Cluster c;
  c.Add(WholeNode("a", 8), {WholeAlloc("a4", "a", 4), WholeAlloc("a2", "a", 2)});
  c.Add(WholeNode("b", 8), {WholeAlloc("b1", "b", 2), WholeAlloc("b2", "b", 2), WholeAlloc("b3", "b", 2)});
  c.Protect("a2");
  DefragPlan p = Room(WholePod(4), c);
  ASSERT_TRUE(p.fits) << p.reason;
  EXPECT_EQ(p.node, "b");
  ASSERT_EQ(p.moves.size(), 1u);
  EXPECT_EQ(p.moves[0].from, "b");
  EXPECT_EQ(p.moves[0].to, "a");
  // A budget with room is used, and said so, but only when nothing else is as cheap.
  Cluster d;
  d.Add(WholeNode("a", 8), {WholeAlloc("a4", "a", 4), WholeAlloc("a2", "a", 2)});
  d.Add(WholeNode("b", 8), {WholeAlloc("b1", "b", 6)});
  d.Protect("a2", 1);
  DefragPlan q = Room(WholePod(4), d);
  ASSERT_TRUE(q.fits) << q.reason;
  EXPECT_THAT(Moves(q), ElementsAre("ns/a2 a->b"));
  EXPECT_TRUE(q.moves[0].uses_budget);
  // Every pod protected: no plan, and why.
  for (const char* app : {"a4", "b1"}) d.Protect(app);
  d.budgets->at(0).disruptions_allowed = 0;
  DefragPlan none = Room(WholePod(4), d);
  EXPECT_FALSE(none.fits);
  EXPECT_TRUE(none.moves.empty());
  EXPECT_THAT(none.reason, HasSubstr("no node makes room"));
}

TEST(DefragPlanner, ASwitchingNodeIsNeitherEmptiedNorFilled) {
  // s is labelled mgpu but runs a whole-GPU pod: switching. The only other room is on it.
  Cluster c;
  c.Add(WholeNode("a", 4), {WholeAlloc("a2", "a", 2), WholeAlloc("a1", "a", 1)});
  c.Add(WholeNode("s", 8, "mgpu"), {WholeAlloc("s1", "s", 1)});
  DefragPlan p = Room(WholePod(2), c);
  EXPECT_FALSE(p.fits);
  EXPECT_THAT(p.reason, HasSubstr("find no other node"));
}

TEST(DefragPlanner, TheMaximumNumberOfMovesIsHonoured) {
  Cluster c;
  c.Add(WholeNode("a", 4), {WholeAlloc("a1", "a", 1), WholeAlloc("a2", "a", 1), WholeAlloc("a3", "a", 1)});
  c.Add(WholeNode("b", 4), {WholeAlloc("b1", "b", 1)});
  // A 4-GPU pod: three moves empty a (to b, which has 3 free), or one empties b.
  DefragPlan one = Room(WholePod(4), c, 1);
  ASSERT_TRUE(one.fits) << one.reason;
  EXPECT_THAT(Moves(one), ElementsAre("ns/b1 b->a"));
  Cluster d;
  d.Add(WholeNode("a", 4), {WholeAlloc("a1", "a", 1), WholeAlloc("a2", "a", 1)});
  d.Add(WholeNode("b", 4), {WholeAlloc("b1", "b", 1), WholeAlloc("b2", "b", 1)});
  EXPECT_FALSE(Room(WholePod(4), d, 1).fits);
  EXPECT_EQ(Room(WholePod(4), d, 2).moves.size(), 2u);
}

// Replays `plan` on the cluster: each move off its node and onto its target, then the pod. Every
// state must be one the planner accepts: no GPU holds more than it has.
void ExpectNoOverbooking(const Cluster& c, const DefragPlan& plan, const PodRequest& request) {
  std::map<std::string, std::vector<Allocation>> by_node;
  std::map<std::string, Node> node_of;
  for (const NodeState& n : c.nodes) {
    node_of[n.node.name] = n.node;
    by_node[n.node.name] = std::vector<Allocation>(n.allocations.begin(), n.allocations.end());
  }
  for (const DefragMove& m : plan.moves) {
    auto& from = by_node[m.from];
    auto it = std::find_if(from.begin(), from.end(), [&](const Allocation& a) { return a.pod_uid == m.uid; });
    ASSERT_NE(it, from.end()) << m.uid;
    Allocation moved = *it;
    from.erase(it);
    moved.node_name = m.to;
    moved.placement = m.placement;
    by_node[m.to].push_back(moved);
  }
  Planner planner{PlacementOptions{}};
  EXPECT_TRUE(planner.Fits(request, BuildNodeState(node_of[plan.node], by_node[plan.node]))) << plan.node;
  for (auto& [name, allocations] : by_node) {
    NodeState s = BuildNodeState(node_of[name], allocations);
    EXPECT_LE(s.whole_used, s.whole_total) << name;
    for (const GpuSlot& g : s.gpus) {
      EXPECT_LE(g.used_milli, kMilliPerGpu) << name << " GPU " << g.index;
      EXPECT_LE(g.used_mib, g.memory_mib) << name << " GPU " << g.index;
    }
  }
}

TEST(DefragPlanner, RandomPlansNeverOverbookAnyGpu) {
  std::mt19937 rng(7);
  int plans = 0;
  for (int round = 0; round < 60; ++round) {
    Cluster c;
    for (int n = 0; n < 6; ++n) {
      std::string name = "m" + std::to_string(n);
      std::vector<Allocation> pods;
      for (int g = 0; g < 4; ++g) {
        int64_t used = 0;
        for (int k = 0; k < 3; ++k) {
          int64_t milli = 100 * (1 + static_cast<int64_t>(rng() % 5));
          if (used + milli > kMilliPerGpu || rng() % 3 == 0) continue;
          used += milli;
          pods.push_back(SharedAlloc(name + "-" + std::to_string(g) + "-" + std::to_string(k), name, {g}, milli, 2048));
        }
      }
      c.Add(SharedNode(name, 4, 16384), pods);
    }
    Pod pod = MgpuPod({MgpuC("c", 100 * (1 + static_cast<int64_t>(rng() % 2)), 4096)});
    pod.containers[0].limits.mgpu_core_percent = 100;  // a whole card: some GPU must be emptied
    pod.containers[0].limits.mgpu_memory_mib.reset();
    DefragPlan p = Room(pod, c);
    if (!p.fits) continue;
    ++plans;
    ExpectNoOverbooking(c, p, AnalyzePod(pod));
  }
  EXPECT_GT(plans, 20);
}

TEST(DefragPlanner, ConsolidationMovesHalfUsedGpusTogetherUntilTheTargetHolds) {
  // Four nodes of 2 GPUs, each with one 50% share on GPU 0: every half-free GPU is a fragment for
  // a workload of whole-GPU pods. Moving shares onto each other's GPU frees whole GPUs.
  Cluster c;
  for (int n = 0; n < 4; ++n) {
    std::string name = "m" + std::to_string(n);
    c.Add(SharedNode(name, 2, 16384), {SharedAlloc("p" + std::to_string(n), name, {0}, 500, 4096)});
  }
  std::vector<scoring::WorkloadSample> samples(10, scoring::WorkloadSample{scoring::PodShape{.gpus = 1, .milli = 1000}, ""});
  c.workload = scoring::BuildTargetWorkload(samples);
  DefragPlan p = Consolidate(0, c.Input(), DefragOptions{});
  EXPECT_NEAR(p.frag_before_pct, 25.0, 1e-9);  // 4 x 500 of 8 x 1000
  EXPECT_TRUE(p.fits) << p.reason;
  EXPECT_EQ(p.moves.size(), 2u);
  EXPECT_NEAR(p.frag_after_pct, 0.0, 1e-9);
  // A target already met needs nothing; a budget that allows nothing stops it.
  EXPECT_TRUE(Consolidate(30, c.Input(), DefragOptions{}).moves.empty());
  for (int n = 0; n < 4; ++n) c.Protect("p" + std::to_string(n));
  DefragPlan stuck = Consolidate(0, c.Input(), DefragOptions{});
  EXPECT_FALSE(stuck.fits);
  EXPECT_TRUE(stuck.moves.empty());
  EXPECT_THAT(stuck.reason, HasSubstr("no single move"));
}

}  // namespace defrag_planner_test
}  // namespace gpusched::placement
