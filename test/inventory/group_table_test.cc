// The pod groups the inventory keeps (inventory/group_table.h): an object's groups change
// together, a relist of one API leaves the others', and the snapshots show them.
#include "gpusched/inventory/group_table.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpusched/inventory/inventory.h"

namespace gpusched::inventory {
namespace group_table_test {

using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::_;

PodGroup Group(GroupApi api, std::string name, int32_t min_count) {
  return PodGroup{.api = api, .namespace_name = "ml", .name = std::move(name), .min_count = min_count};
}

std::vector<std::string> Keys(const GroupTable& t) {
  std::vector<std::string> out;
  for (const auto& [key, g] : *t.groups()) out.push_back(key);
  return out;
}

TEST(GroupTable, AWorkloadsUpdateReplacesEveryGroupItDeclares) {
  GroupTable t;
  EXPECT_TRUE(t.Apply({Group(GroupApi::kWorkload, "job/workers", 8), Group(GroupApi::kWorkload, "job/launcher", 0),
                       Group(GroupApi::kWorkload, "jobs/x", 2)},
                      {}, {}));
  EXPECT_TRUE(t.Apply({Group(GroupApi::kWorkload, "job/workers", 4)}, {}, {}));  // launcher removed from job
  EXPECT_THAT(Keys(t), ElementsAre("Workload/ml/job/workers", "Workload/ml/jobs/x"));
  EXPECT_EQ(t.groups()->at("Workload/ml/job/workers").min_count, 4);
  EXPECT_TRUE(t.Apply({}, {"Workload/ml/job"}, {}));  // job deleted; jobs stays
  EXPECT_THAT(Keys(t), ElementsAre("Workload/ml/jobs/x"));
}

TEST(GroupTable, ARelistOfOneApiLeavesTheOthersAndNoChangeKeepsTheSameGroups) {
  GroupTable t;
  t.Apply({Group(GroupApi::kPodGroup, "a", 2), Group(GroupApi::kCoscheduling, "a", 3)}, {}, {});
  std::shared_ptr<const GroupTable::Groups> before = t.groups();
  EXPECT_FALSE(t.Apply({Group(GroupApi::kPodGroup, "a", 2)}, {}, {GroupApi::kPodGroup}));
  EXPECT_EQ(t.groups(), before);
  EXPECT_TRUE(t.Apply({Group(GroupApi::kPodGroup, "b", 2)}, {}, {GroupApi::kPodGroup}));
  EXPECT_THAT(Keys(t), ElementsAre("Coscheduling/ml/a", "PodGroup/ml/b"));
}

TEST(GroupTable, TheInventorysSnapshotShowsTheGroupsOfTheLastReadAndOfEachEvent) {
  Inventory inv;
  inv.ReplaceCluster(ClusterObjects{.pod_groups = {Group(GroupApi::kPodGroup, "train", 4)}});
  EXPECT_THAT(inv.Snapshot()->groups(), ElementsAre(Pair("PodGroup/ml/train", _)));
  inv.Apply(ClusterDelta{.deleted_groups = {"PodGroup/ml/train"}});
  EXPECT_THAT(inv.Snapshot()->groups(), ::testing::IsEmpty());
  inv.Apply(ClusterDelta{.upsert_groups = {Group(GroupApi::kCoscheduling, "mpi", 3)}});
  EXPECT_EQ(inv.Snapshot()->groups().at("Coscheduling/ml/mpi").min_count, 3);
}

// Pending members come and go with the watch of pending pods: one that binds, is deleted, or is
// not listed by a relist is no pending member any more; a pod of no group is none.
TEST(GroupTable, PendingMembersFollowTheWatchOfPendingPods) {
  auto member = [](std::string uid, std::string node = "") {
    return Pod{.uid = uid, .namespace_name = "ml", .name = uid, .node_name = std::move(node),
               .group = PodGroupRef{.api = GroupApi::kPodGroup, .name = "train"}};
  };
  auto pending = [](const Inventory& inv) {
    std::vector<std::string> out;
    for (const auto& p : inv.Snapshot()->MembersOf("PodGroup/ml/train").pending) out.push_back(p->uid);
    return out;
  };
  Inventory inv;
  inv.Apply(ClusterDelta{.upsert_pending = {member("a"), member("b"), member("c"), Pod{.uid = "loner", .namespace_name = "ml"}}});
  EXPECT_THAT(pending(inv), ElementsAre("a", "b", "c"));
  inv.Apply(ClusterDelta{.deleted_pending = {"a"}});
  EXPECT_THAT(pending(inv), ElementsAre("b", "c"));
  inv.Apply(ClusterDelta{.upsert_pods = {member("b", "n1")}});  // bound (its node unknown here)
  EXPECT_THAT(pending(inv), ElementsAre("c"));
  EXPECT_EQ(inv.Snapshot()->MembersOf("PodGroup/ml/train").bound, 1u);
  inv.Apply(ClusterDelta{.upsert_pending = {member("d")}, .all_pending = true});  // a relist of pending pods only
  EXPECT_THAT(pending(inv), ElementsAre("d"));
  EXPECT_EQ(inv.Snapshot()->MembersOf("PodGroup/ml/train").bound, 1u);
  inv.Apply(ClusterDelta{.deleted_pods = {"b"}});
  EXPECT_EQ(inv.Snapshot()->MembersOf("PodGroup/ml/train").bound, 0u);
}

// A member that binds leaves the watch of pending pods (a DELETED event there) as the watch of
// pods shows it bound, in either order or in one delta: it stays counted as bound.
TEST(GroupTable, AMemberThatBindsStaysBoundWhicheverWatchSpeaksFirst) {
  Pod pending{.uid = "a", .namespace_name = "ml", .name = "a", .group = PodGroupRef{.api = GroupApi::kPodGroup, .name = "train"}};
  Pod bound = pending;
  bound.node_name = "n1";
  auto counts = [](const Inventory& inv) {
    const GroupTable::Members& m = inv.Snapshot()->MembersOf("PodGroup/ml/train");
    return std::make_pair(m.pending.size(), m.bound);
  };
  Inventory first_bound, first_gone, together;
  for (Inventory* inv : {&first_bound, &first_gone, &together}) inv->Apply(ClusterDelta{.upsert_pending = {pending}});
  first_bound.Apply(ClusterDelta{.upsert_pods = {bound}});
  first_bound.Apply(ClusterDelta{.deleted_pending = {"a"}});
  first_gone.Apply(ClusterDelta{.deleted_pending = {"a"}});
  first_gone.Apply(ClusterDelta{.upsert_pods = {bound}});
  together.Apply(ClusterDelta{.upsert_pods = {bound}, .deleted_pending = {"a"}});
  for (Inventory* inv : {&first_bound, &first_gone, &together}) EXPECT_EQ(counts(*inv), std::make_pair(size_t{0}, size_t{1}));
}

// Each member's GPU demand is read when it is put, so a bound member's is known without its pod:
// the pending ones' first, then the bound ones' (domain steering's target gangs read them).
TEST(GroupTable, EveryMembersGpuDemandIsKeptPendingOrBound) {
  auto member = [](std::string uid, int64_t gpus, std::string node = "") {
    Pod p{.uid = uid, .namespace_name = "ml", .name = uid, .node_name = std::move(node),
          .group = PodGroupRef{.api = GroupApi::kPodGroup, .name = "train"}};
    p.containers.push_back(Container{.name = "c", .requests = {.nvidia_gpus = gpus}, .limits = {.nvidia_gpus = gpus}});
    return p;
  };
  Pod launcher{.uid = "l", .namespace_name = "ml", .name = "l", .group = PodGroupRef{.api = GroupApi::kPodGroup, .name = "train"}};
  launcher.containers.push_back(Container{.name = "c"});
  Inventory inv;
  inv.Apply(ClusterDelta{.upsert_pending = {member("a", 4), member("b", 2), launcher}});
  EXPECT_THAT(inv.Snapshot()->MembersOf("PodGroup/ml/train").demands, ElementsAre(4000, 2000, 0));
  inv.Apply(ClusterDelta{.upsert_pods = {member("a", 4, "n1")}, .deleted_pending = {"a"}});
  const GroupTable::Members& m = inv.Snapshot()->MembersOf("PodGroup/ml/train");
  EXPECT_EQ(m.bound, 1u);
  EXPECT_THAT(m.demands, ElementsAre(2000, 0, 4000)) << "pending b and l, then bound a";
}

}  // namespace group_table_test
}  // namespace gpusched::inventory
