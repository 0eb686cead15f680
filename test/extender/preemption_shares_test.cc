// DecidePreemption over many candidates, where it shares them out between threads: the answer is
// the one each candidate gets alone, in the same order.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <random>

#include "gpusched/extender/preemption.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/inventory/cluster_objects.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::extender {
namespace {

// `nodes` mGPU nodes of 2 GPUs, each GPU holding 2 to 4 pods of random shares and priorities.
ClusterObjects FullMgpuCluster(int nodes) {
  std::mt19937 rng(5);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  ClusterObjects c;
  for (int n = 0; n < nodes; ++n) {
    std::string name = fmt::format("m{:03}", n);
    c.nodes.push_back(Node{.name = name, .mode_label = "mgpu", .compute_policy_label = "fixed-share",
                           .allocatable = {.mgpu_core_percent = 200, .mgpu_memory_mib = 2 * 16384}});
    for (int g = 0; g < 2; ++g) {
      for (int k = uniform(2, 4); k > 0; --k) {
        std::string uid = fmt::format("{}-g{}-{}", name, g, k);
        Pod pod{.uid = uid, .namespace_name = "t", .name = uid, .node_name = name, .phase = PodPhase::kRunning,
                .priority = uniform(0, 3)};
        Container ctr{.name = "main"};
        ctr.limits.mgpu_core_percent = 20;
        ctr.limits.mgpu_memory_mib = 2048;
        pod.containers.push_back(ctr);
        pod.annotations["vke.volcengine.com/gpu-index-container-main"] = std::to_string(g);
        c.pods.push_back(std::move(pod));
      }
    }
  }
  return c;
}

TEST(PreemptionShares, ManyCandidatesGetTheAnswerEachGetsAlone) {
  inventory::Inventory inv;
  inv.ReplaceCluster(FullMgpuCluster(300));
  auto snapshot = inv.Snapshot();
  ServiceOptions options;
  HelperThread helper;
  EvaluationInputs inputs{.snapshot = snapshot.get(), .options = &options, .helper = &helper};
  Container ctr{.name = "c"};
  ctr.limits.mgpu_core_percent = 70;
  ctr.limits.mgpu_memory_mib = 4096;
  PreemptionArgs all{.pod = Pod{.uid = "urgent", .namespace_name = "t", .name = "urgent", .priority = 2, .containers = {ctr}},
                     .meta = true};
  for (int n = 0; n < 300; ++n) all.candidates.push_back(PreemptionCandidate{.node = fmt::format("m{:03}", n)});
  placement::PodRequest request = placement::AnalyzePod(all.pod);
  std::vector<MetaVictims> together = DecidePreemption(all, request, inputs);
  std::vector<MetaVictims> alone;
  std::vector<PreemptionArgs> ones;  // the answers' node names point into them
  ones.reserve(all.candidates.size());
  for (const PreemptionCandidate& c : all.candidates) {
    ones.push_back(PreemptionArgs{.pod = all.pod, .meta = true, .candidates = {c}});
    for (MetaVictims& m : DecidePreemption(ones.back(), request, inputs)) alone.push_back(std::move(m));
  }
  ASSERT_GT(alone.size(), 100u);  // most nodes are helped by evicting pods of priority 0 or 1
  ASSERT_LT(alone.size(), 300u);  // and some are not (a GPU of pods of priority 2 and 3 only)
  ASSERT_EQ(together.size(), alone.size());
  for (size_t i = 0; i < alone.size(); ++i) {
    EXPECT_EQ(together[i].node, alone[i].node);
    EXPECT_EQ(together[i].uids, alone[i].uids) << alone[i].node;
  }
}

}  // namespace
}  // namespace gpusched::extender
