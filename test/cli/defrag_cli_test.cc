// `gpusched defrag` as a person runs it: a pod in YAML planned for offline against a cluster file
// and a separate PodDisruptionBudget file (kubectl get pdb -A -o json), as a table or JSON, or
// asked of a running server; bad usage named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "cli_run.h"
#include "cluster_json.h"
#include "dra_json.h"
#include "test_server.h"

namespace gpusched::testing {
namespace defrag_cli_test {

using ::testing::HasSubstr;

CliRun Defrag(const std::string& args) { return RunCli(GPUSCHED_BINARY, "defrag " + args); }

constexpr const char* kPodYaml = R"(apiVersion: v1
kind: Pod
metadata:
  name: train
  namespace: ml
  uid: 6c1d2f1e-0000-4000-8000-000000000002
spec:
  containers:
  - name: s
    image: pytorch:2.5
    resources:
      limits:
        nvidia.com/gpu: "4"
)";

// A running pod of a ReplicaSet (rs-<name>) in namespace ml, labelled app=<name>.
PodJson Running(std::string name, std::string node, int gpus) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .node = std::move(node), .phase = "Running",
                 .containers = {WholeGpus("s", gpus)}, .labels = {{"app", name}}, .priority = 0, .controller_uid = "rs-" + name};
}

// w0: 4 + 2 of 8 GPUs used; w1: 6 of 8.
std::string Cluster() {
  return ListJson({NvidiaNode("w0", 8).ToJson(), NvidiaNode("w1", 8).ToJson(), Running("a4", "w0", 4).ToJson(),
                   Running("a2", "w0", 2).ToJson(), Running("b6", "w1", 6).ToJson()});
}

// The plan for kPodYaml (with `spec_extra` in its spec, as JSON) on `items`, as JSON.
CliRun PlanFor(const std::vector<std::string>& items, const std::string& name, const std::string& spec_extra = "",
               std::map<std::string, std::string> requests = {}) {
  ContainerJson c = WholeGpus("s", 4);
  for (auto& [k, v] : requests) c.requests[k] = c.limits[k] = v;
  PodJson pod{.name = "train", .namespace_name = "ml", .uid = "uid-train", .phase = "Pending", .containers = {c}, .spec_extra = spec_extra};
  std::string cluster = WriteTemp(name + "-cluster.json", ListJson(items));
  return Defrag("--pod " + WriteTemp(name + "-pod.json", pod.ToJson()) + " --snapshot " + cluster + " --format json");
}

TEST(DefragCli, APodInYamlIsPlannedAgainstAClusterFile) {
  std::string pod = WriteTemp("defrag-pod.yaml", kPodYaml);
  std::string cluster = WriteTemp("defrag-cluster.json", Cluster());
  CliRun r = Defrag("--pod " + pod + " --snapshot " + cluster);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pod ml/train: fits on w0 (GPUs 4 whole) after 1 move"));
  EXPECT_THAT(r.out, HasSubstr("ml/a2"));
  CliRun json = Defrag("--pod " + pod + " --snapshot " + cluster + " --format json");
  EXPECT_EQ(json.code, 0) << json.out;
  EXPECT_THAT(json.out, HasSubstr(R"("moves":[{"pod":"ml/a2","uid":"uid-a2","priority":0,"from":"w0","to":"w1")"));
}

// A pod whose GPUs come from a ResourceClaim: the snapshot holds the slices, claims and class.
TEST(DefragCli, AClaimPodIsPlannedWithTheDevicesItsClaimWouldGet) {
  std::vector<std::string> items = {DraNode("a"), DraNode("b"), GpuSlice("a", 2), GpuSlice("b", 2), std::string(kGpuClass),
                                    GeneratedClaim("c-pa", "pa", ClaimSpec(1, ""), {"a/gpu-0"}), TemplateClaimPod("pa", "c-pa", "a", "rs-pa"),
                                    GeneratedClaim("c-pb", "pb", ClaimSpec(1, ""), {"b/gpu-1"}), TemplateClaimPod("pb", "c-pb", "b", "rs-pb"),
                                    Claim("big", ClaimSpec(2, ""))};
  std::string cluster = WriteTemp("defrag-dra.json", ListJson(items));
  std::string pod = WriteTemp("defrag-dra-pod.json", ClaimPod("train", "big"));
  CliRun r = Defrag("--pod " + pod + " --snapshot " + cluster);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("pod ml/train: fits on a (GPUs gpu-0,gpu-1) after 1 move"));
  CliRun json = Defrag("--pod " + pod + " --snapshot " + cluster + " --format json");
  EXPECT_THAT(json.out, HasSubstr(R"("from":"a","to":"b","gpus":[],"wholeGpus":0,"devices":["gpu.nvidia.com/b/gpu-0"])"));
}

