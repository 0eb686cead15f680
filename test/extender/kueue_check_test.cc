// gpusched's Kueue admission check judged (extender/kueue_check.h) on Workloads shaped as Kueue
// serves them: aggregate quota that no node can honour (kueue #4329) is Retry until a node
// drains, shares split over GPUs (mGPU) are Retry, a pod no empty node could hold is Rejected but
// a cordoned node that could is not, the flavor's node labels confine the plan, and partial
// admission's count is what is planned.
#include "gpusched/extender/kueue_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/kueue_objects.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace kueue_check_test {

using ::testing::HasSubstr;
using testing::ListJson;
using testing::NvidiaNode;
using testing::PodJson;
using testing::WholeGpus;

// One pod set of a Workload: its name, count, and one container's resources as JSON.
struct PodSetJson {
  std::string name = "workers";
  int count = 1;
  std::string resources;  // e.g. {"nvidia.com/gpu":"8"}
  std::optional<int> admitted;  // podSetAssignments[].count (partial admission)
  std::string spec;             // the template's whole spec, JSON, instead of one container of `resources`
  std::string topology;         // podSetAssignments[].topologyAssignment, JSON (Kueue's TAS)
};

// A Workload of `sets` with quota reserved on flavor "default" (v1beta2, as Kueue 0.19 serves it).
kueue::Workload Workload(const std::vector<PodSetJson>& sets, const std::string& flavor = "default") {
  std::string specs, assignments;
  for (const PodSetJson& s : sets) {
    std::string spec = !s.spec.empty() ? s.spec
                                       : fmt::format(R"({{"containers":[{{"name":"c","image":"x","resources":{{"requests":{},"limits":{}}}}}]}})",
                                                     s.resources, s.resources);
    specs += fmt::format(R"({}{{"name":"{}","count":{},"template":{{"spec":{}}}}})", specs.empty() ? "" : ",", s.name, s.count, spec);
    assignments += fmt::format(R"({}{{"name":"{}","flavors":{{"nvidia.com/gpu":"{}"}}{}{}}})", assignments.empty() ? "" : ",", s.name,
                               flavor, s.admitted ? fmt::format(R"(,"count":{})", *s.admitted) : "",
                               s.topology.empty() ? "" : R"(,"topologyAssignment":)" + s.topology);
  }
  std::string text = fmt::format(
      R"({{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{{"name":"job","namespace":"ml","uid":"w1",)"
      R"("resourceVersion":"5"}},"spec":{{"queueName":"q","podSets":[{}]}},"status":{{"conditions":[{{"type":"QuotaReserved",)"
      R"("status":"True","reason":"QuotaReserved","message":"","lastTransitionTime":"2026-12-05T00:00:00Z"}}],)"
      R"("admission":{{"clusterQueue":"cq","podSetAssignments":[{}]}},"admissionChecks":[{{"name":"gpu-placement",)"
      R"("state":"Pending","message":"","lastTransitionTime":"2026-12-05T00:00:00Z"}}]}}}})",
      specs, assignments);
  rapidjson::Document d;
  EXPECT_TRUE(json::Parse(text, &d).ok()) << text;
  StatusOr<kueue::Workload> w = kubejson::DecodeKueueWorkload(d, "Workload");
  EXPECT_TRUE(w.ok()) << w.status().message();
  return w.ok() ? *w : kueue::Workload{};
}

// A running pod holding `gpus` whole GPUs on `node`.
std::string Busy(const std::string& name, const std::string& node, int gpus) {
  return PodJson{.name = name, .uid = name, .node = node, .phase = "Running", .containers = {WholeGpus("c", gpus)}}.ToJson();
}

