// The typed DRA object set a source keeps: keyed by kind and namespace/name, changed by deltas,
// built into the state the allocator reads.
#include "gpusched/dra/object_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::dra {
namespace {

using ::testing::ElementsAre;

DraObject Slice(std::string name, std::string version, std::string node = "n1") {
  ResourceSlice s{.name = name, .driver = "gpu.nvidia.com", .pool = node, .generation = 1, .slice_count = 1, .node_name = node};
  s.devices.push_back(Device{.name = "gpu-0"});
  return DraObject{.kind = ObjectKind::kResourceSlice, .key = name, .resource_version = std::move(version), .value = std::move(s)};
}

DraObject Claim(std::string name, std::string version, bool allocated = false) {
  ResourceClaim c{.namespace_name = "ml", .name = name, .resource_version = version};
  if (allocated) {
    c.allocation = AllocationResult{.results = {DeviceResult{.request = "gpus", .id = {"gpu.nvidia.com", "n1", "gpu-0"}}}};
  }
  return DraObject{.kind = ObjectKind::kResourceClaim, .key = "ml/" + name, .resource_version = std::move(version), .value = std::move(c)};
}

TEST(DraObjectSet, AnUpsertWithTheVersionHeldChangesNothing) {
  DraObjectSet set;
  EXPECT_TRUE(set.Apply(DraDelta{.upserts = {Slice("s1", "5"), Claim("c", "7")}}));
  EXPECT_FALSE(set.Apply(DraDelta{.upserts = {Slice("s1", "5")}}));
  EXPECT_TRUE(set.Apply(DraDelta{.upserts = {Claim("c", "8", true)}}));
  ClusterStatePtr state = set.Build();
  EXPECT_EQ(state->Holder(DeviceId{"gpu.nvidia.com", "n1", "gpu-0"}), "ml/c");
  EXPECT_EQ(state->FindClaim("ml", "c")->resource_version, "8");
}

TEST(DraObjectSet, DeletesAndRelistsRemoveWhatTheyNoLongerHold) {
  DraObjectSet set;
  set.Apply(DraDelta{.upserts = {Slice("s1", "1"), Slice("s2", "1", "n2"), Claim("c", "1")}});
  EXPECT_TRUE(set.Apply(DraDelta{.deletes = {{ObjectKind::kResourceSlice, "s2"}}}));
  EXPECT_FALSE(set.Apply(DraDelta{.deletes = {{ObjectKind::kResourceSlice, "s2"}}}));
  // A relist of slices holds s3 only: s1 goes, the claim (another kind) stays.
  EXPECT_TRUE(set.Apply(DraDelta{.upserts = {Slice("s3", "1", "n3")}, .relisted = {ObjectKind::kResourceSlice}}));
  ClusterStatePtr state = set.Build();
  std::vector<std::string> slices;
  for (const auto& s : state->slices().all()) slices.push_back(s->slice().name);
  EXPECT_THAT(slices, ElementsAre("s3"));
  EXPECT_NE(state->FindClaim("ml", "c"), nullptr);
  EXPECT_EQ(set.size(), 2u);
}

TEST(DraObjectSet, AnUnreadableObjectIsHeldAsItsErrorUntilAGoodCopyReplacesIt) {
  DraObjectSet set;
  set.Apply(DraDelta{.upserts = {DraObject{.kind = ObjectKind::kResourceSlice, .key = "bad", .resource_version = "3",
                                           .error = "ResourceSlice bad.spec.devices[0].capacity[\"memory\"].value: \"12 apples\""}}});
  EXPECT_THAT(set.Build()->errors(), ElementsAre(::testing::HasSubstr("12 apples")));
  set.Apply(DraDelta{.upserts = {Slice("bad", "4")}});
  EXPECT_THAT(set.Build()->errors(), ::testing::IsEmpty());
  EXPECT_EQ(set.Build()->slices().all().size(), 1u);
}

TEST(DraObjectSet, WithClaimReplacesOneClaimAndKeepsTheRest) {
  DraObjectSet set;
  set.Apply(DraDelta{.upserts = {Slice("s1", "1"), Claim("c", "1"), Claim("d", "1")}});
  ClusterStatePtr before = set.Build();
  ClusterStatePtr after = WithClaim(*before, std::get<ResourceClaim>(Claim("c", "2", true).value));
  EXPECT_EQ(after->FindClaim("ml", "c")->resource_version, "2");
  EXPECT_EQ(after->FindClaim("ml", "d")->resource_version, "1");
  EXPECT_EQ(after->Holder(DeviceId{"gpu.nvidia.com", "n1", "gpu-0"}), "ml/c");
  EXPECT_EQ(before->Holder(DeviceId{"gpu.nvidia.com", "n1", "gpu-0"}), "");  // states are immutable
  EXPECT_EQ(after->slices().all().size(), 1u);
}

}  // namespace
}  // namespace gpusched::dra
