// `gpusched explain` as a person runs it: a pod as kubectl writes it in YAML, judged offline
// against a cluster file, or asked of a running server; bad usage named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>


#include "cli_run.h"
#include "cluster_json.h"
#include "test_server.h"

namespace gpusched::testing {
namespace explain_cli_test {

using ::testing::HasSubstr;
using ::testing::Not;

CliRun Explain(const std::string& args) { return RunCli(GPUSCHED_BINARY, "explain " + args); }

std::string Write(const std::string& name, const std::string& text) { return WriteTemp(name, text); }

constexpr const char* kPodYaml = R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: ml
  uid: 6c1d2f1e-0000-4000-8000-000000000001
spec:
  priority: 100
  containers:
  - name: s
    image: pytorch:2.5
    resources:
      limits:
        vke.volcengine.com/mgpu-core: "60"
        vke.volcengine.com/mgpu-memory: 12k
)";

// m0: GPU 0 holds x (60%, priority 1000); GPU 1 holds z (50%, priority 0).
std::string Cluster() {
  auto bound = [](std::string name, int core, int gpu, int32_t priority) {
    return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .node = "m0", .phase = "Running",
                   .containers = {Mgpu("s", core, 4096)},
                   .annotations = {{"vke.volcengine.com/gpu-index-container-s", std::to_string(gpu)}}, .priority = priority}
        .ToJson();
  };
  return ListJson({MgpuNode("m0", 2, 24576).ToJson(), bound("x", 60, 0, 1000), bound("z", 50, 1, 0)});
}

TEST(ExplainCli, AYamlPodIsJudgedAgainstAClusterFileAsATable) {
  std::string pod = Write("pod.yaml", kPodYaml);
  std::string cluster = Write("cluster.json", Cluster());
  CliRun r = Explain("--pod " + pod + " --snapshot " + cluster);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("0/1 nodes fit: 1 insufficient; evicting 1 pod on m0 makes room"));
  EXPECT_THAT(r.out, HasSubstr("GPU 0: 40% core free, needs 60%; GPU 1: 50% core free, needs 60% | evict ml/z (priority 0)"));
  CliRun json = Explain("--pod " + pod + " --snapshot " + cluster + " --json");
  EXPECT_THAT(json.out, HasSubstr(R"("memoryMiB":12000)"));  // "12k" read as the API server writes 12000
}

// A cordoned node, or one the pod's nodeSelector does not point to, is never where explain says
// the pod would go (before: w0, cordoned, was ranked first), and no eviction is offered there.
TEST(ExplainCli, NodesKubeSchedulerWouldRefuseAreNamedWithTheirReason) {
  NodeJson w0 = NvidiaNode("w0", 8);
  w0.spec_extra = R"("unschedulable":true,"taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}])";
  NodeJson w1 = NvidiaNode("w1", 8);
  w1.extra_labels = {{"pool", "b"}};
  NodeJson w2 = NvidiaNode("w2", 8);
  w2.extra_labels = {{"pool", "a"}};
  PodJson fill{.name = "fill", .namespace_name = "ml", .uid = "uid-fill", .node = "w2", .phase = "Running",
               .containers = {WholeGpus("s", 8)}, .priority = 0};
  std::string cluster = Write("refusing.json", ListJson({w0.ToJson(), w1.ToJson(), w2.ToJson(), fill.ToJson()}));
  PodJson pod{.name = "train", .namespace_name = "ml", .uid = "uid-train", .containers = {WholeGpus("s", 2)}, .priority = 100,
              .spec_extra = R"("nodeSelector":{"pool":"a"})"};
  CliRun r = Explain("--pod " + Write("refused-pod.json", pod.ToJson()) + " --snapshot " + cluster);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("0/3 nodes fit"));
  EXPECT_THAT(r.out, HasSubstr("node is cordoned (spec.unschedulable)"));
  EXPECT_THAT(r.out, HasSubstr("nodeSelector pool=a does not match (pool=b)"));
  EXPECT_THAT(r.out, HasSubstr("evicting 1 pod on w2 makes room"));  // the only node kube-scheduler would use
}

