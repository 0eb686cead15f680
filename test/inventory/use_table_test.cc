// The use table (inventory/use_table.h): what each bound pod asks of its node besides GPUs, kept
// by node and shared with node states until it changes; label sets interned; the budgets.
#include "gpusched/inventory/use_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace gpusched::inventory {
namespace use_table_test {

Pod Bound(std::string uid, std::string node, std::string app = "web") {
  Pod p{.uid = uid, .namespace_name = "ml", .name = uid, .node_name = std::move(node), .phase = PodPhase::kRunning,
        .containers = {Container{.name = "c"}}};
  p.labels["app"] = std::move(app);
  p.containers[0].other_requests.Add("cpu", 500);
  return p;
}

TEST(UseTable, ABoundPodCountsOnItsNodeUntilItFinishes) {
  UseTable table;
  Pod pod = Bound("a", "n1");
  EXPECT_TRUE(table.Track(pod));
  EXPECT_FALSE(table.Track(pod));  // the same use: nothing changed
  ASSERT_EQ(table.PodsOn("n1").size(), 1u);
  EXPECT_EQ(table.PodsOn("n1")[0].requests.Get("cpu"), 500);
  pod.phase = PodPhase::kSucceeded;
  EXPECT_TRUE(table.Track(pod));
  EXPECT_TRUE(table.PodsOn("n1").empty());
  EXPECT_EQ(table.Shared("n1"), nullptr);
  EXPECT_FALSE(table.Drop("a", "n1"));
}

TEST(UseTable, NodeStatesShareOneCopyUntilTheNextChange) {
  UseTable table;
  table.Track(Bound("a", "n1"));
  std::shared_ptr<const NodeUses> first = table.Shared("n1");
  EXPECT_EQ(table.Shared("n1"), first);
  table.Track(Bound("b", "n1"));
  std::shared_ptr<const NodeUses> second = table.Shared("n1");
  EXPECT_NE(second, first);
  EXPECT_EQ(first->pods().size(), 1u);  // a state built before the change keeps what it saw
  EXPECT_EQ(second->pods().size(), 2u);
}

TEST(UseTable, PodsWithTheSameLabelsShareOneSet) {
  UseTable table;
  table.Track(Bound("a", "n1"));
  table.Track(Bound("b", "n2"));
  table.Track(Bound("c", "n2", "db"));
  EXPECT_EQ(table.label_sets(), 2u);
  EXPECT_EQ(table.PodsOn("n1")[0].labels, table.PodsOn("n2")[0].labels);
}

TEST(UseTable, FlagsSayWhichKindOfGpuAPodHoldsAndWhetherDraMayServeIt) {
  UseTable table;
  Pod whole = Bound("whole", "n1");
  whole.containers[0].limits.nvidia_gpus = 1;
  Pod shared = Bound("shared", "n1");
  shared.containers[0].limits.mgpu_core_percent = 30;
  shared.containers[0].limits.mgpu_memory_mib = 1024;
  Pod claims = Bound("claims", "n1");
  claims.resource_claims.push_back(PodClaimRef{.name = "gpu", .claim_name = "c"});
  for (const Pod& p : {whole, shared, claims}) table.Track(p);
  std::map<std::string, uint8_t> flags;
  for (const PodUse& u : table.PodsOn("n1")) flags[u.uid] = u.flags;
  EXPECT_EQ(PodUse::PluginKind(flags["whole"]), RequestKind::kWholeGpu);
  EXPECT_NE(flags["whole"] & PodUse::kDevices, 0);  // KEP 5004: DRA may serve nvidia.com/gpu
  EXPECT_EQ(PodUse::PluginKind(flags["shared"]), RequestKind::kMgpu);
  EXPECT_EQ(flags["shared"] & PodUse::kDevices, 0);
  EXPECT_EQ(PodUse::PluginKind(flags["claims"]), RequestKind::kNone);
  EXPECT_NE(flags["claims"] & PodUse::kDevices, 0);
}

// A pod that names another scheduler than the one gpusched serves is marked: gpusched did not
// place it (gang_domains.h's drain wait). One without a name (hand-made) counts as gpusched's.
TEST(UseTable, PodsOfAnotherSchedulerAreMarked) {
  UseTable table("gpu-scheduler");
  Pod ours = Bound("ours", "n1");
  ours.scheduler_name = "gpu-scheduler";
  Pod other = Bound("other", "n1");
  other.scheduler_name = "default-scheduler";
  Pod unnamed = Bound("unnamed", "n1");
  for (const Pod& p : {ours, other, unnamed}) table.Track(p);
  std::map<std::string, bool> marked;
  for (const PodUse& u : table.PodsOn("n1")) marked[u.uid] = (u.flags & PodUse::kOtherScheduler) != 0;
  EXPECT_EQ(marked, (std::map<std::string, bool>{{"ours", false}, {"other", true}, {"unnamed", false}}));
  UseTable unnamed_scheduler;
  unnamed_scheduler.Track(other);
  EXPECT_EQ(unnamed_scheduler.PodsOn("n1")[0].flags & PodUse::kOtherScheduler, 0) << "no scheduler named: none is marked";
}

TEST(UseTable, BudgetsAreListedForSnapshotsAndChangeOnlyWhenTheyDiffer) {
  UseTable table;
  EXPECT_EQ(table.budget_list(), nullptr);
  std::map<std::string, DisruptionBudget> budgets{{"ml/web", DisruptionBudget{.namespace_name = "ml", .name = "web"}}};
  EXPECT_TRUE(table.SetBudgets(budgets));
  EXPECT_FALSE(table.SetBudgets(budgets));
  ASSERT_NE(table.budget_list(), nullptr);
  EXPECT_EQ(table.budget_list()->size(), 1u);
  EXPECT_TRUE(table.SetBudgets({}));
  EXPECT_EQ(table.budget_list(), nullptr);
}

}  // namespace use_table_test
}  // namespace gpusched::inventory
