// NVLink islands under churn in mode nvidia (issue 34 §3, intra-node): whole-GPU pods of one, two
// and four GPUs arrive at a few nodes and leave them. The device plugin picks the cards (modelled
// as NVIDIA's does: a connected set where that node has one, else the lowest free), so what is
// measured is gpusched's part, the node: filter (ScatteredNodes) refuses nodes without a
// connected free set where another offered node has one; kube-scheduler picks at random among the
// nodes kept. Which GPUs are busy is what the node agent publishes from the kubelet's
// PodResources (GpuDevice::pods). Measured, with the filter and without it: the multi-GPU pods
// that went to a node with a connected free set when some node had one, and those whose cards
// were connected. NVSwitch is the control.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstdio>

#include "gpusched/common/random.h"
#include "gpusched/placement/whole_gpu_sets.h"
#include "nvlink_topologies.h"
#include "test_nodes.h"

namespace gpusched::placement {
namespace whole_gpu_nvlink_churn_test {

struct Figures {
  int multi = 0;           // multi-GPU pods placed while some fitting node had a connected free set
  int on_connected = 0;    // ... placed on such a node
  int got_connected = 0;   // ... whose cards the device plugin gave connected
};

struct Running {
  std::string uid;
  size_t node = 0;
  GpuSet gpus = 0;
};

// The node `name` of `peers` as gpusched sees it: the agent's links and PodResources reading,
// and the whole-GPU pods bound there.
NodeState Seen(const std::string& name, const Peers& peers, const std::vector<Running>& running, size_t index) {
  int n = static_cast<int>(peers.size());
  Node node = WholeNode(name, n);
  std::vector<Allocation> bound;
  std::vector<GpuDevice> devices;
  for (int g = 0; g < n; ++g) {
    devices.push_back(GpuDevice{.index = g, .uuid = name + "-GPU-" + std::to_string(g), .nvlink_peers = peers[g]});
    devices.back().pods = std::vector<std::string>{};
  }
  for (const Running& r : running) {
    if (r.node != index) continue;
    bound.push_back(WholeAlloc(r.uid, name, std::popcount(r.gpus)));
    for (int g = 0; g < n; ++g) {
      if ((r.gpus >> g) & 1) devices[g].pods->push_back("ns/" + r.uid);
    }
  }
  node.published_gpus = devices;
  return BuildNodeState(node, std::move(bound));
}

// The device plugin's cards on a node with `free` GPUs: a connected set of `cards` where there is
// one, else the lowest free.
GpuSet PluginChoice(const std::vector<GpuSet>& graph, GpuSet free, int cards) {
  std::vector<GpuSet> sets;
  ConnectedSets(graph, free, cards, 1, &sets);
  if (!sets.empty()) return sets.front();
  GpuSet got = 0;
  for (int g = 0; std::popcount(got) < cards; ++g) got |= free & (GpuSet{1} << g);
  return got;
}

Figures Churn(const Peers& peers, size_t nodes, bool filter, uint64_t seed) {
  int n = static_cast<int>(peers.size());
  std::vector<GpuSet> graph = Graph(peers);
  Rng rng(seed);
  std::vector<Running> running;
  Figures f;
  for (int step = 0; step < 3000; ++step) {
    if (!running.empty() && rng.Unit() < 0.45) {
      EraseOneAtRandom(&running, rng);
      continue;
    }
    int sizes[] = {1, 1, 2, 2, n / 2};
    int cards = sizes[static_cast<int>(rng.Unit() * 5) % 5];
    std::vector<GpuSet> free(nodes, (GpuSet{1} << n) - 1);
    for (const Running& r : running) free[r.node] &= ~r.gpus;
    std::vector<NodeState> seen;
    std::vector<size_t> fitting;
    for (size_t i = 0; i < nodes; ++i) {
      if (std::popcount(free[i]) < cards) continue;
      seen.push_back(Seen("n" + std::to_string(i), peers, running, i));
      fitting.push_back(i);
    }
    if (fitting.empty()) continue;
    std::vector<const NodeState*> offered;
    for (const NodeState& s : seen) offered.push_back(&s);
    std::vector<size_t> kept;
    std::vector<std::pair<size_t, std::string>> refused = filter ? ScatteredNodes(offered, cards) : decltype(refused){};
    for (size_t k = 0; k < fitting.size(); ++k) {
      if (std::none_of(refused.begin(), refused.end(), [&](const auto& r) { return r.first == k; })) kept.push_back(fitting[k]);
    }
    size_t node = kept[static_cast<size_t>(rng.Unit() * static_cast<double>(kept.size())) % kept.size()];
    GpuSet got = PluginChoice(graph, free[node], cards);
    if (cards > 1 && std::any_of(fitting.begin(), fitting.end(), [&](size_t i) { return HasConnectedSet(graph, free[i], cards); })) {
      ++f.multi;
      f.on_connected += HasConnectedSet(graph, free[node], cards) ? 1 : 0;
      f.got_connected += Connected(graph, got) ? 1 : 0;
    }
    running.push_back(Running{.uid = "p" + std::to_string(step), .node = node, .gpus = got});
  }
  return f;
}

void Expect(const std::string& name, const Peers& peers, size_t nodes) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Figures with = Churn(peers, nodes, true, seed), without = Churn(peers, nodes, false, seed);
    ASSERT_GT(with.multi, 50) << name;
    EXPECT_EQ(with.on_connected, with.multi) << name << " seed " << seed << ": every multi-GPU pod on a node with a connected set";
    EXPECT_EQ(with.got_connected, with.multi) << name << " seed " << seed;
    std::printf("%-8s seed %llu: on a node with a connected set %d/%d (without the filter %d/%d), cards connected %d/%d (%d/%d)\n",
                name.c_str(), static_cast<unsigned long long>(seed), with.on_connected, with.multi, without.on_connected,
                without.multi, with.got_connected, with.multi, without.got_connected, without.multi);
  }
}

TEST(WholeGpuNvlinkChurn, SixNodesOfTwoPairs) { Expect("2x2", Pairs(4), 6); }
TEST(WholeGpuNvlinkChurn, FourNodesOfFourPairs) { Expect("4x2", Pairs(8), 4); }
TEST(WholeGpuNvlinkChurn, FourCubeMeshNodes) { Expect("cube", CubeMesh(), 4); }
TEST(WholeGpuNvlinkChurn, NvswitchIsTheControl) { Expect("nvswitch", Switched(8), 4); }

}  // namespace whole_gpu_nvlink_churn_test
}  // namespace gpusched::placement
