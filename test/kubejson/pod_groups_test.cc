// Pod groups in Kubernetes JSON (kubejson/pod_groups.h): the group objects of the three gang APIs
// read from lists as kubectl prints them, the reference each kind of member makes to its group,
// and errors that name the field and the value.
#include "gpusched/kubejson/pod_groups.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpusched/kubejson/objects.h"

namespace gpusched::kubejson {
namespace pod_groups_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// `kubectl get podgroups.v1beta1.scheduling.k8s.io,workloads,podgroups.scheduling.x-k8s.io -A -o json`,
// and a Volcano PodGroup that is not gpusched's to read.
constexpr std::string_view kGroups = R"({"apiVersion":"v1","kind":"List","items":[
  {"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"train","namespace":"ml","uid":"g1"},
   "spec":{"schedulingPolicy":{"gang":{"minCount":4}},"schedulingConstraints":{"topology":[{"key":"nvidia.com/gpu.clique"}]}}},
  {"apiVersion":"scheduling.k8s.io/v1alpha2","kind":"PodGroup","metadata":{"name":"serve","namespace":"ml"},
   "spec":{"schedulingPolicy":{"basic":{}}}},
  {"apiVersion":"scheduling.k8s.io/v1alpha1","kind":"Workload","metadata":{"name":"job","namespace":"ml"},
   "spec":{"podGroups":[{"name":"workers","policy":{"gang":{"minCount":8}}},{"name":"launcher","policy":{"basic":{}}}]}},
  {"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"mpi","namespace":"hpc"},
   "spec":{"minMember":3,"scheduleTimeoutSeconds":60}},
  {"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"PodGroup","metadata":{"name":"vc","namespace":"ml"},
   "spec":{"minAvailable":2}}]})";

TEST(PodGroups, EachApisGroupsAreReadWithTheirCounts) {
  ClusterObjects out;
  ASSERT_TRUE(AppendClusterJson(kGroups, &out).ok());
  EXPECT_THAT(out.errors, IsEmpty());
  ASSERT_EQ(out.pod_groups.size(), 5u);
  EXPECT_EQ(out.pod_groups[0], (PodGroup{.api = GroupApi::kPodGroup, .namespace_name = "ml", .name = "train", .min_count = 4,
                                         .topology_key = "nvidia.com/gpu.clique"}));
  EXPECT_EQ(out.pod_groups[1], (PodGroup{.api = GroupApi::kPodGroup, .namespace_name = "ml", .name = "serve"}));
  EXPECT_FALSE(out.pod_groups[1].gang());
  EXPECT_EQ(out.pod_groups[2], (PodGroup{.api = GroupApi::kWorkload, .namespace_name = "ml", .name = "job/workers", .min_count = 8}));
  EXPECT_EQ(out.pod_groups[3], (PodGroup{.api = GroupApi::kWorkload, .namespace_name = "ml", .name = "job/launcher"}));
  EXPECT_EQ(out.pod_groups[4], (PodGroup{.api = GroupApi::kCoscheduling, .namespace_name = "hpc", .name = "mpi", .min_count = 3,
                                         .schedule_timeout_s = 60}));
  EXPECT_EQ(GroupKey(out.pod_groups[2]), "Workload/ml/job/workers");
}

TEST(PodGroups, ATypedListsItemsTakeItsVersion) {
  ClusterObjects out;
  ASSERT_TRUE(AppendClusterJson(R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroupList","items":[
      {"metadata":{"name":"a","namespace":"ml"},"spec":{"minMember":2}}]})",
                                &out)
                  .ok());
  ASSERT_EQ(out.pod_groups.size(), 1u);
  EXPECT_EQ(out.pod_groups[0].api, GroupApi::kCoscheduling);
  EXPECT_EQ(out.pod_groups[0].min_count, 2);
}

TEST(PodGroups, AnUnknownVersionOrAnImpossibleCountIsNamedAndTheOthersStay) {
  ClusterObjects out;
  ASSERT_TRUE(AppendClusterJson(R"({"kind":"List","items":[
      {"apiVersion":"scheduling.k8s.io/v1alpha9","kind":"PodGroup","metadata":{"name":"a","namespace":"ml"},"spec":{}},
      {"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"b","namespace":"ml"},
       "spec":{"schedulingPolicy":{"gang":{"minCount":0}}}},
      {"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"c","namespace":"ml"},"spec":{}},
      {"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"d","namespace":"ml"},
       "spec":{"minMember":"4"}},
      {"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"e","namespace":"ml"},
       "spec":{"minMember":2}}]})",
                                &out)
                  .ok());
  EXPECT_THAT(out.errors, ElementsAre(HasSubstr("items[0] (PodGroup).apiVersion: \"scheduling.k8s.io/v1alpha9\" is not one gpusched reads"),
                                      HasSubstr("items[1] (PodGroup).spec.schedulingPolicy.gang.minCount: 0 is not a positive count"),
                                      HasSubstr("items[2] (PodGroup).spec.schedulingPolicy: missing"),
                                      HasSubstr("items[3] (PodGroup).spec.minMember")));
  ASSERT_EQ(out.pod_groups.size(), 1u);
  EXPECT_EQ(out.pod_groups[0].name, "e");
}

// A pending member of each API, as the API server writes it.
std::string Member(std::string_view name, std::string_view spec_extra, std::string_view labels = "{}") {
  return fmt::format(R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"{0}","namespace":"ml","uid":"{0}","labels":{2}}},)"
                     R"("spec":{{"containers":[{{"name":"c","image":"i"}}]{1}}},"status":{{"phase":"Pending"}}}})",
                     name, spec_extra, labels);
}

TEST(PodGroups, AMemberNamesItsGroupInEachApi) {
  ClusterObjects out;
  for (const std::string& pod :
       {Member("a", R"(,"schedulingGroup":{"podGroupName":"train"})"),
        Member("b", R"(,"workloadRef":{"name":"job","podGroup":"workers","podGroupReplicaKey":"r1"})"),
        Member("c", "", R"({"scheduling.x-k8s.io/pod-group":"mpi"})"), Member("d", ""),
        Member("e", R"(,"schedulingGroup":{"podGroupName":7})")}) {
    ASSERT_TRUE(AppendClusterJson(pod, &out).ok()) << pod;
  }
  ASSERT_EQ(out.pods.size(), 5u);
  EXPECT_EQ(out.pods[0].group, (PodGroupRef{.api = GroupApi::kPodGroup, .name = "train"}));
  EXPECT_EQ(out.pods[1].group, (PodGroupRef{.api = GroupApi::kWorkload, .name = "job/workers", .replica = "r1"}));
  EXPECT_EQ(out.pods[2].group, (PodGroupRef{.api = GroupApi::kCoscheduling, .name = "mpi"}));
  EXPECT_EQ(out.pods[3].group, std::nullopt);
  EXPECT_EQ(out.pods[4].group, std::nullopt);
  EXPECT_THAT(out.pods[4].spec_error, HasSubstr("Pod.spec.schedulingGroup.podGroupName"));
}

}  // namespace pod_groups_test
}  // namespace gpusched::kubejson