// NodeResourcesFit's codes: a node whose CPU a lower-priority pod takes is one where evicting it
// makes room (Unschedulable), and explain offers that eviction; a node whose whole CPU is less than
// the pod asks is unresolvable, and nothing is offered there. Before, both were unresolvable.
TEST(ExplainCli, ACpuShortageIsResolvableByEvictionUnlessThePodAsksMoreThanTheNode) {
  NodeJson w0 = NvidiaNode("w0", 8), w1 = NvidiaNode("w1", 8);
  w0.cpu = "4";
  w1.cpu = "1";
  PodJson web{.name = "web", .namespace_name = "ml", .uid = "uid-web", .node = "w0", .phase = "Running",
              .containers = {{.name = "s", .requests = {{"cpu", "4"}}}}, .priority = 0};
  std::string cluster = Write("cpu-short.json", ListJson({w0.ToJson(), w1.ToJson(), web.ToJson()}));
  ContainerJson gpus = WholeGpus("s", 2);
  gpus.requests["cpu"] = "2";
  PodJson pod{.name = "train", .namespace_name = "ml", .uid = "uid-train", .containers = {gpus}, .priority = 100};
  CliRun r = Explain("--pod " + Write("cpu-pod.json", pod.ToJson()) + " --snapshot " + cluster + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("evicting 1 pod on w0 makes room")) << r.out;
  EXPECT_THAT(r.out, HasSubstr("cpu: asks 2000m, 0m of 4000m free"));
  EXPECT_THAT(r.out, HasSubstr("cpu: asks 2000m, 1000m of 1000m free"));
}

// A pod with preemptionPolicy Never evicts nothing (kube-scheduler skips its preemption): where
// evicting ml/z would make room for a pod that may preempt, none is offered.
TEST(ExplainCli, APodThatNeverPreemptsIsOfferedNoEviction) {
  std::string yaml = kPodYaml;
  const std::string priority = "  priority: 100\n";
  yaml.replace(yaml.find(priority), priority.size(), priority + "  preemptionPolicy: Never\n");
  CliRun r = Explain("--pod " + Write("never.yaml", yaml) + " --snapshot " + Write("never-cluster.json", Cluster()) + " --json");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("0/1 nodes fit: 1 insufficient; its preemptionPolicy is Never: it evicts no pod"));
  EXPECT_THAT(r.out, Not(HasSubstr("ml/z")));
}

TEST(ExplainCli, AsksARunningServerByPodOrByName) {
  TestServer server(Cluster());
  std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  std::string pod = Write("pod2.yaml", kPodYaml);
  CliRun r = Explain("--pod " + pod + " --server " + url);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("evict ml/z"));
  CliRun unknown = Explain("--name ml/nobody --server " + url);
  EXPECT_EQ(unknown.code, 1);
  EXPECT_THAT(unknown.out, HasSubstr("answered 404"));
}

TEST(ExplainCli, BadUsageIsNamed) {
  CliRun none = Explain("");
  EXPECT_EQ(none.code, 2);
  EXPECT_THAT(none.out, HasSubstr("give exactly one of --pod, --name, --pod-group and --workload"));
  EXPECT_EQ(Explain("--name ml/x").code, 2);
  CliRun missing = Explain("--pod /nonexistent.yaml");
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.out, HasSubstr("/nonexistent.yaml: cannot be read"));
}

// A gang read from a cluster file: a PodGroup and its two pending members, which each fit alone
// on m0 and not together.
TEST(ExplainCli, APodGroupIsExplainedFromAClusterFile) {
  auto member = [](std::string name) {
    return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .containers = {Mgpu("s", 60, 4096)},
                   .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"}
        .ToJson();
  };
  std::string cluster = Write("gang.json", ListJson({MgpuNode("m0", 1, 24576).ToJson(), member("a"), member("b"),
      R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"train","namespace":"ml"},)"
      R"("spec":{"schedulingPolicy":{"gang":{"minCount":2}}}})"}));
  CliRun r = Explain("--pod-group ml/train --snapshot " + cluster);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pod group ml/train (PodGroup): a gang of at least 2; 2 pending, 0 bound"));
  EXPECT_THAT(r.out, HasSubstr("do not fit together now: 1 of 2 members fit"));
  EXPECT_EQ(Explain("--pod-group ml/train --name ml/a").code, 2);  // one of the three
  EXPECT_EQ(Explain("--replica r1 --name ml/a --server http://127.0.0.1:1").code, 2);  // --replica needs --pod-group
}

