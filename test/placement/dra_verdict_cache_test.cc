// The DRA planner through a verdict cache: the same verdicts as without it, for every pod whose
// claims have the same shape (with their own claim names in the reasons), recomputed exactly on
// the nodes whose DRA inputs changed.
#include "gpusched/placement/dra_verdict_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/dra/object_set.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/placement/dra_planner.h"

namespace gpusched::placement {
namespace dra_verdict_cache_test {

using ::testing::HasSubstr;
using namespace gpusched::testing;

// dra-a and dra-b: 8 H100s each; dra-b has 7 of them taken. Claims train-1 and train-2 ask for
// the same two GPUs.
struct Cluster {
  Cluster() {
    std::vector<std::string> taken;
    for (int i = 0; i < 7; ++i) taken.push_back("dra-b/gpu-" + std::to_string(i));
    ClusterObjects c;
    for (const std::string& o : {DraNode("dra-a"), GpuSlice("dra-a", 8), DraNode("dra-b"), GpuSlice("dra-b", 8), std::string(kGpuClass),
                                 Claim("train-1", ClaimSpec(2, kH100Selector)), Claim("train-2", ClaimSpec(2, kH100Selector)),
                                 Claim("other", ClaimSpec(7, ""), taken, {"o"})}) {
      EXPECT_TRUE(kubejson::AppendClusterJson(o, &c).ok()) << o;
    }
    inventory.ReplaceCluster(std::move(c));
    snapshot = inventory.Snapshot();
  }
  inventory::Inventory inventory;
  std::shared_ptr<const inventory::InventorySnapshot> snapshot;
  dra::cel::ProgramCache programs;
};

TEST(DraVerdictCache, PodsOfOneClaimShapeShareVerdictsAndReasonsNameEachPodsOwnClaim) {
  Cluster c;
  Pod first = DecodedPod(ClaimPod("p1", "train-1")), second = DecodedPod(ClaimPod("p2", "train-2"));
  DraPlanner one(c.snapshot->dra(), first, &c.programs), two(c.snapshot->dra(), second, &c.programs);
  ASSERT_TRUE(one.cacheable());
  ASSERT_EQ(one.shape(), two.shape());
  DraVerdictCache cache;
  const auto& nodes = c.snapshot->nodes();
  for (uint32_t pos = 0; pos < nodes.size(); ++pos) {
    std::shared_ptr<const DraVerdict> cached = one.Evaluate(*nodes[pos], pos, /*rank=*/true, &cache);
    DraVerdict plain = one.Evaluate(*nodes[pos], true);
    EXPECT_EQ(cached->node.outcome, plain.node.outcome);
    EXPECT_EQ(cached->node.reason, plain.node.reason);
    EXPECT_EQ(cached->ranked, plain.ranked);
    EXPECT_EQ(cached->score, plain.score);
  }
  // The second pod is answered from the cache (the same objects), with its own claim's name.
  uint32_t a = static_cast<uint32_t>(c.snapshot->FindIndex("dra-a")), b = static_cast<uint32_t>(c.snapshot->FindIndex("dra-b"));
  std::shared_ptr<const DraVerdict> held = cache.Find(a, nodes[a]->generation, c.snapshot->dra().NodeVersion("dra-a"), true);
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(two.Evaluate(*nodes[a], a, true, &cache), held);
  std::shared_ptr<const DraVerdict> refused = two.Evaluate(*nodes[b], b, true, &cache);
  EXPECT_FALSE(refused->fits());
  EXPECT_THAT(refused->node.reason, HasSubstr("claim ml/train-2: request gpus: 1 of 2 devices available"));
  EXPECT_THAT(one.Evaluate(*nodes[b], b, true, &cache)->node.reason, HasSubstr("claim ml/train-1: request gpus"));
}

// The verdict's outcome is kube-scheduler's status code: the node fits, room could be made there,
// or the pod's own request is at fault (which stops its scheduling attempt, whatever the node).
TEST(DraVerdictCache, TheOutcomeSaysWhetherTheNodeOrThePodIsAtFault) {
  Cluster c;
  const auto& nodes = c.snapshot->nodes();
  size_t a = c.snapshot->FindIndex("dra-a"), b = c.snapshot->FindIndex("dra-b");
  DraPlanner fine(c.snapshot->dra(), DecodedPod(ClaimPod("p1", "train-1")), &c.programs);
  EXPECT_EQ(fine.Evaluate(*nodes[a], false).node.outcome, Outcome::kFits);
  DraVerdict full = fine.Evaluate(*nodes[b], false);
  EXPECT_EQ(full.node.outcome, Outcome::kUnschedulable);
  EXPECT_EQ(full.node.reject, Reject::kInsufficient);
  DraPlanner missing(c.snapshot->dra(), DecodedPod(ClaimPod("p3", "no-such-claim")), &c.programs);
  for (size_t pos : {a, b}) {
    DraVerdict v = missing.Evaluate(*nodes[pos], false);
    EXPECT_EQ(v.node.outcome, Outcome::kError) << nodes[pos]->node.name;
    EXPECT_EQ(v.node.reject, Reject::kInvalidRequest);
    EXPECT_THAT(v.node.reason, HasSubstr("no-such-claim"));
  }
}

TEST(DraVerdictCache, ANodeWhoseDevicesAClaimTookIsJudgedAgainTheOthersAreNot) {
  Cluster c;
  Pod pod = DecodedPod(ClaimPod("p1", "train-1"));
  DraVerdictCache cache;
  const auto& nodes = c.snapshot->nodes();
  uint32_t a = static_cast<uint32_t>(c.snapshot->FindIndex("dra-a")), b = static_cast<uint32_t>(c.snapshot->FindIndex("dra-b"));
  {
    DraPlanner planner(c.snapshot->dra(), pod, &c.programs);
    ASSERT_TRUE(planner.Evaluate(*nodes[a], a, false, &cache)->fits());
    ASSERT_FALSE(planner.Evaluate(*nodes[b], b, false, &cache)->fits());
  }
  std::shared_ptr<const DraVerdict> kept_b = cache.Find(b, nodes[b]->generation, c.snapshot->dra().NodeVersion("dra-b"), false);
  ASSERT_NE(kept_b, nullptr);
  // Owner mode writes a claim that takes 7 GPUs of dra-a: the node objects are unchanged.
  dra::ResourceClaim taker = *c.snapshot->dra().FindClaim("ml", "train-2");
  taker.allocation = dra::AllocationResult{};
  for (int i = 0; i < 7; ++i) {
    taker.allocation->results.push_back(dra::DeviceResult{.request = "gpus", .id = {"gpu.nvidia.com", "dra-a", "gpu-" + std::to_string(i)}});
  }
  dra::ClusterStatePtr after = dra::WithClaim(c.snapshot->dra(), taker);
  DraPlanner planner(*after, pod, &c.programs);
  EXPECT_FALSE(planner.Evaluate(*nodes[a], a, false, &cache)->fits());
  EXPECT_THAT(planner.Evaluate(*nodes[b], b, false, &cache)->node.reason, HasSubstr("claim ml/train-1: request gpus: 1 of 2"));
  // dra-b is untouched: its verdict is the one kept, not computed again.
  EXPECT_EQ(cache.Find(b, nodes[b]->generation, after->NodeVersion("dra-b"), false), kept_b);
}

TEST(DraVerdictCache, AFitKeptByFilterDoesNotAnswerARankingButARefusalDoes) {
  DraVerdictCache cache;
  auto fit = std::make_shared<const DraVerdict>(DraVerdict{.node = NodeVerdict{.outcome = Outcome::kFits}});
  auto refusal = std::make_shared<const DraVerdict>(DraVerdict{.node = NodeVerdict{.reject = Reject::kInsufficient, .reason = "full"}});
  cache.Put(0, 5, 9, /*rank=*/false, fit);
  cache.Put(1, 5, 9, /*rank=*/false, refusal);
  EXPECT_EQ(cache.Find(0, 5, 9, false), fit);
  EXPECT_EQ(cache.Find(0, 5, 9, true), nullptr);
  EXPECT_EQ(cache.Find(1, 5, 9, true), refusal);
  EXPECT_EQ(cache.Find(1, 6, 9, false), nullptr);  // the node changed
  EXPECT_EQ(cache.Find(1, 5, 10, false), nullptr);  // its devices changed
  cache.Put(2, 0, 9, false, fit);                   // a state no inventory built: never kept
  EXPECT_EQ(cache.Find(2, 0, 9, false), nullptr);
}

}  // namespace dra_verdict_cache_test
}  // namespace gpusched::placement
