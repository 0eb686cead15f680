// NVLink islands under churn (issue 34 §3, intra-node): whole-card mGPU pods of one, two and four
// cards arrive at and leave one node, placed by the planner with the node's links and without
// them (today's choice). Measured: the share of multi-card pods that got an NVLink-connected set
// when one was free at that moment, and the share of moments a connected pair (or quad, on 8-GPU
// nodes) was free for the next pod. NVSwitch is the control: there every set is connected.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>

#include "gpusched/common/random.h"
#include "gpusched/placement/gpu_links.h"
#include "gpusched/placement/planner.h"
#include "nvlink_topologies.h"
#include "test_nodes.h"

namespace gpusched::placement {
namespace nvlink_churn_test {

struct Figures {
  int multi = 0;                // multi-card pods placed while a connected set was free
  int connected = 0;            // ... that got one
  int moments = 0;
  int pair_free = 0;            // moments with a connected free set of `watch` GPUs
};

// The churn on a node of `peers` (by index), with or without the links published.
Figures Churn(const std::vector<std::vector<int>>& peers, bool published, int watch, uint64_t seed) {
  int n = static_cast<int>(peers.size());
  std::vector<GpuDevice> devices;
  for (int i = 0; i < n; ++i) devices.push_back(GpuDevice{.index = i, .memory_mib = 10000, .nvlink_peers = published ? peers[i] : std::vector<int>{}});
  GpuLinks real;  // how the node really is (LinksOf keeps no graph for NVSwitch: every set alike)
  real.nvlink = Graph(peers);
  const GpuLinks* truth = &real;
  Node node = SharedNode("n", 0, 0);
  node.allocatable = {.mgpu_core_percent = 100 * n, .mgpu_memory_mib = 10000 * n};
  node.published_gpus = devices;
  Rng rng(seed);
  Planner planner(PlacementOptions{});
  std::vector<Allocation> running;
  Figures f;
  for (int step = 0; step < 3000; ++step) {
    NodeState state = BuildNodeState(node, running);
    GpuSet idle = 0;
    for (size_t p = 0; p < state.gpus.size(); ++p) idle |= state.gpus[p].instances == 0 ? GpuSet{1} << p : 0;
    std::vector<GpuSet> sets;
    ConnectedSets(truth->nvlink, idle, watch, 1, &sets);
    ++f.moments;
    f.pair_free += sets.empty() ? 0 : 1;
    if (!running.empty() && rng.Unit() < 0.45) {
      EraseOneAtRandom(&running, rng);
      continue;
    }
    int sizes[] = {1, 1, 2, 2, watch};
    int cards = sizes[static_cast<int>(rng.Unit() * 5) % 5];
    NodeVerdict v = planner.Evaluate(AnalyzePod(MgpuPod({MgpuC("c", 100 * cards, std::nullopt)})), state);
    if (!v.fits()) continue;
    GpuSet got = 0;
    for (int g : v.placement.containers[0].gpu_indices) got |= GpuSet{1} << g;
    if (cards > 1) {
      sets.clear();
      ConnectedSets(truth->nvlink, idle, cards, 1, &sets);
      if (!sets.empty()) {
        ++f.multi;
        f.connected += Connected(truth->nvlink, got) ? 1 : 0;
      }
    }
    std::string uid = "p" + std::to_string(step);
    running.push_back(SharedAlloc(uid, "n", v.placement.containers[0].gpu_indices, 1000, 0, /*exclusive=*/true));
  }
  return f;
}

void Expect(const std::string& name, const std::vector<std::vector<int>>& peers, int watch) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Figures with = Churn(peers, true, watch, seed), without = Churn(peers, false, watch, seed);
    ASSERT_GT(with.multi, 50) << name;
    EXPECT_EQ(with.connected, with.multi) << name << " seed " << seed << ": every multi-card pod connected when it could be";
    EXPECT_GE(with.pair_free, without.pair_free) << name << " seed " << seed;
    std::printf("%-8s seed %llu: connected %d/%d (without links %d/%d); a free connected %d-set %.1f%% of moments (without %.1f%%)\n",
                name.c_str(), static_cast<unsigned long long>(seed), with.connected, with.multi, without.connected, without.multi,
                watch, 100.0 * with.pair_free / with.moments, 100.0 * without.pair_free / without.moments);
  }
}

TEST(NvlinkChurn, TwoPairsOnFourGpus) { Expect("2x2", Pairs(4), 2); }
TEST(NvlinkChurn, FourPairsOnEightGpus) { Expect("4x2", Pairs(8), 2); }
TEST(NvlinkChurn, TheCubeMesh) { Expect("cube", CubeMesh(), 4); }
TEST(NvlinkChurn, NvswitchIsTheControl) { Expect("nvswitch", Switched(8), 4); }

}  // namespace nvlink_churn_test
}  // namespace gpusched::placement
