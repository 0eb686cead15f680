// Kueue's objects as the API server serves them (kubejson/kueue_objects.h): a Workload with quota
// reserved and a pending check (v1beta2, and the same in v1beta1), its pod sets' templates read
// as pods, partial admission's count, a flavor's node labels and tolerations, a ClusterQueue's
// checks per flavor; and errors that name the field and the value.
#include "gpusched/kubejson/kueue_objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace gpusched::kubejson {
namespace kueue_objects_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A Workload as `kubectl get workloads.kueue.x-k8s.io -o json` prints it: created by Kueue's
// job integration (ownerReferences, managedFields), quota reserved on flavor "gb200" with a
// partial admission of 3 of 4 workers, and gpusched's check still Pending.
std::string WorkloadJson(const std::string& api_version = "kueue.x-k8s.io/v1beta2") {
  return R"({"apiVersion":")" + api_version + R"(","kind":"Workload","metadata":{"name":"job-train-3f2a1","namespace":"ml",
  "uid":"0d6e3c52-7a5e-4b0e-9a39-3c1f2f0a8b11","resourceVersion":"48213","generation":1,
  "creationTimestamp":"2026-12-05T00:10:00Z","labels":{"kueue.x-k8s.io/job-uid":"7c1b"},
  "ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"train","uid":"7c1b","controller":true,"blockOwnerDeletion":true}],
  "managedFields":[{"manager":"kueue","operation":"Apply","apiVersion":")" + api_version + R"(","time":"2026-12-05T00:10:00Z",
    "fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:admission":{}}},"subresource":"status"}]},
 "spec":{"active":true,"queueName":"team-a","priority":100,"priorityClassSource":"kueue.x-k8s.io/workloadpriorityclass",
  "podSets":[{"name":"workers","count":4,"minCount":2,"template":{"metadata":{"labels":{"app":"train"}},
   "spec":{"restartPolicy":"Never","containers":[{"name":"w","image":"trainer:1","resources":{
     "requests":{"cpu":"8","memory":"64Gi","nvidia.com/gpu":"4"},"limits":{"nvidia.com/gpu":"4"}}}]}}}]},
 "status":{"conditions":[{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"Quota reserved in ClusterQueue gpu-cq",
   "lastTransitionTime":"2026-12-05T00:10:01Z","observedGeneration":1},
  {"type":"Admitted","status":"False","reason":"NoChecks","message":"The workload has not all checks ready","lastTransitionTime":"2026-12-05T00:10:01Z"}],
  "admission":{"clusterQueue":"gpu-cq","podSetAssignments":[{"name":"workers","flavors":{"cpu":"gb200","memory":"gb200",
   "nvidia.com/gpu":"gb200"},"resourceUsage":{"cpu":"24","memory":"192Gi","nvidia.com/gpu":"12"},"count":3,
   "delayedTopologyRequest":"Pending"}]},
  "admissionChecks":[{"name":"gpu-placement","state":"Pending","message":"","lastTransitionTime":"2026-12-05T00:10:01Z"},
   {"name":"provisioning","state":"Ready","message":"","lastTransitionTime":"2026-12-05T00:10:01Z","podSetUpdates":[{"name":"workers",
    "nodeSelector":{"pool":"b"},"tolerations":[{"key":"prov","operator":"Exists","effect":"NoSchedule"}]}]}]}})";
}

