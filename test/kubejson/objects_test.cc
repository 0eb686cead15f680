#include "gpusched/kubejson/objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "gpusched/common/time_format.h"

namespace gpusched::kubejson {
namespace objects_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ContainerJson;
using testing::NodeJson;
using testing::PodJson;

StatusOr<Pod> PodFrom(const std::string& text) {
  rapidjson::Document doc;
  Status s = json::Parse(text, &doc);
  if (!s.ok()) return s;
  return DecodePod(doc, "Pod");
}

StatusOr<Node> NodeFrom(const std::string& text) {
  rapidjson::Document doc;
  Status s = json::Parse(text, &doc);
  if (!s.ok()) return s;
  return DecodeNode(doc, "Node");
}

TEST(K8sObjects, DecodesAPod) {
  PodJson p{.name = "train", .namespace_name = "ml", .uid = "u1", .node = "n1", .phase = "Running"};
  p.containers = {testing::WholeGpus("a", 2), testing::Mgpu("b", 30, 4096)};
  p.init_containers = {testing::WholeGpus("init", 1)};
  p.annotations = {{"vke.volcengine.com/gpu-index-container-b", "1"}, {"unrelated.io/x", "y"}};
  p.claims = {"gpu-claim"};
  StatusOr<Pod> pod = PodFrom(p.ToJson());
  ASSERT_TRUE(pod.ok()) << pod.status().ToString();
  EXPECT_EQ(pod->uid, "u1");
  EXPECT_EQ(pod->namespace_name, "ml");
  EXPECT_EQ(pod->node_name, "n1");
  EXPECT_EQ(pod->phase, PodPhase::kRunning);
  ASSERT_EQ(pod->containers.size(), 2u);
  EXPECT_EQ(pod->containers[0].limits.nvidia_gpus, 2);
  EXPECT_EQ(pod->containers[1].limits.mgpu_core_percent, 30);
  EXPECT_EQ(pod->containers[1].requests.mgpu_memory_mib, 4096);
  EXPECT_EQ(pod->init_containers[0].limits.nvidia_gpus, 1);
  EXPECT_EQ(pod->annotations.size(), 1u);  // only tracked annotations are kept
  ASSERT_EQ(pod->resource_claims.size(), 1u);
  EXPECT_EQ(pod->resource_claims[0], (PodClaimRef{.name = "gpu-claim", .claim_name = "gpu-claim"}));
}

// Returns the spec_error of the pod in `json` (which must decode).
std::string SpecError(const std::string& json) {
  StatusOr<Pod> pod = PodFrom(json);
  EXPECT_TRUE(pod.ok()) << pod.status().ToString();
  return pod.ok() ? pod->spec_error : "";
}

TEST(K8sObjects, ReadsCanonicalQuantitiesAsTheApiServerWritesThem) {
  PodJson p{.name = "x", .uid = "u"};
  p.containers = {ContainerJson{.name = "c",
                                .limits = {{"vke.volcengine.com/mgpu-core", "1k"}, {"vke.volcengine.com/mgpu-memory", "8k"}}},
                  ContainerJson{.name = "d", .limits = {{"nvidia.com/gpu", "2e0"}}}};
  StatusOr<Pod> pod = PodFrom(p.ToJson());
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->spec_error, "");
  EXPECT_EQ(pod->containers[0].limits.mgpu_core_percent, 1000);
  EXPECT_EQ(pod->containers[0].limits.mgpu_memory_mib, 8000);
  // "8k" is how the API server writes 8000: nothing to point out. "2e0" is not.
  EXPECT_TRUE(pod->containers[0].limits.spelling.empty());
  EXPECT_EQ(pod->containers[1].limits.spelling.at("nvidia.com/gpu"), "2e0");
  EXPECT_EQ(pod->containers[1].limits.nvidia_gpus, 2);
  // A JSON number is read as Quantity.UnmarshalJSON reads it.
  pod = PodFrom(R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":2}}}]}})");
  EXPECT_EQ(pod->containers[0].limits.nvidia_gpus, 2);
  EXPECT_TRUE(pod->containers[0].limits.spelling.empty());
  StatusOr<Node> node = NodeFrom(
      R"({"metadata":{"name":"m"},"status":{"allocatable":{"vke.volcengine.com/mgpu-core":"400","vke.volcengine.com/mgpu-memory":"96k"}}})");
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->spec_error, "");
  EXPECT_EQ(node->allocatable.mgpu_memory_mib, 96000);
}

