// Nodes reserved for picky pods (reservation.h), and softmix keeping other pods off them.
#include "gpusched/scoring/reservation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "../placement/test_nodes.h"
#include "gpusched/placement/node_ranking.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::scoring {
namespace reservation_test {

// An empty node of 8 GPUs with `cores` CPU cores and 512 GiB.
NodeView Eight(int64_t cores) {
  NodeView v{.cpu_free = cores * 1000, .mem_free = 524288, .cpu_cap = cores * 1000, .mem_cap = 524288, .gpu_count = 8};
  for (int i = 0; i < 8; ++i) v.gpu_free[i] = 1000;
  return v;
}

PodShape Pod(int64_t cores, int gpus, int32_t milli = 1000) { return PodShape{.cpu = cores * 1000, .mem = 8192, .gpus = gpus, .milli = milli}; }

// openb in small: 27 nodes of 96 cores, 3 of 128.
std::vector<NodeView> Cluster() {
  std::vector<NodeView> nodes(27, Eight(96));
  for (int i = 0; i < 3; ++i) nodes.push_back(Eight(128));
  return nodes;
}

std::vector<WorkloadSample> Samples() {
  return {{Pod(120, 8), ""}, {Pod(88, 8), ""}, {Pod(8, 1), ""}, {Pod(8, 1), ""}, {Pod(4, 1, 300), ""}, {Pod(2, 0, 0), ""}};
}

TEST(Reservation, APodThatFitsFewEmptyNodesMakesThemReserved) {
  std::vector<NodeView> nodes = Cluster();
  TargetWorkload w{.picky = PickyShapes(Samples(), nodes, kPickyShare)};
  ASSERT_EQ(w.picky.size(), 1u);
  EXPECT_EQ(w.picky[0], Pod(120, 8));
  EXPECT_FALSE(Reserved(nodes[0], w));
  EXPECT_TRUE(Reserved(nodes[29], w));
  EXPECT_TRUE(Picky(Pod(120, 8), w));
  EXPECT_TRUE(Picky(Pod(124, 8), w));
  EXPECT_FALSE(Picky(Pod(88, 8), w));
  EXPECT_FALSE(Picky(Pod(8, 1), w));
  // A shape no node holds, or one most nodes hold, is not picky.
  EXPECT_TRUE(PickyShapes(std::vector<WorkloadSample>{{Pod(200, 8), ""}}, nodes, kPickyShare).empty());
  EXPECT_TRUE(PickyShapes(std::vector<WorkloadSample>{{Pod(120, 8), ""}}, nodes, 0.05).empty());  // 3 of 30 nodes is 10%
  EXPECT_TRUE(PickyShapes(std::vector<WorkloadSample>{{Pod(120, 4), ""}}, nodes, kPickyShare).empty());  // half a node frees up sooner
  // A share of the one GPU of a rare node is not picky; nodes without GPUs do not count.
  std::vector<NodeView> with_one = nodes;
  NodeView single{.model = 7, .cpu_free = 8000, .mem_free = 65536, .cpu_cap = 8000, .mem_cap = 65536, .gpu_count = 1};
  single.gpu_free[0] = 1000;
  with_one.push_back(single);
  PodShape share = Pod(2, 1, 300), whole_one = Pod(2, 1);
  share.spec = whole_one.spec = uint64_t{1} << 7;  // only that node's model
  EXPECT_TRUE(PickyShapes(std::vector<WorkloadSample>{{share, ""}}, with_one, kPickyShare).empty());
  EXPECT_EQ(PickyShapes(std::vector<WorkloadSample>{{whole_one, ""}}, with_one, kPickyShare).size(), 1u);
  std::vector<NodeView> with_cpu_only = nodes;
  for (int i = 0; i < 30; ++i) with_cpu_only.push_back(NodeView{.cpu_free = 256000, .cpu_cap = 256000});
  EXPECT_EQ(PickyShapes(Samples(), with_cpu_only, kPickyShare).size(), 1u);  // 3 of 30 GPU nodes, not of 60
}

TEST(Reservation, UntrackedCapacityLeavesOnlyGpusAndModel) {
  NodeView two{.gpu_count = 2};
  EXPECT_TRUE(FitsEmpty(Pod(500, 2), two));
  EXPECT_FALSE(FitsEmpty(Pod(1, 4), two));
  NodeView t4{.model = 3, .gpu_count = 2};
  PodShape a100 = Pod(1, 1);
  a100.spec = uint64_t{1} << 5;
  EXPECT_FALSE(FitsEmpty(a100, t4));
}

TEST(Reservation, SoftmixPlacesPodsThatFitAnywhereOffReservedNodes) {
  std::vector<NodeView> nodes = {Eight(96), Eight(128)};  // equal but for the cores
  std::vector<NodeView> all = Cluster();
  TargetWorkload w{.classes = {TaskClass{.cpu = 8000, .milli = 1000, .gpus = 1, .p = 1}},
                   .gap_value = std::vector<double>(1001, 0.0),
                   .picky = PickyShapes(Samples(), all, kPickyShare)};
  for (int g = 0; g <= 1000; ++g) w.gap_value[static_cast<size_t>(g)] = g;
  auto softmix = MakeScorer("softmix", &w);
  ASSERT_TRUE(softmix.ok());
  // The reserved node first in the tie-break order: the penalty alone must move the pod.
  std::vector<Candidate> c = {Candidate{.node = &nodes[1], .order = 0}, Candidate{.node = &nodes[0], .order = 1}};
  std::vector<Choice> out(2);
  Rng rng(1);
  (*softmix)->Score(Pod(8, 1), c, out, rng);
  EXPECT_EQ(Best(c, out), 1u);
  EXPECT_DOUBLE_EQ(out[1].score - out[0].score, 5000);
  // Without picky shapes nobody pays.
  w.picky.clear();
  (*softmix)->Score(Pod(8, 1), c, out, rng);
  EXPECT_DOUBLE_EQ(out[0].score, out[1].score);
}

// The extender's workload (placement::ObservedWorkload) knows GPU counts, not CPU: an 8-GPU pod
// on the one 8-GPU node of ten makes that node reserved.
TEST(Reservation, TheObservedWorkloadReservesTheFewNodesItsWholeNodePodsNeed) {
  std::vector<placement::NodeState> states;
  for (int i = 0; i < 9; ++i) states.push_back(placement::BuildNodeState(placement::WholeNode(fmt::format("w{}", i), 4), {}));
  Allocation eight{.pod_uid = "big", .node_name = "w9", .placement = {.kind = RequestKind::kWholeGpu, .whole_gpus = 8}};
  Allocation one{.pod_uid = "small", .node_name = "w0", .placement = {.kind = RequestKind::kWholeGpu, .whole_gpus = 1}};
  states[0] = placement::BuildNodeState(placement::WholeNode("w0", 4), {one});
  states.push_back(placement::BuildNodeState(placement::WholeNode("w9", 8), {eight}));
  std::vector<const placement::NodeState*> nodes;
  for (const placement::NodeState& n : states) nodes.push_back(&n);
  TargetWorkload w = placement::ObservedWorkload(nodes);
  ASSERT_EQ(w.picky.size(), 1u);
  EXPECT_EQ(w.picky[0].gpus, 8);
  EXPECT_TRUE(Reserved(states[9].view, w));
  EXPECT_FALSE(Reserved(states[1].view, w));
  EXPECT_FALSE(Picky(PodShape{.gpus = 1, .milli = 1000}, w));
}

}  // namespace reservation_test
}  // namespace gpusched::scoring