TEST(KueueObjects, AWorkloadsPodSetsAdmissionAndCheckAreRead) {
  for (const char* version : {"kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1"}) {
    rapidjson::Document d;
    ASSERT_TRUE(json::Parse(WorkloadJson(version), &d).ok());
    StatusOr<kueue::Workload> w = DecodeKueueWorkload(d, "Workload");
    ASSERT_TRUE(w.ok()) << w.status().message();
    EXPECT_EQ(w->api_version, version);
    EXPECT_EQ(w->namespace_name + "/" + w->name, "ml/job-train-3f2a1");
    EXPECT_EQ(w->resource_version, "48213");
    EXPECT_EQ(w->priority, 100);
    EXPECT_TRUE(w->quota_reserved);
    EXPECT_FALSE(w->admitted);
    EXPECT_EQ(w->cluster_queue, "gpu-cq");
    ASSERT_EQ(w->pod_sets.size(), 1u);
    EXPECT_EQ(w->pod_sets[0].count, 4);
    EXPECT_EQ(w->AdmittedCount(0), 3) << "partial admission's count, not the spec's";
    const Pod& p = w->pod_sets[0].prototype;
    EXPECT_EQ(p.namespace_name, "ml");
    EXPECT_TRUE(p.spec_error.empty()) << p.spec_error;
    ASSERT_EQ(p.containers.size(), 1u);
    EXPECT_EQ(p.containers[0].requests.nvidia_gpus, 4);
    EXPECT_EQ(p.labels.at("app"), "train");
    ASSERT_EQ(w->assignments.size(), 1u);
    EXPECT_EQ(w->assignments[0].flavors.at("nvidia.com/gpu"), "gb200");
    EXPECT_FALSE(w->assignments[0].topology_assigned);
    EXPECT_TRUE(w->assignments[0].topology_delayed) << "delayedTopologyRequest: Pending";
    ASSERT_NE(w->FindCheck("gpu-placement"), nullptr);
    EXPECT_EQ(w->FindCheck("gpu-placement")->state, kueue::CheckState::kPending);
    ASSERT_NE(w->FindCheck("provisioning"), nullptr);
    ASSERT_EQ(w->FindCheck("provisioning")->updates.size(), 1u);
    EXPECT_EQ(w->FindCheck("provisioning")->updates[0].node_selector.at("pool"), "b");
    EXPECT_EQ(w->FindCheck("provisioning")->updates[0].tolerations.size(), 1u);
  }
}

// Kueue's topology scheduling: the domains of a topologyAssignment, in v1beta2's slices (Kueue
// 0.19: values universal or individual with prefix and suffix, counts universal or individual)
// and v1beta1's domains, each as the node labels of its levels and its count of pods.
TEST(KueueObjects, ATopologyAssignmentsDomainsAreReadInBothVersions) {
  auto domains = [](const std::string& api_version, const std::string& topology) {
    std::string text = WorkloadJson(api_version);
    text.replace(text.find(R"("count":3,)"), 10, R"("count":3,"topologyAssignment":)" + topology + ",");
    rapidjson::Document d;
    EXPECT_TRUE(json::Parse(text, &d).ok()) << text;
    StatusOr<kueue::Workload> w = DecodeKueueWorkload(d, "Workload");
    EXPECT_TRUE(w.ok()) << w.status().message();
    std::vector<std::string> out;
    for (const kueue::TopologyDomain& t : w.ok() ? w->assignments[0].topology : std::vector<kueue::TopologyDomain>{}) {
      std::string labels;
      for (const auto& [k, v] : t.node_labels) labels += k + "=" + v + ",";
      out.push_back(labels + std::to_string(t.count));
    }
    return out;
  };
  EXPECT_THAT(domains("kueue.x-k8s.io/v1beta2",
                      R"({"levels":["rack","kubernetes.io/hostname"],"slices":[{"domainCount":2,"valuesPerLevel":[{"universal":"r1"},)"
                      R"({"individual":{"prefix":"gb-","suffix":"-x","roots":["1","2"]}}],"podCounts":{"individual":[2,1]}}]})"),
              ElementsAre("kubernetes.io/hostname=gb-1-x,rack=r1,2", "kubernetes.io/hostname=gb-2-x,rack=r1,1"));
  EXPECT_THAT(domains("kueue.x-k8s.io/v1beta1", R"({"levels":["kubernetes.io/hostname"],"domains":[{"values":["g1"],"count":3}]})"),
              ElementsAre("kubernetes.io/hostname=g1,3"));
}