TEST(DefragCli, BudgetsFromTheirOwnFileKeepTheirPodsInPlace) {
  std::string pod = WriteTemp("defrag-pod2.yaml", kPodYaml);
  std::string cluster = WriteTemp("defrag-cluster2.json", Cluster());
  std::string pdbs = WriteTemp("defrag-pdb.json", ListJson({BudgetJson("ml", "a2", {{"app", "a2"}}, 0)}));
  CliRun r = Defrag("--pod " + pod + " --snapshot " + cluster + " --snapshot " + pdbs + " --format json");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(R"("fits":false)"));
  EXPECT_THAT(r.out, HasSubstr(R"("moves":[])"));
}

TEST(DefragCli, AsksARunningServerForAPodOrATarget) {
  TestServer server(Cluster());
  std::string url = "http://127.0.0.1:" + std::to_string(server.port());
  std::string pod = WriteTemp("defrag-pod3.yaml", kPodYaml);
  CliRun r = Defrag("--pod " + pod + " --server " + url);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("fits on w0"));
  CliRun target = Defrag("--target-frag 0 --max-moves 2 --server " + url + " --format json");
  EXPECT_EQ(target.code, 0) << target.out;
  EXPECT_THAT(target.out, HasSubstr(R"("targetFragPct":0)"));
  // A server on cluster files has no cluster to evict in.
  CliRun apply = Defrag("--pod " + pod + " --server " + url + " --apply");
  EXPECT_EQ(apply.code, 1) << apply.out;
  EXPECT_THAT(apply.out, HasSubstr("answered 409: applying a defrag plan needs a live cluster"));
}

// The issue's cases, each planned onto a node kube-scheduler would never use before.
TEST(DefragCli, ACordonedNodeIsNeverTheNodeRoomIsMadeOn) {
  NodeJson w0 = NvidiaNode("w0", 8);
  w0.spec_extra = R"("unschedulable":true,"taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}])";
  std::vector<std::string> items = {w0.ToJson(), NvidiaNode("w1", 8).ToJson(), Running("a4", "w0", 4).ToJson(),
                                    Running("a2", "w0", 2).ToJson(), Running("b6", "w1", 6).ToJson()};
  CliRun r = PlanFor(items, "cordoned");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(R"("fits":false)"));  // before: room made on w0 by moving a2
  EXPECT_THAT(r.out, HasSubstr("1 node refuse the pod whatever moves"));  // and b6 may not land there either
}

TEST(DefragCli, RoomIsMadeOnlyWhereThePodsNodeSelectorPoints) {
  auto pool = [](std::string name, std::string p) {
    NodeJson n = NvidiaNode(std::move(name), 8);
    n.extra_labels = {{"pool", std::move(p)}};
    return n.ToJson();
  };
  std::vector<std::string> items = {pool("w0", "b"), pool("w1", "a"), pool("w2", "b"), Running("a4", "w0", 4).ToJson(),
                                    Running("a2", "w0", 2).ToJson(), Running("b6", "w1", 6).ToJson()};
  CliRun r = PlanFor(items, "selector", R"("nodeSelector":{"pool":"a"})");
  EXPECT_EQ(r.code, 0) << r.out;
  // Before: it fitted on w2 (pool b) at once. Now room is made on w1, b6 going to the empty w2.
  EXPECT_THAT(r.out, HasSubstr(R"("fits":true,"pod":"ml/train","targetFragPct":null,"node":"w1")"));
  EXPECT_THAT(r.out, HasSubstr(R"("pod":"ml/b6","uid":"uid-b6","priority":0,"from":"w1","to":"w2")"));
}

TEST(DefragCli, AMovedPodLandsOnlyWhereItsCpusFit) {
  NodeJson w1 = NvidiaNode("w1", 8);
  w1.cpu = "4";
  PodJson a2 = Running("a2", "w0", 2);
  a2.containers[0].requests["cpu"] = "8";
  PodJson cpu_hog{.name = "hog", .namespace_name = "ml", .uid = "uid-hog", .node = "w1", .phase = "Running",
                  .containers = {ContainerJson{.name = "c", .requests = {{"cpu", "4"}}}}, .priority = 0};
  std::vector<std::string> items = {NvidiaNode("w0", 8).ToJson(), w1.ToJson(), NvidiaNode("w2", 8).ToJson(),
                                    Running("a4", "w0", 4).ToJson(), a2.ToJson(), Running("b6", "w1", 6).ToJson(),
                                    cpu_hog.ToJson(), Running("c6", "w2", 6).ToJson()};
  CliRun r = PlanFor(items, "cpu");
  EXPECT_EQ(r.code, 0) << r.out;
  // Before: a2 went to w1 (first of the fullest), whose 4 CPUs are all requested.
  EXPECT_THAT(r.out, HasSubstr(R"("pod":"ml/a2","uid":"uid-a2","priority":0,"from":"w0","to":"w2")"));
}