class KueueCheck : public ::testing::Test {
 protected:
  void Load(const std::vector<std::string>& items) {
    ClusterObjects objects;
    ASSERT_TRUE(kubejson::AppendClusterJson(ListJson(items), &objects).ok());
    inventory_.ReplaceCluster(std::move(objects));
  }
  // Judged with `flavors`, and the claim templates the cluster loaded.
  WorkloadVerdict Judge(const kueue::Workload& w, const KueueFlavors& flavors = {{"default", {.name = "default"}}}) {
    snapshot_ = inventory_.Snapshot();
    inventory::KueueState kueue = *inventory_.kueue().State();
    kueue.flavors = flavors;
    return JudgeWorkload(w, kueue, EvaluationInputs{.snapshot = snapshot_.get(), .options = &options_, .programs = &programs_});
  }
  inventory::Inventory inventory_;
  std::shared_ptr<const inventory::InventorySnapshot> snapshot_;
  ServiceOptions options_;
  dra::cel::ProgramCache programs_;
};

// kueue #4329: 8 GPUs free as 4 + 4 on two nodes; Kueue's aggregate quota admits a pod that asks
// 8 on one node. The check says Retry, in explain's words; once a node drains, Ready on it.
TEST_F(KueueCheck, EightGpusFreeAsFourAndFourIsRetryUntilANodeDrains) {
  std::vector<std::string> items = {NvidiaNode("g1", 8).ToJson(), NvidiaNode("g2", 8).ToJson(), Busy("b1", "g1", 4), Busy("b2", "g2", 4)};
  Load(items);
  kueue::Workload w = Workload({{.resources = R"({"nvidia.com/gpu":"8"})"}});
  WorkloadVerdict v = Judge(w);
  EXPECT_EQ(v.state, kueue::CheckState::kRetry) << v.message;
  EXPECT_THAT(v.message, HasSubstr("job-workers-0 fits on 0 of 2 nodes: insufficient nvidia.com/gpu: pod needs 8, node has 4 of 8 free (2 nodes: g1, g2)"));
  items.pop_back();  // b2 finished: g2 drained
  Load(items);
  v = Judge(w);
  ASSERT_EQ(v.state, kueue::CheckState::kReady) << v.message;
  ASSERT_EQ(v.plan.slots.size(), 1u);
  EXPECT_EQ(v.plan.slots[0].node, "g2");
  EXPECT_EQ(v.plan.slots[0].pod_uid, "kueue/ml/job/workers/0");
  EXPECT_EQ(v.message, "1 pod fit on 1 node: g2 (1)");
}

// mGPU: four pods of 60% core each; six one-GPU nodes with 40% free each add up to 240%, as
// much as the pods ask, which is all Kueue's quota counts. No GPU holds one pod: Retry.
TEST_F(KueueCheck, SharesSplitFortyFortyFortyAreRetryThoughTheyAddUp) {
  std::vector<std::string> items;
  for (int i = 0; i < 6; ++i) {
    std::string node = fmt::format("m{}", i);
    items.push_back(testing::MgpuNode(node, 1, 24576).ToJson());
    items.push_back(PodJson{.name = "busy" + node, .uid = "busy" + node, .node = node, .phase = "Running",
                            .containers = {testing::Mgpu("s", 60, 4096)},
                            .annotations = {{"vke.volcengine.com/gpu-index-container-s", "0"}}}
                        .ToJson());
  }
  Load(items);
  WorkloadVerdict v = Judge(Workload({{.count = 4, .resources = R"({"vke.volcengine.com/mgpu-core":"60","vke.volcengine.com/mgpu-memory":"4096"})"}}));
  EXPECT_EQ(v.state, kueue::CheckState::kRetry) << v.message;
  EXPECT_THAT(v.message, HasSubstr("fits on 0 of 6 nodes: GPU 0: 40% core free, needs 60% (6 nodes: m0, m1, m2, ...)"));
}