TEST(KueueObjects, AFlavorsNodeLabelsAndTolerationsAreRead) {
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"gb200",
    "uid":"f1","resourceVersion":"7"},"spec":{"nodeLabels":{"nvidia.com/gpu.product":"NVIDIA-GB200"},
    "nodeTaints":[{"key":"gpu","value":"true","effect":"NoSchedule"}],
    "tolerations":[{"key":"gpu","operator":"Equal","value":"true","effect":"NoSchedule"}]}})", &d).ok());
  StatusOr<kueue::ResourceFlavor> f = DecodeResourceFlavor(d, "ResourceFlavor");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->node_labels.at("nvidia.com/gpu.product"), "NVIDIA-GB200");
  EXPECT_THAT(f->tolerations, ElementsAre(Toleration{.key = "gpu", .op = "Equal", .value = "true", .effect = "NoSchedule"}));
}

TEST(KueueObjects, AClusterQueuesChecksAreReadWithTheFlavorsTheyApplyTo) {
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"gpu-cq"},
    "spec":{"admissionChecksStrategy":{"admissionChecks":[{"name":"gpu-placement","onFlavors":["gb200"]},{"name":"prov"}]}}})", &d).ok());
  StatusOr<kueue::ClusterQueue> q = DecodeClusterQueue(d, "ClusterQueue");
  ASSERT_TRUE(q.ok()) << q.status().message();
  ASSERT_EQ(q->checks.size(), 2u);
  EXPECT_EQ(q->checks[0].name, "gpu-placement");
  EXPECT_THAT(q->checks[0].on_flavors, ElementsAre("gb200"));
  EXPECT_TRUE(q->checks[1].on_flavors.empty());
  rapidjson::Document c;
  ASSERT_TRUE(json::Parse(R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"AdmissionCheck","metadata":{"name":"gpu-placement"},
    "spec":{"controllerName":"gpusched.io/gpu-placement"}})", &c).ok());
  StatusOr<kueue::AdmissionCheck> check = DecodeAdmissionCheck(c, "AdmissionCheck");
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->controller_name, "gpusched.io/gpu-placement");
}

TEST(KueueObjects, ErrorsNameTheFieldAndTheValue) {
  auto error = [](std::string text) {
    rapidjson::Document d;
    EXPECT_TRUE(json::Parse(text, &d).ok()) << text;
    StatusOr<kueue::Workload> w = DecodeKueueWorkload(d, "Workload");
    return w.ok() ? std::string("ok") : std::string(w.status().message());
  };
  std::string base = WorkloadJson();
  std::string bad_count = base;
  bad_count.replace(bad_count.find(R"("count":4)"), 9, R"("count":-1)");
  EXPECT_THAT(error(bad_count), HasSubstr("Workload ml/job-train-3f2a1.spec.podSets[0].count: -1 is not a 32-bit count"));
  std::string bad_state = base;
  bad_state.replace(bad_state.find(R"("state":"Pending")"), 17, R"("state":"Waiting")");
  EXPECT_THAT(error(bad_state), HasSubstr("status.admissionChecks[0].state: \"Waiting\" is not a check state"));
  std::string no_template = base;
  no_template.replace(no_template.find(R"("template")"), 10, R"("tmpl")");
  EXPECT_THAT(error(no_template), HasSubstr("spec.podSets[0].template: missing"));
  // A GPU quantity no pod could carry stays on the prototype as its spec_error, as for a pod.
  std::string half = base;
  half.replace(half.find(R"("nvidia.com/gpu":"4"},"limits")"), 20, R"("nvidia.com/gpu":"1.5")");
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(half, &d).ok());
  StatusOr<kueue::Workload> w = DecodeKueueWorkload(d, "Workload");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_THAT(w->pod_sets[0].prototype.spec_error, HasSubstr("1.5"));
}

}  // namespace kueue_objects_test
}  // namespace gpusched::kubejson