TEST(K8sObjects, PodQuantityErrorsNameFieldValueAndUnit) {
  PodJson p{.name = "x", .uid = "u"};
  p.containers = {ContainerJson{.name = "c", .limits = {{"nvidia.com/gpu", "two"}}}};
  EXPECT_THAT(SpecError(p.ToJson()),
              HasSubstr("Pod.spec.containers[0].resources.limits[\"nvidia.com/gpu\"]: invalid quantity \"two\""));
  p.containers = {ContainerJson{.name = "c", .limits = {{"vke.volcengine.com/mgpu-memory", "1500m"}}}};
  EXPECT_THAT(SpecError(p.ToJson()),
              HasSubstr("limits[\"vke.volcengine.com/mgpu-memory\"]: invalid quantity \"1500m\": 1.5 is not a whole "
                        "number (vke.volcengine.com/mgpu-memory counts MiB; extended resources are integers)"));
  p.containers = {ContainerJson{.name = "c", .limits = {{"vke.volcengine.com/mgpu-core", "0.5"}}}};
  EXPECT_THAT(SpecError(p.ToJson()), HasSubstr("counts percent of one GPU"));
  EXPECT_THAT(SpecError(R"({"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":-2}}}]}})"),
              HasSubstr("\"-2\" is negative"));
  p.containers = {ContainerJson{.name = "c", .limits = {{"nvidia.com/gpu", "-1"}}}};
  EXPECT_THAT(SpecError(p.ToJson()), HasSubstr("\"-1\" is negative"));
}

TEST(K8sObjects, ReadsPriorityAndWhetherThePodIsTerminating) {
  StatusOr<Pod> p = PodFrom(R"({"metadata":{"name":"a","uid":"u","deletionTimestamp":"2026-12-01T00:00:00Z"},
    "spec":{"priority":1000000,"containers":[]}})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->priority, 1000000);
  EXPECT_TRUE(p->terminating);
  p = PodFrom(R"({"metadata":{"name":"b","uid":"v","deletionTimestamp":null},"spec":{"priority":-5}})");
  EXPECT_EQ(p->priority, -5);
  EXPECT_FALSE(p->terminating);
  EXPECT_EQ(PodFrom(R"({"metadata":{"name":"c","uid":"w"},"spec":{}})")->priority, 0);
  // Not an int32: the pod is marked, naming the field and the value.
  p = PodFrom(R"({"metadata":{"name":"d","uid":"x"},"spec":{"priority":"high"}})");
  EXPECT_THAT(p->spec_error, HasSubstr("Pod.spec.priority: \"high\" is not a 32-bit integer"));
  p = PodFrom(R"({"metadata":{"name":"e","uid":"y"},"spec":{"priority":4294967296}})");
  EXPECT_THAT(p->spec_error, HasSubstr("Pod.spec.priority: 4294967296 is not a 32-bit integer"));
}