// A 16-GPU pod on 8-GPU nodes: no node could ever hold it: Rejected. A cordoned 16-GPU node could,
// once uncordoned: Retry, never Rejected.
TEST_F(KueueCheck, APodNoEmptyNodeHoldsIsRejectedButACordonedNodeThatCouldIsNot) {
  kueue::Workload w = Workload({{.resources = R"({"nvidia.com/gpu":"16"})"}});
  Load({NvidiaNode("g1", 8).ToJson()});
  WorkloadVerdict v = Judge(w);
  EXPECT_EQ(v.state, kueue::CheckState::kRejected) << v.message;
  EXPECT_THAT(v.message, HasSubstr("pod set workers: its pods fit no node even with every node empty"));
  options_.kueue_reject_unplaceable = false;  // node pools that scale to zero: a larger node may come
  EXPECT_EQ(Judge(w).state, kueue::CheckState::kRetry);
  options_.kueue_reject_unplaceable = true;
  testing::NodeJson big = NvidiaNode("g16", 16);
  big.spec_extra = R"("unschedulable":true,"taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}])";
  Load({NvidiaNode("g1", 8).ToJson(), big.ToJson()});
  v = Judge(w);
  EXPECT_EQ(v.state, kueue::CheckState::kRetry) << v.message;
}

// The flavor's node labels confine the pods: pool a is busy, pool b free; a flavor of pool a
// cannot be placed on b.
TEST_F(KueueCheck, TheFlavorsNodeLabelsConfineThePlan) {
  testing::NodeJson a = NvidiaNode("a1", 4), b = NvidiaNode("b1", 4);
  a.extra_labels["pool"] = "a";
  b.extra_labels["pool"] = "b";
  Load({a.ToJson(), b.ToJson(), Busy("x", "a1", 2)});
  kueue::Workload w = Workload({{.resources = R"({"nvidia.com/gpu":"4"})"}}, "pool-a");
  KueueFlavors flavors = {{"pool-a", {.name = "pool-a", .node_labels = {{"pool", "a"}}}}};
  EXPECT_EQ(Judge(w, flavors).state, kueue::CheckState::kRetry);
  flavors["pool-a"].node_labels["pool"] = "b";
  WorkloadVerdict v = Judge(w, flavors);
  ASSERT_EQ(v.state, kueue::CheckState::kReady) << v.message;
  EXPECT_EQ(v.plan.slots[0].node, "b1");
  EXPECT_EQ(Judge(w, {}).state, kueue::CheckState::kPending) << "a flavor not read yet: nothing decided";
  EXPECT_THAT(Judge(w, {}).message, HasSubstr("ResourceFlavor \"pool-a\" is not known"));
}

// Kueue's topology scheduling assigned both pods to g2's host: Kueue's node selector will send
// them there, so the plan must put them there. g2 has room for one; g1 for both: Retry, where a
// plan ignoring the assignment would say Ready on g1.
TEST_F(KueueCheck, PodsGoToTheDomainsKueuesTopologySchedulingAssigned) {
  Load({NvidiaNode("g1", 8).ToJson(), NvidiaNode("g2", 8).ToJson(), Busy("b2", "g2", 4)});
  std::string to_g2 = R"({"levels":["kubernetes.io/hostname"],"slices":[{"domainCount":1,"valuesPerLevel":[{"universal":"g2"}],)"
                      R"("podCounts":{"universal":2}}]})";
  WorkloadVerdict v = Judge(Workload({{.count = 2, .resources = R"({"nvidia.com/gpu":"4"})", .topology = to_g2}}));
  EXPECT_EQ(v.state, kueue::CheckState::kRetry) << v.message;
  std::string split = R"({"levels":["kubernetes.io/hostname"],"domains":[{"values":["g1"],"count":1},{"values":["g2"],"count":1}]})";
  v = Judge(Workload({{.count = 2, .resources = R"({"nvidia.com/gpu":"4"})", .topology = split}}));
  ASSERT_EQ(v.state, kueue::CheckState::kReady) << v.message;
  EXPECT_EQ(v.plan.slots[0].node, "g1");
  EXPECT_EQ(v.plan.slots[1].node, "g2");
}