TEST(DefragCli, ThePendingPodMustFitItsNodeBesidesGpus) {
  NodeJson w0 = NvidiaNode("w0", 8);
  w0.cpu = "4";
  CliRun r = PlanFor({w0.ToJson(), NvidiaNode("w1", 8).ToJson(), Running("a4", "w0", 4).ToJson(), Running("a2", "w0", 2).ToJson(),
                      Running("b6", "w1", 6).ToJson()},
                     "pending-cpu", "", {{"cpu", "8"}});
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(R"("fits":false)"));  // before: room on w0, whose 4 CPUs cannot take 8
}

TEST(DefragCli, APendingPodsPodRelationsAreSaidNotToBeJudged) {
  CliRun r = PlanFor({NvidiaNode("w0", 8).ToJson(), NvidiaNode("w1", 8).ToJson(), Running("a4", "w0", 4).ToJson(),
                      Running("a2", "w0", 2).ToJson(), Running("b6", "w1", 6).ToJson()},
                     "relations", R"("affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
                       {"labelSelector":{"matchLabels":{"app":"a4"}},"topologyKey":"kubernetes.io/hostname"}]}})");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(R"("notJudged":"required pod anti-affinity")"));
}

// w0: a4 + a2; w1: b6; w2: c4 (8 GPUs each), and gang ml/train of two pending 4-GPU members:
// one fits on w2 as it is, the other once a2 moves to w1.
std::string GangCluster() {
  std::string group = R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"train","namespace":"ml"},)"
                      R"("spec":{"schedulingPolicy":{"gang":{"minCount":2}}}})";
  std::vector<std::string> items = {NvidiaNode("w0", 8).ToJson(), NvidiaNode("w1", 8).ToJson(), NvidiaNode("w2", 8).ToJson(),
                                    Running("a4", "w0", 4).ToJson(), Running("a2", "w0", 2).ToJson(),
                                    Running("b6", "w1", 6).ToJson(), Running("c4", "w2", 4).ToJson(), group};
  for (std::string name : {"g0", "g1"}) {
    items.push_back(PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .containers = {WholeGpus("s", 4)},
                            .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"}
                        .ToJson());
  }
  return ListJson(items);
}

TEST(DefragCli, APodGroupGetsRoomForEveryMemberAtOnceOfflineAndFromAServer) {
  std::string cluster = WriteTemp("defrag-gang.json", GangCluster());
  CliRun table = Defrag("--pod-group ml/train --snapshot " + cluster);
  EXPECT_EQ(table.code, 0) << table.out;
  EXPECT_THAT(table.out, HasSubstr("pod group ml/train: its 2 pending members fit together on 2 nodes after 1 move"));
  EXPECT_THAT(table.out, HasSubstr("ml/a2"));
  TestServer server(GangCluster());
  CliRun json = Defrag("--pod-group ml/train --server http://127.0.0.1:" + std::to_string(server.port()) + " --format json");
  EXPECT_EQ(json.code, 0) << json.out;
  EXPECT_THAT(json.out, HasSubstr(R"("podGroup":"ml/train","fits":true)"));
  EXPECT_THAT(json.out, HasSubstr(R"("from":"w0","to":"w1")"));
  CliRun unknown = Defrag("--pod-group ml/nothing --snapshot " + cluster);
  EXPECT_EQ(unknown.code, 1);
  EXPECT_THAT(unknown.out, HasSubstr("pod group ml/nothing is not known"));
  EXPECT_EQ(Defrag("--pod-group ml/train --target-frag 1").code, 2);
  EXPECT_EQ(Defrag("--replica r1 --target-frag 1").code, 2);  // --replica needs --pod-group
}

TEST(DefragCli, BadUsageIsNamed) {
  CliRun none = Defrag("");
  EXPECT_EQ(none.code, 2);
  EXPECT_THAT(none.out, HasSubstr("give exactly one of --pod, --pod-group and --target-frag"));
  CliRun format = Defrag("--target-frag 1 --format xml");
  EXPECT_EQ(format.code, 2);
  EXPECT_THAT(format.out, HasSubstr("--format xml: want table or json"));
  EXPECT_EQ(Defrag("--target-frag -3").code, 2);
  EXPECT_EQ(Defrag("--target-frag 1 --max-moves 2.5").code, 2);
  CliRun offline_apply = Defrag("--target-frag 1 --apply");
  EXPECT_EQ(offline_apply.code, 2);
  EXPECT_THAT(offline_apply.out, HasSubstr("--apply needs --server"));
  CliRun missing = Defrag("--pod /nonexistent.yaml");
  EXPECT_EQ(missing.code, 1);
  EXPECT_THAT(missing.out, HasSubstr("/nonexistent.yaml: cannot be read"));
}

}  // namespace defrag_cli_test
}  // namespace gpusched::testing