// metadata.creationTimestamp, as the API server writes it (RFC 3339, whole seconds, UTC): when a
// gang started waiting for one domain (gang_domains.h).
TEST(K8sObjects, ReadsTheCreationTimestamp) {
  StatusOr<Pod> p = PodFrom(R"({"metadata":{"name":"a","uid":"u","creationTimestamp":"2026-12-04T10:00:00Z"},"spec":{}})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->created_ms, *ParseRfc3339("2026-12-04T10:00:00Z"));
  EXPECT_EQ(PodFrom(R"({"metadata":{"name":"b","uid":"v","creationTimestamp":null},"spec":{}})")->created_ms, 0);
  p = PodFrom(R"({"metadata":{"name":"c","uid":"w","creationTimestamp":"yesterday"},"spec":{}})");
  EXPECT_THAT(p->spec_error, HasSubstr("Pod.metadata.creationTimestamp: \"yesterday\" is not an RFC 3339 time"));
}

// What the pod asks of its node besides GPUs, as kube-scheduler's resource.PodRequests counts it:
// app containers and sidecars add up; a regular init container runs beside the sidecars declared
// before it; the larger wins; pod-level cpu/memory replace the containers'; overhead adds.
TEST(K8sObjects, EffectiveRequestsCountSidecarsInitPhasesPodLevelResourcesAndOverhead) {
  StatusOr<Pod> p = PodFrom(R"({"metadata":{"name":"a","uid":"u"},"spec":{
    "containers":[{"name":"app","resources":{"requests":{"cpu":"1","memory":"1Gi","vke.volcengine.com/mgpu-core":"30"}}}],
    "initContainers":[
      {"name":"sidecar","restartPolicy":"Always","resources":{"requests":{"cpu":"2","memory":"512Mi"}}},
      {"name":"setup","resources":{"limits":{"cpu":"5","example.com/fpga":"1"}}}],
    "overhead":{"cpu":"250m"}},
    "status":{"nominatedNodeName":"n7"}})");
  ASSERT_TRUE(p.ok());
  ResourceList r = EffectiveRequests(*p);
  // cpu: app + sidecar = 3; setup's phase 5 + 2 = 7 (its limit stands in for the request); +250m.
  EXPECT_EQ(r.Get("cpu"), 7250);
  EXPECT_EQ(r.Get("memory"), 1536LL << 20);  // 1Gi + 512Mi; setup's phase needs 512Mi
  EXPECT_EQ(r.Get("example.com/fpga"), 1);
  EXPECT_EQ(r.Get("vke.volcengine.com/mgpu-core"), 0);  // GPUs are the GPU rules' business
  EXPECT_EQ(p->nominated_node, "n7");
  // Pod-level resources replace the containers' cpu and memory.
  p = PodFrom(R"({"metadata":{"name":"b","uid":"v"},"spec":{"resources":{"requests":{"memory":"4Gi"}},
    "containers":[{"name":"app","resources":{"requests":{"cpu":"1500m","memory":"1Gi"}}}]}})");
  EXPECT_EQ(EffectiveRequests(*p).Get("memory"), 4LL << 30);
  EXPECT_EQ(EffectiveRequests(*p).Get("cpu"), 1500);
  // A node's allocatable besides GPUs, "pods" included; fractions round up as Quantity.Value().
  StatusOr<Node> n = NodeFrom(R"({"metadata":{"name":"n"},"status":{"allocatable":{"cpu":"63500m","memory":"1.5Ki",
    "pods":"110","nvidia.com/gpu":"8"}}})");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->other_allocatable.Get("cpu"), 63500);
  EXPECT_EQ(n->other_allocatable.Get("memory"), 1536);
  EXPECT_EQ(n->other_allocatable.Get("pods"), 110);
  EXPECT_EQ(n->other_allocatable.Get("nvidia.com/gpu"), 0);
  EXPECT_EQ(n->allocatable.nvidia_gpus, 8);
}

TEST(K8sObjects, ReadsAPodDisruptionBudgetAndMatchesItsSelector) {
  rapidjson::Document doc;
  // As the API server writes it: managedFields, generation, uid, resourceVersion.
  ASSERT_TRUE(json::Parse(R"({"metadata":{"name":"db","namespace":"ml","uid":"0b7e","resourceVersion":"4412","generation":3,
      "managedFields":[{"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"policy/v1",
        "time":"2026-11-30T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:minAvailable":{}}}},
        {"manager":"kube-controller-manager","operation":"Update","apiVersion":"policy/v1","time":"2026-11-30T10:00:01Z",
        "fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:disruptionsAllowed":{}}},"subresource":"status"}]},
      "spec":{"minAvailable":2,"selector":{
      "matchLabels":{"app":"db"},"matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]},
      {"key":"canary","operator":"DoesNotExist"}]}},
      "status":{"disruptionsAllowed":1,"disruptedPods":{"db-0":"2026-12-01T00:00:00Z"}}})", &doc).ok());
  StatusOr<DisruptionBudget> b = DecodeDisruptionBudget(doc, "PodDisruptionBudget");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->namespace_name, "ml");
  EXPECT_EQ(b->disruptions_allowed, 1);
  EXPECT_TRUE(b->disrupted_pods.contains("db-0"));
  EXPECT_TRUE(b->selector.Matches({{"app", "db"}, {"tier", "a"}}));
  EXPECT_FALSE(b->selector.Matches({{"app", "db"}, {"tier", "c"}}));
  EXPECT_FALSE(b->selector.Matches({{"app", "db"}, {"tier", "a"}, {"canary", "1"}}));
  // Counting as kube-scheduler does: db-0 is already disrupted; db-1 uses the one allowed; db-2
  // violates; a pod of another namespace is not covered.
  auto budgets = std::make_shared<const std::vector<DisruptionBudget>>(std::vector<DisruptionBudget>{*b});
  DisruptionCounter counter(budgets);
  PodLabels db{.namespace_name = "ml", .labels = {{"app", "db"}, {"tier", "b"}}};
  PodLabels elsewhere{.namespace_name = "other", .labels = db.labels};
  EXPECT_FALSE(counter.Evict("db-0", &db));
  EXPECT_FALSE(counter.Evict("db-1", &db));
  EXPECT_TRUE(counter.Evict("db-2", &db));
  EXPECT_FALSE(counter.Evict("x", &elsewhere));
  // An operator Kubernetes does not define is named with its field.
  ASSERT_TRUE(json::Parse(R"({"metadata":{"name":"bad","namespace":"ml"},"spec":{"selector":{
      "matchExpressions":[{"key":"a","operator":"Has"}]}}})", &doc).ok());
  EXPECT_THAT(DecodeDisruptionBudget(doc, "PodDisruptionBudget").status().message(),
              HasSubstr("PodDisruptionBudget.spec.selector.matchExpressions[0].operator: \"Has\""));
}

