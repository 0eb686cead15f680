// DRA node choice under churn where kube-scheduler allocates (issue 34 §3, intra-node): claims of
// one, two and half a node's GPUs come to a few nvidia-dra nodes and leave them. Each pod goes
// through gpusched's filter; kube-scheduler picks a kept node at random, and its allocator takes
// the first free devices there (gpusched's compatible choice, which models it). The NVLink pairs
// are GPU 0+1, 2+3, ... (each pair in one PCIe root): upstream's first fit is a pair while the
// node's free GPUs are not split. Measured, with the agent's links published and without them:
// the multi-GPU claims whose devices were NVLink-connected, of those allocated while some fitting
// node's first fit was. NVSwitch is the control.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>

#include "../placement/nvlink_topologies.h"
#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/common/random.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/placement/dra_planner.h"

namespace gpusched::extender {
namespace dra_node_choice_churn_test {

using namespace gpusched::testing;
using placement::GpuSet;
using placement::Peers;

struct Figures {
  int multi = 0;      // multi-GPU claims allocated while some fitting node's first fit was connected
  int connected = 0;  // ... whose devices were
};

struct Running {
  std::string claim;
  size_t node = 0;
  int cards = 0;
  GpuSet gpus = 0;
};

class Churn {
 public:
  Churn(const Peers& peers, size_t nodes, bool published) : peers_(peers), nodes_(nodes), published_(published) {
    for (size_t i = 0; i < nodes; ++i) names_.push_back(fmt::format("d{}", i));
  }

  Figures Run(uint64_t seed) {
    Rng rng(seed);
    std::vector<GpuSet> truth = placement::Graph(peers_);
    Service service(&inventory_, {});
    Figures f;
    for (int step = 0; step < 1500; ++step) {
      if (!running_.empty() && rng.Unit() < 0.45) {
        placement::EraseOneAtRandom(&running_, rng);
        continue;
      }
      int n = static_cast<int>(peers_.size());
      int sizes[] = {1, 1, 2, 2, n / 2};
      int cards = sizes[static_cast<int>(rng.Unit() * 5) % 5];
      Load(cards);
      std::string pod_json = ClaimPod(fmt::format("p{}", step), "new");
      std::vector<std::string> kept = KeptNodes(service.Filter(ArgsWithNames(pod_json, names_)));
      if (kept.empty()) continue;
      size_t node = static_cast<size_t>(std::stoi(kept[static_cast<size_t>(rng.Unit() * static_cast<double>(kept.size())) % kept.size()].substr(1)));
      std::vector<GpuSet> first_fit = FirstFits(pod_json);
      if (cards > 1 && std::any_of(first_fit.begin(), first_fit.end(), [&](GpuSet s) { return s != 0 && placement::Connected(truth, s); })) {
        ++f.multi;
        f.connected += placement::Connected(truth, first_fit[node]) ? 1 : 0;
      }
      running_.push_back(Running{.claim = fmt::format("c{}", step), .node = node, .cards = cards, .gpus = first_fit[node]});
    }
    return f;
  }

 private:
  // The cluster: the nodes, their slices, the running claims, and claim "new" of `cards` GPUs.
  void Load(int cards) {
    int n = static_cast<int>(peers_.size());
    std::vector<std::string> json = {std::string(kGpuClass), Claim("new", ClaimSpec(cards, ""))};
    for (const std::string& name : names_) {
      json.push_back(DraNodeWithLinks(name, published_ ? peers_ : Peers{}));
      json.push_back(GpuSlice(name, n));
    }
    for (const Running& r : running_) {
      std::vector<std::string> devices;
      for (int g = 0; g < n; ++g) {
        if ((r.gpus >> g) & 1) devices.push_back(fmt::format("{}/gpu-{}", names_[r.node], g));
      }
      json.push_back(Claim(r.claim, ClaimSpec(r.cards, ""), devices, {r.claim}));
    }
    ClusterObjects objects;
    EXPECT_TRUE(kubejson::AppendClusterJson(ListJson(json), &objects).ok());
    inventory_.ReplaceCluster(std::move(objects));
  }

  // By node: the GPUs upstream's allocator would take for the pod there (0: it does not fit).
  std::vector<GpuSet> FirstFits(const std::string& pod_json) {
    auto snapshot = inventory_.Snapshot();
    Pod pod = DecodedPod(pod_json);
    placement::DraPlanner planner(snapshot->dra(), pod, &programs_);
    std::vector<GpuSet> out(nodes_, 0);
    for (size_t i = 0; i < nodes_; ++i) {
      placement::DraVerdict v = planner.Evaluate(*snapshot->FindNode(names_[i]), /*rank=*/true);
      if (!v.fits()) continue;
      for (const dra::AllocationResult& r : v.compat) {
        for (const dra::DeviceResult& d : r.results) out[i] |= GpuSet{1} << std::stoi(d.id.device.substr(4));  // "gpu-<i>"
      }
    }
    return out;
  }

  const Peers peers_;
  const size_t nodes_;
  const bool published_;
  std::vector<std::string> names_;
  inventory::Inventory inventory_;
  dra::cel::ProgramCache programs_;
  std::vector<Running> running_;
};

void Expect(const std::string& name, const Peers& peers, size_t nodes) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Figures with = Churn(peers, nodes, true).Run(seed), without = Churn(peers, nodes, false).Run(seed);
    ASSERT_GT(with.multi, 50) << name;
    EXPECT_EQ(with.connected, with.multi) << name << " seed " << seed << ": every multi-GPU claim connected when a node offered it";
    std::printf("%-8s seed %llu: connected %d/%d (without links %d/%d)\n", name.c_str(), static_cast<unsigned long long>(seed),
                with.connected, with.multi, without.connected, without.multi);
  }
}

TEST(DraNodeChoiceChurn, FourNodesOfTwoPairs) { Expect("2x2", placement::Pairs(4), 4); }
TEST(DraNodeChoiceChurn, FourNodesOfFourPairs) { Expect("4x2", placement::Pairs(8), 4); }
TEST(DraNodeChoiceChurn, FourCubeMeshNodes) { Expect("cube", placement::CubeMesh(), 4); }
TEST(DraNodeChoiceChurn, NvswitchIsTheControl) { Expect("nvswitch", placement::Switched(8), 4); }

}  // namespace dra_node_choice_churn_test
}  // namespace gpusched::extender
