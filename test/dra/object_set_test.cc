// The typed DRA object set a source keeps: keyed by kind and namespace/name, changed by deltas,
// built into the state the allocator reads.
#include "gpusched/dra/object_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::dra {
namespace object_set_test {

using ::testing::ElementsAre;

DraObject Slice(std::string name, std::string version, std::string node = "n1") {
  ResourceSlice s{.name = name, .driver = "gpu.nvidia.com", .pool = node, .generation = 1, .slice_count = 1, .node_name = node};
  s.devices.push_back(Device{.name = "gpu-0"});
  return DraObject{.kind = ObjectKind::kResourceSlice, .key = name, .resource_version = std::move(version), .value = std::make_shared<const ResourceSlice>(std::move(s))};
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

DraObject TaintRule(std::string name, std::string version, std::string pool, std::string device, std::string effect) {
  DeviceTaintRule r{.name = name, .has_selector = true, .driver = "gpu.nvidia.com", .pool = std::move(pool), .device = std::move(device),
                    .taint = {.key = "gpu.nvidia.com/xid", .value = "79", .effect = std::move(effect)}};
  return DraObject{.kind = ObjectKind::kDeviceTaintRule, .key = name, .resource_version = std::move(version), .value = std::move(r)};
}

std::vector<DeviceTaint> TaintsOf(const ClusterState& state, std::string_view slice) {
  for (const auto& s : state.slices().all()) {
    if (s->slice().name == slice) return s->slice().devices[0].taints;
  }
  return {};
}

// As kube-scheduler's ListWithDeviceTaintRules: a rule's taint is on every device it selects, as
// if the driver had published it; a slice it does not touch stays the very same object, and a
// touched one keeps its copy (and its nodes their version) until the slice or the rules change.
TEST(DraObjectSet, DeviceTaintRulesAreMergedIntoTheDevicesTheySelect) {
  DraObjectSet set;
  set.Apply(DraDelta{.upserts = {Slice("s1", "1", "n1"), Slice("s2", "1", "n2"), TaintRule("xid", "1", "n1", "gpu-0", "NoSchedule")}});
  ClusterStatePtr first = set.Build();
  EXPECT_THAT(TaintsOf(*first, "s1"), ElementsAre(DeviceTaint{.key = "gpu.nvidia.com/xid", .value = "79", .effect = "NoSchedule"}));
  EXPECT_THAT(TaintsOf(*first, "s2"), ::testing::IsEmpty());
  set.Apply(DraDelta{.upserts = {Claim("c", "1")}});
  ClusterStatePtr second = set.Build(first.get());
  EXPECT_EQ(second->NodeVersion("n1"), first->NodeVersion("n1"));
  // A rule without a selector selects nothing; one without a pool selects the driver's devices.
  DraObject none = TaintRule("none", "1", "", "", "NoExecute");
  std::get<DeviceTaintRule>(none.value).has_selector = false;
  set.Apply(DraDelta{.upserts = {none, TaintRule("all", "1", "", "", "NoExecute")}});
  ClusterStatePtr third = set.Build(second.get());
  EXPECT_EQ(TaintsOf(*third, "s1").size(), 2u);
  EXPECT_EQ(TaintsOf(*third, "s2").size(), 1u);
  EXPECT_NE(third->NodeVersion("n2"), second->NodeVersion("n2"));
  // Rules deleted: the devices are as published again.
  set.Apply(DraDelta{.deletes = {{ObjectKind::kDeviceTaintRule, "xid"}, {ObjectKind::kDeviceTaintRule, "all"}}});
  EXPECT_THAT(TaintsOf(*set.Build(third.get()), "s1"), ::testing::IsEmpty());
}

// Which namespaces allow adminAccess decides verdicts: a change gives every node a new version.
TEST(DraObjectSet, NamespacesKnownGiveTheAdminAccessRuleAndItsChangesNewVersions) {
  DraObjectSet set;
  set.Apply(DraDelta{.upserts = {Slice("s1", "1", "n1")}});
  ClusterStatePtr none = set.Build();
  EXPECT_FALSE(none->admin_namespaces().has_value());  // not known: admission's rule alone
  auto ns = [](std::string version, bool admin) {
    return DraObject{.kind = ObjectKind::kNamespace, .key = "ml", .resource_version = std::move(version),
                     .value = NamespaceAccess{.name = "ml", .admin_access = admin}};
  };
  set.Apply(DraDelta{.upserts = {ns("1", false)}});
  ClusterStatePtr closed = set.Build(none.get());
  ASSERT_TRUE(closed->admin_namespaces().has_value());
  EXPECT_TRUE(closed->admin_namespaces()->empty());
  set.Apply(DraDelta{.upserts = {ns("2", true)}});
  ClusterStatePtr open = set.Build(closed.get());
  EXPECT_TRUE(open->admin_namespaces()->contains("ml"));
  EXPECT_NE(open->NodeVersion("n1"), closed->NodeVersion("n1"));
  set.Apply(DraDelta{.upserts = {Claim("c", "1")}});
  EXPECT_EQ(set.Build(open.get())->NodeVersion("n1"), open->NodeVersion("n1"));
}

DraObject ClassObject(std::string name, std::string version, std::string expression) {
  DeviceClass c{.name = name, .selectors = {std::move(expression)}};
  return DraObject{.kind = ObjectKind::kDeviceClass, .key = name, .resource_version = std::move(version), .value = std::move(c)};
}

TEST(DraNodeVersion, OnlyTheNodeWhoseDevicesAClaimTakesGetsANewVersion) {
  DraObjectSet set;
  set.Apply(DraDelta{.upserts = {Slice("s1", "1", "n1"), Slice("s2", "1", "n2"), Claim("c", "1")}});
  ClusterStatePtr first = set.Build();
  set.Apply(DraDelta{.upserts = {Claim("c", "2", true)}});  // allocated: gpu-0 of n1
  ClusterStatePtr second = set.Build(first.get());
  EXPECT_NE(second->NodeVersion("n1"), first->NodeVersion("n1"));
  EXPECT_EQ(second->NodeVersion("n2"), first->NodeVersion("n2"));
  EXPECT_EQ(second->NodeVersion("no-slices"), first->NodeVersion("no-slices"));
  // Freed again: n1 holds what it held first, but its version is new (versions are never reused).
  set.Apply(DraDelta{.upserts = {Claim("c", "3")}});
  ClusterStatePtr third = set.Build(second.get());
  EXPECT_NE(third->NodeVersion("n1"), first->NodeVersion("n1"));
  EXPECT_NE(third->NodeVersion("n1"), second->NodeVersion("n1"));
  EXPECT_EQ(third->NodeVersion("n2"), first->NodeVersion("n2"));
}

TEST(DraNodeVersion, AChangedSliceOrClassOrNoPreviousStateGivesNewVersions) {
  DraObjectSet set;
  set.Apply(DraDelta{.upserts = {Slice("s1", "1", "n1"), Slice("s2", "1", "n2"), ClassObject("gpu", "1", "true")}});
  ClusterStatePtr first = set.Build();
  EXPECT_NE(set.Build()->NodeVersion("n1"), first->NodeVersion("n1"));  // no previous: all new
  set.Apply(DraDelta{.upserts = {Slice("s2", "2", "n2")}});            // republished: another copy
  ClusterStatePtr second = set.Build(first.get());
  EXPECT_EQ(second->NodeVersion("n1"), first->NodeVersion("n1"));
  EXPECT_NE(second->NodeVersion("n2"), first->NodeVersion("n2"));
  set.Apply(DraDelta{.upserts = {ClassObject("gpu", "2", "false")}});  // a class: every node
  ClusterStatePtr third = set.Build(second.get());
  EXPECT_NE(third->NodeVersion("n1"), second->NodeVersion("n1"));
  EXPECT_NE(third->NodeVersion("n2"), second->NodeVersion("n2"));
  EXPECT_NE(third->NodeVersion("no-slices"), second->NodeVersion("no-slices"));
  EXPECT_NE(third->NodeVersion("n1"), 0u);
}

TEST(DraNodeVersion, AnOwnerModeClaimWriteKeepsTheVersionsOfNodesItDoesNotTouch) {
  DraObjectSet set;
  set.Apply(DraDelta{.upserts = {Slice("s1", "1", "n1"), Slice("s2", "1", "n2"), Claim("c", "1")}});
  ClusterStatePtr before = set.Build();
  ClusterStatePtr after = WithClaim(*before, std::get<ResourceClaim>(Claim("c", "2", true).value));
  EXPECT_NE(after->NodeVersion("n1"), before->NodeVersion("n1"));
  EXPECT_EQ(after->NodeVersion("n2"), before->NodeVersion("n2"));
  EXPECT_EQ(after->slices().all()[0]->shared(), before->slices().all()[0]->shared());  // one copy
}

}  // namespace object_set_test
}  // namespace gpusched::dra