TEST(K8sObjects, AnUnreadablePodKeepsItsIdentity) {
  StatusOr<Pod> pod = PodFrom(
      R"({"metadata":{"name":"p","namespace":"ml","uid":"u1"},"spec":{"nodeName":"n1","containers":[)"
      R"({"name":"c","resources":{"limits":{"nvidia.com/gpu":"1500m"}}}]},"status":{"phase":"Running"}})");
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->uid, "u1");
  EXPECT_EQ(pod->node_name, "n1");
  EXPECT_EQ(pod->phase, PodPhase::kRunning);
  EXPECT_THAT(pod->spec_error, HasSubstr("not a whole number"));
}

TEST(K8sObjects, PodWrongTypesAreErrorsNotCrashes) {
  EXPECT_THAT(PodFrom(R"({"metadata": []})").status().message(), HasSubstr("Pod.metadata: want object, got array"));
  EXPECT_THAT(PodFrom(R"({"metadata": {"name": 5}})").status().message(),
              HasSubstr("Pod.metadata.name: want string, got number"));
  EXPECT_THAT(SpecError(R"({"spec": {"containers": {}}})"), HasSubstr("Pod.spec.containers: want array, got object"));
  EXPECT_THAT(SpecError(R"({"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": true}}}]}})"),
              HasSubstr("want quantity string, got boolean"));
  EXPECT_THAT(SpecError(R"({"metadata": {"annotations": {"vke.volcengine.com/assumed": 1}}})"),
              HasSubstr("want string, got number"));
  EXPECT_THAT(PodFrom("[]").status().message(), HasSubstr("Pod: want object, got array"));
}

// Kubernetes 1.30 and older wrote {name, source: {...}}; such a pod is refused, not fatal.
TEST(K8sObjects, PreOneThirtyOnePodClaimsAreNamedNotFatal) {
  EXPECT_THAT(SpecError(R"({"metadata":{"name":"p","uid":"u"},"spec":{"resourceClaims":[)"
                        R"({"name":"gpu","source":{"resourceClaimName":"c"}}]}})"),
              HasSubstr("Pod.spec.resourceClaims[0].source: the claim reference of Kubernetes 1.30 and older"));
}

TEST(K8sObjects, DecodesANodeWithLabelAndAllocatable) {
  NodeJson n = testing::MgpuNode("m1", 4, 23028);
  StatusOr<Node> node = NodeFrom(n.ToJson());
  ASSERT_TRUE(node.ok());
  EXPECT_EQ(node->name, "m1");
  EXPECT_EQ(node->mode_label, "mgpu");
  EXPECT_EQ(node->compute_policy_label, "fixed-share");
  EXPECT_EQ(node->allocatable.mgpu_core_percent, 400);
  EXPECT_EQ(node->allocatable.mgpu_memory_mib, 4 * 23028);
  EXPECT_TRUE(node->spec_error.empty());
  EXPECT_FALSE(NodeFrom(testing::NvidiaNode("n", 8).ToJson())->mode_label.has_value());
  EXPECT_EQ(NodeFrom(testing::NvidiaNode("n", 8, "").ToJson())->mode_label, "");
}

TEST(K8sObjects, DecodesPublishedGpus) {
  NodeJson n = testing::MgpuNode("m1", 2, 0);
  n.gpus = std::vector<testing::GpuJson>{{.index = 0, .memory_mib = 81920, .model = "A100", .numa = 1},
                                         {.index = 2, .memory_mib = 15360, .model = "T4", .healthy = false}};
  StatusOr<Node> node = NodeFrom(n.ToJson());
  ASSERT_TRUE(node.ok());
  ASSERT_TRUE(node->published_gpus);
  ASSERT_EQ(node->published_gpus->size(), 2u);
  EXPECT_EQ((*node->published_gpus)[0].numa_node, 1);
  EXPECT_EQ((*node->published_gpus)[1].index, 2);
  EXPECT_FALSE((*node->published_gpus)[1].healthy);
}

