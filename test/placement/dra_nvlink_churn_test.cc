// NVLink islands under churn in mode nvidia-dra (issue 34 §3, intra-node): claims of one, two and
// four GPUs are allocated on one node and released, each placed by the DRA planner's ranked
// choice, once with the node agent's links published and once without them (today's choice:
// one PCIe root). The pairs here cross the PCIe roots (the driver's slice puts two GPUs on each
// root), so one root is not one island. Measured: the multi-GPU claims that got an
// NVLink-connected set when one was free at that moment, and the share of moments a connected
// pair (or quad, on 8-GPU nodes) was free for the next claim. NVSwitch is the control.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/common/random.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/placement/dra_planner.h"
#include "nvlink_topologies.h"

namespace gpusched::placement {
namespace dra_nvlink_churn_test {

using namespace gpusched::testing;

struct Figures {
  int multi = 0;      // multi-GPU claims allocated while a connected set was free
  int connected = 0;  // ... that got one
  int moments = 0;
  int set_free = 0;   // moments with a connected free set of `watch` GPUs
};

struct Running {
  std::string name;
  int cards = 0;
  GpuSet gpus = 0;
};

// The GPUs the ranked choice of claim "new" (of `cards` GPUs) takes on dra-l beside `running`, or
// nullopt when it does not fit.
std::optional<GpuSet> Allocate(const std::string& node, int n, const std::vector<Running>& running, int cards,
                               inventory::Inventory* inventory, dra::cel::ProgramCache* programs) {
  ClusterObjects objects;
  std::vector<std::string> json = {node, GpuSlice("dra-l", n), std::string(kGpuClass), Claim("new", ClaimSpec(cards, ""))};
  for (const Running& r : running) {
    std::vector<std::string> devices;
    for (int g = 0; g < n; ++g) {
      if ((r.gpus >> g) & 1) devices.push_back(fmt::format("dra-l/gpu-{}", g));
    }
    json.push_back(Claim(r.name, ClaimSpec(r.cards, ""), devices, {r.name}));
  }
  for (const std::string& o : json) EXPECT_TRUE(kubejson::AppendClusterJson(o, &objects).ok()) << o;
  inventory->ReplaceCluster(std::move(objects));
  auto snapshot = inventory->Snapshot();
  Pod pod = DecodedPod(ClaimPod("new", "new"));
  DraPlanner planner(snapshot->dra(), pod, programs);
  DraVerdict v = planner.Evaluate(*snapshot->FindNode("dra-l"), /*rank=*/true);
  if (!v.fits()) return std::nullopt;
  GpuSet got = 0;
  for (const dra::AllocationResult& r : v.ranked) {
    for (const dra::DeviceResult& d : r.results) got |= GpuSet{1} << std::stoi(d.id.device.substr(4));  // "gpu-<i>"
  }
  return got;
}

Figures Churn(const Peers& peers, bool published, int watch, uint64_t seed) {
  int n = static_cast<int>(peers.size());
  std::vector<GpuSet> truth = Graph(peers);
  std::string node = DraNodeWithLinks("dra-l", published ? peers : Peers{});
  inventory::Inventory inventory;
  dra::cel::ProgramCache programs;
  Rng rng(seed);
  std::vector<Running> running;
  Figures f;
  for (int step = 0; step < 3000; ++step) {
    GpuSet idle = (GpuSet{1} << n) - 1;
    for (const Running& r : running) idle &= ~r.gpus;
    ++f.moments;
    f.set_free += HasConnectedSet(truth, idle, watch) ? 1 : 0;
    if (!running.empty() && rng.Unit() < 0.45) {
      EraseOneAtRandom(&running, rng);
      continue;
    }
    int sizes[] = {1, 1, 2, 2, watch};
    int cards = sizes[static_cast<int>(rng.Unit() * 5) % 5];
    std::optional<GpuSet> got = Allocate(node, n, running, cards, &inventory, &programs);
    if (!got) continue;
    if (cards > 1 && HasConnectedSet(truth, idle, cards)) {
      ++f.multi;
      f.connected += Connected(truth, *got) ? 1 : 0;
    }
    running.push_back(Running{.name = "c" + std::to_string(step), .cards = cards, .gpus = *got});
  }
  return f;
}

void Expect(const std::string& name, const Peers& peers, int watch) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Figures with = Churn(peers, true, watch, seed), without = Churn(peers, false, watch, seed);
    ASSERT_GT(with.multi, 50) << name;
    EXPECT_EQ(with.connected, with.multi) << name << " seed " << seed << ": every multi-GPU claim connected when it could be";
    EXPECT_GE(with.set_free, without.set_free) << name << " seed " << seed;
    std::printf("%-8s seed %llu: connected %d/%d (without links %d/%d); a free connected %d-set %.1f%% of moments (without %.1f%%)\n",
                name.c_str(), static_cast<unsigned long long>(seed), with.connected, with.multi, without.connected, without.multi,
                watch, 100.0 * with.set_free / with.moments, 100.0 * without.set_free / without.moments);
  }
}

TEST(DraNvlinkChurn, TwoPairsAcrossPcieRootsOnFourGpus) { Expect("2x2", Pairs(4, 2), 2); }
TEST(DraNvlinkChurn, FourPairsAcrossPcieRootsOnEightGpus) { Expect("4x2", Pairs(8, 2), 2); }
TEST(DraNvlinkChurn, TheCubeMesh) { Expect("cube", CubeMesh(), 4); }
TEST(DraNvlinkChurn, NvswitchIsTheControl) { Expect("nvswitch", Switched(8), 4); }

}  // namespace dra_nvlink_churn_test
}  // namespace gpusched::placement