// While clique A is kept for gang ml/train, which waits (topology.reserveForGangs), filter keeps
// the Workload's pods (priority 0, outside the gang) off A's nodes. Kueue's topology scheduling
// assigned the pod to a2's host: it would wait there, so Retry, where the plan ignoring the kept
// clique said Ready on a2. Assigned to b1 (in clique B, 4 GPUs free), Ready.
TEST_F(KueueCheck, APodAssignedToTheCliqueKeptForAWaitingGangIsRetry) {
  std::vector<std::string> items = testing::CliqueNodes({"a1", "a2", "b1", "b2"}, 8);
  items.push_back(Busy("x1", "b1", 4));
  items.push_back(Busy("x2", "b2", 4));
  for (std::string& gang : testing::GangJson("ml", "train", 2, 2, 8)) items.push_back(std::move(gang));
  Load(items);
  auto on = [](const std::string& host) {
    return fmt::format(R"({{"levels":["kubernetes.io/hostname"],"slices":[{{"domainCount":1,"valuesPerLevel":[{{"universal":"{}"}}],)"
                       R"("podCounts":{{"universal":1}}}}]}})",
                       host);
  };
  WorkloadVerdict v = Judge(Workload({{.resources = R"({"nvidia.com/gpu":"4"})", .topology = on("a2")}}));
  EXPECT_EQ(v.state, kueue::CheckState::kRetry) << v.message;
  EXPECT_THAT(v.message, HasSubstr("kept for gang ml/train"));
  v = Judge(Workload({{.resources = R"({"nvidia.com/gpu":"4"})", .topology = on("b1")}}));
  ASSERT_EQ(v.state, kueue::CheckState::kReady) << v.message;
  EXPECT_EQ(v.plan.slots[0].node, "b1");
}

// Another check that is Ready (a ProvisioningRequest's, say) sends the pods to pool b through its
// podSetUpdates: the plan puts them there too.
TEST_F(KueueCheck, AnotherReadyChecksNodeSelectorConfinesThePlan) {
  testing::NodeJson a = NvidiaNode("a1", 8), b = NvidiaNode("b1", 8);
  a.extra_labels["pool"] = "a";
  b.extra_labels["pool"] = "b";
  Load({a.ToJson(), b.ToJson(), Busy("x", "b1", 6)});
  kueue::Workload w = Workload({{.resources = R"({"nvidia.com/gpu":"4"})"}});
  EXPECT_EQ(Judge(w).state, kueue::CheckState::kReady);
  w.checks.push_back(kueue::CheckStatus{.name = "provisioning", .state = kueue::CheckState::kReady,
                                        .updates = {{.name = "workers", .node_selector = {{"pool", "b"}}}}});
  EXPECT_EQ(Judge(w).state, kueue::CheckState::kRetry) << "pool b has 2 GPUs free";
}

// Kueue's topology scheduling assigns the domains in a second pass (delayedTopologyRequest
// Pending): the pods will go where Kueue sends them, so Ready says they can be placed, and the
// plan is not to be held.
TEST_F(KueueCheck, APlanBeforeKueuesDelayedTopologyAssignmentIsNotHeld) {
  Load({NvidiaNode("g1", 8).ToJson()});
  kueue::Workload w = Workload({{.resources = R"({"nvidia.com/gpu":"4"})"}});
  EXPECT_TRUE(Judge(w).holdable);
  w.assignments[0].topology_delayed = true;
  WorkloadVerdict v = Judge(w);
  EXPECT_EQ(v.state, kueue::CheckState::kReady) << v.message;
  EXPECT_FALSE(v.holdable);
}

// Partial admission: 4 workers asked, 2 admitted; two fit, four would not.
TEST_F(KueueCheck, PartialAdmissionsCountIsWhatIsPlanned) {
  Load({NvidiaNode("g1", 8).ToJson()});
  WorkloadVerdict all = Judge(Workload({{.count = 4, .resources = R"({"nvidia.com/gpu":"4"})"}}));
  EXPECT_EQ(all.state, kueue::CheckState::kRetry) << all.message;
  EXPECT_EQ(all.message, "2 of 4 pods fit together; job-workers-2 fits alone, not beside the pods planned before it");
  WorkloadVerdict part = Judge(Workload({{.count = 4, .resources = R"({"nvidia.com/gpu":"4"})", .admitted = 2}}));
  EXPECT_EQ(part.state, kueue::CheckState::kReady) << part.message;
  EXPECT_EQ(part.pods.size(), 2u);
}