TEST(K8sObjects, BadNodeFieldsMarkTheNodeNotTheInput) {
  NodeJson n = testing::MgpuNode("m1", 2, 1000);
  n.extra_annotations["gpusched.io/gpu-devices"] = R"([{"index":"zero"}])";
  StatusOr<Node> node = NodeFrom(n.ToJson());
  ASSERT_TRUE(node.ok());
  EXPECT_THAT(node->spec_error, HasSubstr("annotation gpusched.io/gpu-devices: [0].index: want integer, got string"));
  node = NodeFrom(R"({"metadata":{"name":"x"},"status":{"allocatable":{"nvidia.com/gpu":"lots"}}})");
  ASSERT_TRUE(node.ok());
  EXPECT_THAT(node->spec_error,
              HasSubstr("Node.status.allocatable[\"nvidia.com/gpu\"]: invalid quantity \"lots\""));
  EXPECT_THAT(NodeFrom(R"({"metadata":{}})").status().message(), HasSubstr("Node.metadata.name: missing"));
  for (const char* bad : {R"({"metadata":{"name":"x"},"status":[]})", R"({"metadata":{"name":"x"},"status":{"allocatable":"8"}})",
                          R"({"metadata":{"name":"x","labels":[]},"status":{"allocatable":{"nvidia.com/gpu":{}}}})"}) {
    node = NodeFrom(bad);
    ASSERT_TRUE(node.ok()) << bad;
    EXPECT_THAT(node->spec_error, HasSubstr("want")) << bad;
  }
}

// Found by fuzz_snapshot: a node offering 20014032008353940 MiB overflowed the scoring view's
// free-memory share. Quantities beyond 2^32 are refused where they are read.
TEST(K8sObjects, QuantitiesBeyondTwoToThe32AreRefusedNamingTheField) {
  StatusOr<Node> node = NodeFrom(
      R"({"metadata":{"name":"m","labels":{"vke.node.gpu.schedule":"mgpu"}},)"
      R"("status":{"allocatable":{"vke.volcengine.com/mgpu-core":"200","vke.volcengine.com/mgpu-memory":"000000020014032008353940"}}})");
  ASSERT_TRUE(node.ok());
  EXPECT_THAT(node->spec_error, HasSubstr("Node.status.allocatable[\"vke.volcengine.com/mgpu-memory\"]: "
                                          "\"000000020014032008353940\" is 20014032008353940 MiB, above the largest "
                                          "quantity gpusched accepts (4294967296)"));
  EXPECT_THAT(ParseGpuDevices(R"([{"index":0,"memoryMiB":9999999999999}])").status().message(),
              HasSubstr("[0].memoryMiB: 9999999999999 is outside 0-4294967296"));
  ClusterObjects objects;
  ASSERT_TRUE(AppendClusterJson(R"({"kind":"Pod","metadata":{"name":"p","uid":"u"},"spec":{"containers":[{"name":"c",)"
                                R"("resources":{"limits":{"nvidia.com/gpu":"5e12"}}}]}})",
                                &objects)
                  .ok());
  ASSERT_EQ(objects.pods.size(), 1u);
  EXPECT_THAT(objects.pods[0].spec_error, HasSubstr("\"5e12\" is 5000000000000 GPUs, above the largest quantity"));
  EXPECT_THAT(objects.errors, ElementsAre());
}

TEST(K8sObjects, GpuDeviceAnnotationRules) {
  EXPECT_TRUE(ParseGpuDevices("[]").ok());
  EXPECT_THAT(ParseGpuDevices(R"([{"memoryMiB":1}])").status().message(), HasSubstr("[0].index: missing"));
  EXPECT_THAT(ParseGpuDevices(R"([{"index":0,"health":"Sick"}])").status().message(),
              HasSubstr("[0].health: \"Sick\" (want Healthy or Unhealthy)"));
  EXPECT_THAT(ParseGpuDevices(R"({"index":0})").status().message(), HasSubstr("want array"));
}

