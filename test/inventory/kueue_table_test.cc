// Kueue's objects kept by the inventory (inventory/kueue_table.h): a cluster read cold, or built
// watch event by event in any order, gives the same objects; a relist drops what it does not hold.
#include "gpusched/inventory/kueue_table.h"

#include <gtest/gtest.h>

namespace gpusched::inventory {
namespace kueue_table_test {

kueue::Workload W(std::string name, std::string rv) {
  return kueue::Workload{.namespace_name = "ml", .name = std::move(name), .resource_version = std::move(rv)};
}

TEST(KueueTable, ReadColdOrEventByEventInAnyOrderGivesTheSameObjects) {
  KueueTable cold;
  cold.Replace(kueue::Objects{.workloads = {W("a", "2"), W("b", "1")}, .flavors = {{.name = "gb200"}}});
  KueueTable events;
  events.Apply(KueueDelta{.upserts = {.flavors = {{.name = "gb200"}}}});
  events.Apply(KueueDelta{.upserts = {.workloads = {W("b", "1"), W("a", "1")}}});
  events.Apply(KueueDelta{.upserts = {.workloads = {W("a", "2"), W("gone", "1")}}});
  events.Apply(KueueDelta{.deleted_workloads = {"ml/gone"}});
  std::shared_ptr<const KueueState> x = cold.State(), y = events.State();
  ASSERT_EQ(x->workloads.size(), y->workloads.size());
  for (const auto& [key, w] : x->workloads) {
    ASSERT_NE(y->FindWorkload(key), nullptr) << key;
    EXPECT_EQ(y->FindWorkload(key)->resource_version, w.resource_version) << key;
  }
  EXPECT_EQ(y->flavors.size(), 1u);
  EXPECT_GT(y->version, x->version) << "every change is a new version";
}

TEST(KueueTable, ARelistOfOneKindDropsItsObjectsItDoesNotHoldAndKeepsTheOthers) {
  KueueTable t;
  t.Replace(kueue::Objects{.workloads = {W("a", "1"), W("b", "1")}, .flavors = {{.name = "gb200"}}});
  t.Apply(KueueDelta{.upserts = {.workloads = {W("b", "3")}}, .relisted = {.workloads = true}});
  std::shared_ptr<const KueueState> s = t.State();
  EXPECT_EQ(s->FindWorkload("ml/a"), nullptr);
  ASSERT_NE(s->FindWorkload("ml/b"), nullptr);
  EXPECT_EQ(s->FindWorkload("ml/b")->resource_version, "3");
  EXPECT_EQ(s->flavors.size(), 1u) << "flavors were not relisted";
}

}  // namespace kueue_table_test
}  // namespace gpusched::inventory