// kueue PR #15577: 3 replicas, each needing one GPU through a ResourceClaimTemplate; one node with
// 2 such devices and nothing else: Retry (a Kueue counting per node would have placed all three
// there). With a second node: Ready, the plan across both.
TEST_F(KueueCheck, ThreeReplicasOfOneDeviceOnANodeWithTwoAreRetryUntilASecondNodeComes) {
  std::string tmpl = R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate","metadata":{"name":"one-gpu","namespace":"ml",)"
                     R"("uid":"t1"},"spec":{"spec":)" + testing::ClaimSpec(1, "") + "}}";
  std::string spec = R"({"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}],"containers":[{"name":"c","image":"x",)"
                     R"("resources":{"claims":[{"name":"gpu"}]}}]})";
  kueue::Workload w = Workload({{.name = "replicas", .count = 3, .spec = spec}});
  std::vector<std::string> items = {testing::DraNode("d1"), testing::GpuSlice("d1", 2), std::string(testing::kGpuClass), tmpl};
  Load(items);
  WorkloadVerdict v = Judge(w);
  EXPECT_EQ(v.state, kueue::CheckState::kRetry) << v.message;
  EXPECT_THAT(v.message, HasSubstr("2 of 3 pods fit together")) << v.message;
  items.push_back(testing::DraNode("d2"));
  items.push_back(testing::GpuSlice("d2", 2));
  Load(items);
  v = Judge(w);
  ASSERT_EQ(v.state, kueue::CheckState::kReady) << v.message;
  std::set<std::string> nodes;
  for (const placement::GangSlot& slot : v.plan.slots) nodes.insert(slot.node);
  EXPECT_EQ(nodes, (std::set<std::string>{"d1", "d2"}));
}

// A claim template that is not known (the check acts once its watches listed: it does not
// exist, or cannot be read) is Retry with the reason, never Rejected.
TEST_F(KueueCheck, AClaimTemplateNotKnownIsRetryWithTheReason) {
  Load({testing::DraNode("d1"), testing::GpuSlice("d1", 2), std::string(testing::kGpuClass)});
  std::string spec = R"({"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"one-gpu"}],"containers":[{"name":"c","image":"x",)"
                     R"("resources":{"claims":[{"name":"gpu"}]}}]})";
  WorkloadVerdict v = Judge(Workload({{.name = "replicas", .count = 1, .spec = spec}}));
  EXPECT_EQ(v.state, kueue::CheckState::kRetry) << v.message;
  EXPECT_THAT(v.message, HasSubstr("ResourceClaimTemplate ml/one-gpu is not known"));
}

// Taints come and go (pressure, maintenance, an autoscaler's mark): a 16-GPU pod that only a
// tainted 16-GPU node could hold is Retry, never Rejected; nor while some node's GPUs cannot be
// judged (its description unreadable).
TEST_F(KueueCheck, ATaintedOrUnreadableNodeThatCouldHoldThePodNeverLeadsToRejected) {
  kueue::Workload w = Workload({{.resources = R"({"nvidia.com/gpu":"16"})"}});
  testing::NodeJson big = NvidiaNode("g16", 16);
  big.spec_extra = R"("taints":[{"key":"nvidia.com/gpu-maintenance","value":"true","effect":"NoSchedule"}])";
  Load({NvidiaNode("g1", 8).ToJson(), big.ToJson()});
  EXPECT_EQ(Judge(w).state, kueue::CheckState::kRetry);
  testing::NodeJson broken = NvidiaNode("g2", 8);
  broken.extra_annotations["gpusched.io/holds"] = "not json";
  Load({NvidiaNode("g1", 8).ToJson(), broken.ToJson()});
  WorkloadVerdict v = Judge(w);
  EXPECT_EQ(v.state, kueue::CheckState::kRetry) << v.message;
}

}  // namespace kueue_check_test
}  // namespace gpusched::extender