TEST(K8sObjects, GpuPodsFromPodResourcesRoundTripAndTellUnreadFromFree) {
  StatusOr<std::vector<GpuDevice>> gpus = ParseGpuDevices(R"([{"index":0,"pods":["ml/a","ml/b"]},{"index":1,"pods":[]},{"index":2}])");
  ASSERT_TRUE(gpus.ok()) << gpus.status().message();
  EXPECT_THAT((*gpus)[0].pods, ::testing::Optional(ElementsAre("ml/a", "ml/b")));
  EXPECT_THAT((*gpus)[1].pods, ::testing::Optional(ElementsAre())) << "read, and free";
  EXPECT_EQ((*gpus)[2].pods, std::nullopt) << "not read";
  EXPECT_EQ(ParseGpuDevices(EncodeGpuDevices(*gpus)).value(), *gpus);
  EXPECT_THAT(ParseGpuDevices(R"([{"index":0,"pods":["a"]}])").status().message(),
              HasSubstr("[0].pods[0]: want \"namespace/name\""));
}

TEST(K8sObjects, ReadsKubectlListsAndTypedLists) {
  ClusterObjects out;
  std::string list = testing::ListJson({testing::NvidiaNode("n1", 8).ToJson(),
                                        PodJson{.name = "p", .uid = "u", .node = "n1", .phase = "Running"}.ToJson(),
                                        R"({"kind":"ResourceSlice","metadata":{"name":"s1"},"spec":{}})",
                                        R"({"kind":"Service","metadata":{"name":"svc"}})"});
  ASSERT_TRUE(AppendClusterJson(list, &out).ok());
  EXPECT_EQ(out.nodes.size(), 1u);
  EXPECT_EQ(out.pods.size(), 1u);
  ASSERT_EQ(out.dra_objects.size(), 1u);
  EXPECT_EQ(out.dra_objects[0].kind, dra::ObjectKind::kResourceSlice);
  EXPECT_EQ(out.dra_objects[0].key, "s1");
  ASSERT_TRUE(AppendClusterJson(R"({"kind":"NodeList","items":[{"metadata":{"name":"n2"}}]})", &out).ok());
  EXPECT_EQ(out.nodes.size(), 2u);
  ASSERT_TRUE(AppendClusterJson(R"({"kind":"Pod","metadata":{"name":"solo","uid":"s"}})", &out).ok());
  EXPECT_EQ(out.pods.size(), 2u);
}

TEST(K8sObjects, SnapshotPodsWithoutAUidAreListedAndStillCountedWhenBound) {
  ClusterObjects out;
  ASSERT_TRUE(AppendClusterJson(R"({"kind":"List","items":[{"kind":"Pod","metadata":{"name":"p"}},)"
                                R"({"kind":"Pod","metadata":{"name":"q","namespace":"ml"},"spec":{"nodeName":"n1"}}]})",
                                &out)
                  .ok());
  EXPECT_THAT(out.errors, ElementsAre(HasSubstr("items[0] (Pod).metadata.uid: missing (pod /p)"),
                                      HasSubstr("items[1] (Pod).metadata.uid: missing (pod ml/q)")));
  // The pending one is dropped; the bound one stays, under a stand-in uid, marked.
  ASSERT_EQ(out.pods.size(), 1u);
  EXPECT_EQ(out.pods[0].uid, "(no uid) ml/q");
  EXPECT_THAT(out.pods[0].spec_error, HasSubstr("metadata.uid: missing"));
}

TEST(K8sObjects, OneBadItemNeverStopsTheOthers) {
  ClusterObjects out;
  ASSERT_TRUE(AppendClusterJson(R"({"kind":"List","items":[{"metadata":{}},{"kind":"Pod","spec":[]},7,)"
                                R"({"kind":"Node","metadata":{"name":"good"}}]})",
                                &out)
                  .ok());
  EXPECT_THAT(out.errors, ElementsAre(HasSubstr("items[0].kind: missing"), HasSubstr("items[1] (Pod).metadata.uid: missing"),
                                      HasSubstr("items[2]: want object, got number")));
  ASSERT_EQ(out.nodes.size(), 1u);
  EXPECT_EQ(out.nodes[0].name, "good");
}

TEST(K8sObjects, OnlyADocumentThatIsNoListFails) {
  ClusterObjects out;
  EXPECT_THAT(AppendClusterJson(R"({"kind":"List","items":{}})", &out).message(), HasSubstr("items: want array"));
  EXPECT_THAT(AppendClusterJson("{", &out).message(), HasSubstr("malformed JSON"));
}

}  // namespace objects_test
}  // namespace gpusched::kubejson