// Issue 35: a Kueue Workload, its flavor, its ClusterQueue and gpusched's AdmissionCheck as
// `kubectl get workloads,resourceflavors,clusterqueues,admissionchecks -A -o json` prints them
// (kueue.x-k8s.io/v1beta2), beside two nodes with 4 GPUs free each: an 8-GPU pod is Retry, with
// the reason per node; asked of a running server, the same.
std::string KueueCluster() {
  auto busy = [](std::string node) {
    return PodJson{.name = "busy-" + node, .uid = "busy-" + node, .node = node, .phase = "Running", .containers = {WholeGpus("c", 4)}}.ToJson();
  };
  return ListJson({NvidiaNode("g1", 8).ToJson(), NvidiaNode("g2", 8).ToJson(), busy("g1"), busy("g2"),
      R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor","metadata":{"name":"default","uid":"f1"},"spec":{}})",
      R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"AdmissionCheck","metadata":{"name":"gpu-placement","uid":"c1"},)"
      R"("spec":{"controllerName":"gpusched.io/gpu-placement"},"status":{"conditions":[{"type":"Active","status":"True",)"
      R"("reason":"Active","message":"","lastTransitionTime":"2026-12-05T00:00:00Z"}]}})",
      R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue","metadata":{"name":"gpu-cq","uid":"q1"},"spec":{)"
      R"("admissionChecksStrategy":{"admissionChecks":[{"name":"gpu-placement"}]},"namespaceSelector":{},)"
      R"("resourceGroups":[{"coveredResources":["nvidia.com/gpu"],"flavors":[{"name":"default","resources":[)"
      R"({"name":"nvidia.com/gpu","nominalQuota":"16"}]}]}]}})",
      R"({"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload","metadata":{"name":"job-big","namespace":"ml","uid":"w1",)"
      R"("resourceVersion":"9"},"spec":{"queueName":"team","podSets":[{"name":"main","count":1,"template":{"spec":{)"
      R"("containers":[{"name":"c","image":"x","resources":{"limits":{"nvidia.com/gpu":"8"}}}]}}}]},)"
      R"("status":{"conditions":[{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"",)"
      R"("lastTransitionTime":"2026-12-05T00:00:00Z"}],"admission":{"clusterQueue":"gpu-cq","podSetAssignments":[)"
      R"({"name":"main","flavors":{"nvidia.com/gpu":"default"},"resourceUsage":{"nvidia.com/gpu":"8"},"count":1}]},)"
      R"("admissionChecks":[{"name":"gpu-placement","state":"Pending","message":"","lastTransitionTime":"2026-12-05T00:00:00Z"}]}})"});
}

TEST(ExplainCli, AKueueWorkloadIsJudgedFromAClusterFileOrByAServer) {
  std::string cluster = Write("kueue.json", KueueCluster());
  CliRun r = Explain("--workload ml/job-big --snapshot " + cluster);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("Workload ml/job-big (queue team, ClusterQueue gpu-cq): Retry"));
  EXPECT_THAT(r.out, HasSubstr("job-big-main-0 fits on 0 of 2 nodes: insufficient nvidia.com/gpu: pod needs 8, node has 4 of 8 free"));
  EXPECT_THAT(r.out, HasSubstr("check gpu-placement is Pending in its status"));
  TestServer server(KueueCluster());
  CliRun asked = Explain("--workload ml/job-big --json --server http://127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(asked.code, 0) << asked.out;
  EXPECT_THAT(asked.out, HasSubstr(R"("verdict":"Retry")"));
  CliRun unknown = Explain("--workload ml/nope --snapshot " + cluster);
  EXPECT_EQ(unknown.code, 1);
  EXPECT_THAT(unknown.out, HasSubstr("Workload ml/nope is not known to gpusched"));
}

}  // namespace explain_cli_test
}  // namespace gpusched::testing
