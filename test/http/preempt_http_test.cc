// The preempt verb over a real socket, with bodies shaped as kube-scheduler sends them in both
// cache modes: victims chosen by the GPUs the pod would get, kube-scheduler's own victims kept
// where they hold no GPU, placeholders answered, nodes evictions cannot help left out.
#include <chrono>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::testing {
namespace preempt_http_test {

using ::testing::HasSubstr;

PodJson Bound(std::string name, std::string node, std::vector<ContainerJson> containers, int32_t priority,
              std::map<std::string, std::string> annotations = {}) {
  return PodJson{.name = name, .uid = name, .node = std::move(node), .phase = "Running", .containers = std::move(containers),
                 .annotations = std::move(annotations), .priority = priority};
}

std::map<std::string, std::string> OnGpu(std::string_view container, int gpu) {
  return {{"vke.volcengine.com/gpu-index-container-" + std::string(container), std::to_string(gpu)}};
}

// m0: GPU 0 holds x (60%) and y (30%), GPU 1 holds z (50%); x is important. w0: 8 whole GPUs,
// a (4) and b (2) of priority 0, c (2) of priority 5. off: a node whose label takes no GPU pods.
// "cpu-hog" holds no GPU on m0. "dying" is terminating on w1 (4 GPUs, all its).
std::string Cluster() {
  return ListJson({
      MgpuNode("m0", 2, 16384).ToJson(),
      NvidiaNode("w0", 8).ToJson(),
      NvidiaNode("w1", 4).ToJson(),
      NvidiaNode("off", 8, "vgpu").ToJson(),
      Bound("x", "m0", {Mgpu("s", 60, 1024)}, 100, OnGpu("s", 0)).ToJson(),
      Bound("y", "m0", {Mgpu("s", 30, 1024)}, 0, OnGpu("s", 0)).ToJson(),
      Bound("z", "m0", {Mgpu("s", 50, 1024)}, 0, OnGpu("s", 1)).ToJson(),
      Bound("cpu-hog", "m0", {ContainerJson{.name = "c", .requests = {{"cpu", "30"}}}}, 1).ToJson(),
      Bound("a", "w0", {WholeGpus("c", 4)}, 0).ToJson(),
      Bound("b", "w0", {WholeGpus("c", 2)}, 0).ToJson(),
      Bound("c", "w0", {WholeGpus("c", 2)}, 5).ToJson(),
      Bound("g", "off", {WholeGpus("c", 8)}, 0).ToJson(),
      PodJson{.name = "dying", .uid = "dying", .node = "w1", .phase = "Running", .containers = {WholeGpus("c", 4)},
              .priority = 0, .deletion_timestamp = "2026-11-30T10:05:00Z"}
          .ToJson(),
  });
}

// An mGPU container that also asks for `cpu` cores (m0 has 63, cpu-hog takes 30).
ContainerJson MgpuWithCpu(int core, int64_t mib, std::string cpu) {
  ContainerJson c = Mgpu("s", core, mib);
  c.requests["cpu"] = std::move(cpu);
  return c;
}

PodJson Preemptor(std::vector<ContainerJson> containers, int32_t priority) {
  return PodJson{.name = "hi", .uid = "hi-uid", .containers = std::move(containers), .priority = priority};
}

class PreemptHttp : public ::testing::Test {
 protected:
  HttpReply Preempt(const std::string& body) { return client_.Post("/preempt", body); }

  TestServer server_{Cluster()};
  HttpClient client_{server_.port()};
};

TEST_F(PreemptHttp, AnMgpuShareOnTheWrongGpuIsReplacedByTheOneThatFreesRoom) {
  // By node totals kube-scheduler sees 60% free and offers y; only emptying GPU 1 (z) gives 60%.
  HttpReply r = Preempt(PreemptMetaJson(Preemptor({Mgpu("s", 60, 2048)}, 10).ToJson(), {{"m0", {"y"}}}));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"NodeNameToMetaVictims":{"m0":{"Pods":[{"UID":"z"}],"NumPDBViolations":0}}})");
}

TEST_F(PreemptHttp, KubeSchedulersVictimNeededForCpuStaysAndVictimsComeByDecreasingPriority) {
  // Full Pods (nodeCacheCapable: false): cpu-hog (priority 1) was chosen for CPU, y for the GPU
  // totals. A pod asking 40 cores needs cpu-hog gone (63 - 30 < 40): z replaces y, cpu-hog stays
  // and comes first.
  std::map<std::string, std::vector<std::string>> offered = {
      {"m0", {Bound("y", "m0", {Mgpu("s", 30, 1024)}, 0, OnGpu("s", 0)).ToJson(),
              Bound("cpu-hog", "m0", {ContainerJson{.name = "c", .requests = {{"cpu", "30"}}}}, 1).ToJson()}}};
  HttpReply r = Preempt(PreemptFullJson(Preemptor({MgpuWithCpu(60, 2048, "40")}, 10).ToJson(), offered));
  EXPECT_EQ(r.body, R"({"NodeNameToMetaVictims":{"m0":{"Pods":[{"UID":"cpu-hog"},{"UID":"z"}],"NumPDBViolations":0}}})");
  // Asking 30 cores, it fits beside cpu-hog by gpusched's count, but cpu-hog holds no GPU:
  // kube-scheduler may need it for a reason gpusched does not see, so it stays; y is given back.
  r = Preempt(PreemptFullJson(Preemptor({MgpuWithCpu(60, 2048, "30")}, 10).ToJson(), offered));
  EXPECT_EQ(r.body, R"({"NodeNameToMetaVictims":{"m0":{"Pods":[{"UID":"cpu-hog"},{"UID":"z"}],"NumPDBViolations":0}}})");
}

TEST_F(PreemptHttp, PlaceholderCandidatesGetTheVictimsHoldingTheGpus) {
  // w0 is a placeholder (kube-scheduler's own filters pass there); b frees the two GPUs, c is
  // too important to be needed, a is given back. w1's only pod is already terminating: it frees
  // its GPUs by itself, so nothing there is a victim, and a placeholder with no victims is left
  // out (kube-scheduler takes an empty list as an error). "off" takes no GPU pods; "nowhere" is
  // not known.
  HttpReply r = Preempt(PreemptMetaJson(Preemptor({WholeGpus("c", 2)}, 10).ToJson(),
                                        {{"w0", {}}, {"w1", {}}, {"off", {"g"}}, {"nowhere", {"q"}}}));
  EXPECT_EQ(r.body, R"({"NodeNameToMetaVictims":{"w0":{"Pods":[{"UID":"b"}],"NumPDBViolations":0}}})");
}

TEST_F(PreemptHttp, PodsOfEqualOrHigherPriorityAreNeverVictims) {
  // At priority 5, c is no candidate and a pod needing 6 GPUs needs both a and b.
  HttpReply six = Preempt(PreemptMetaJson(Preemptor({WholeGpus("c", 6)}, 5).ToJson(), {{"w0", {}}}));
  EXPECT_EQ(six.body, R"({"NodeNameToMetaVictims":{"w0":{"Pods":[{"UID":"a"},{"UID":"b"}],"NumPDBViolations":0}}})");
  // At priority 0 nothing may go: no node helps.
  HttpReply none = Preempt(PreemptMetaJson(Preemptor({WholeGpus("c", 2)}, 0).ToJson(), {{"w0", {"a"}}}));
  EXPECT_EQ(none.body, R"({"NodeNameToMetaVictims":{}})");
  // On m0 at priority 10, x (100) stays: a whole card must be one x does not share.
  HttpReply big = Preempt(PreemptMetaJson(Preemptor({Mgpu("s", 100, std::nullopt)}, 10).ToJson(), {{"m0", {}}}));
  EXPECT_EQ(big.body, R"({"NodeNameToMetaVictims":{"m0":{"Pods":[{"UID":"z"}],"NumPDBViolations":0}}})");
}

TEST_F(PreemptHttp, APodWhoseGpusFitIsAnsweredWithKubeSchedulersRemainingVictims) {
  // 20% fits on m0's GPU 1 (50% free) without evicting anything. With 40 cores, kube-scheduler's
  // victim chosen for CPU is the answer and y (GPU only) is given back. With 8 cores cpu-hog is
  // not needed by gpusched's count, but it holds no GPU: it stays, and the node is answered, never
  // dropped while kube-scheduler's victims remain (before: dropped, and cpu-hog kept the pod out).
  HttpReply r = Preempt(PreemptMetaJson(Preemptor({MgpuWithCpu(20, 1024, "40")}, 10).ToJson(), {{"m0", {"cpu-hog", "y"}}}));
  EXPECT_EQ(r.body, R"({"NodeNameToMetaVictims":{"m0":{"Pods":[{"UID":"cpu-hog"}],"NumPDBViolations":0}}})");
  r = Preempt(PreemptMetaJson(Preemptor({MgpuWithCpu(20, 1024, "8")}, 10).ToJson(), {{"m0", {"cpu-hog"}}}));
  EXPECT_EQ(r.body, R"({"NodeNameToMetaVictims":{"m0":{"Pods":[{"UID":"cpu-hog"}],"NumPDBViolations":0}}})");
  // Offered only y (it holds GPUs, nothing else ties it): given back, and with no victim left the
  // node is left out (an empty list is an error to kube-scheduler).
  r = Preempt(PreemptMetaJson(Preemptor({MgpuWithCpu(20, 1024, "8")}, 10).ToJson(), {{"m0", {"y"}}}));
  EXPECT_EQ(r.body, R"({"NodeNameToMetaVictims":{}})");
}

// w2 is full: b1 and b2 (2 GPUs each, app=web) and z-db (4 GPUs, app=db), all priority 0.
std::string BudgetCluster(std::optional<int> db_allowed) {
  std::vector<std::string> items = {NvidiaNode("w2", 8).ToJson()};
  for (auto [name, gpus, app] : {std::tuple{"b1", 2, "web"}, std::tuple{"b2", 2, "web"}, std::tuple{"z-db", 4, "db"}}) {
    PodJson p = Bound(name, "w2", {WholeGpus("c", gpus)}, 0);
    p.labels = {{"app", app}};
    items.push_back(p.ToJson());
  }
  if (db_allowed) items.push_back(BudgetJson("default", "db", {{"app", "db"}}, *db_allowed));
  return ListJson(items);
}

TEST(PreemptBudgets, PodsWhoseEvictionViolatesABudgetAreSparedFirstAndViolationsAreCounted) {
  std::string four = PreemptMetaJson(Preemptor({WholeGpus("c", 4)}, 10).ToJson(), {{"w2", {}}});
  // No budget: candidates are given back by UID, b1 and b2 return, z-db alone frees 4.
  TestServer plain(BudgetCluster(std::nullopt));
  EXPECT_EQ(HttpClient(plain.port()).Post("/preempt", four).body,
            R"({"NodeNameToMetaVictims":{"w2":{"Pods":[{"UID":"z-db"}],"NumPDBViolations":0}}})");
  // The db budget allows no disruption: z-db is spared first, b1 and b2 go instead.
  TestServer guarded(BudgetCluster(0));
  HttpClient client(guarded.port());
  EXPECT_EQ(client.Post("/preempt", four).body,
            R"({"NodeNameToMetaVictims":{"w2":{"Pods":[{"UID":"b1"},{"UID":"b2"}],"NumPDBViolations":0}}})");
  // Needing all 8 GPUs, the violation cannot be avoided, and is counted.
  EXPECT_EQ(client.Post("/preempt", PreemptMetaJson(Preemptor({WholeGpus("c", 8)}, 10).ToJson(), {{"w2", {}}})).body,
            R"({"NodeNameToMetaVictims":{"w2":{"Pods":[{"UID":"b1"},{"UID":"b2"},{"UID":"z-db"}],"NumPDBViolations":1}}})");
  // Allowing one disruption, evicting z-db violates nothing.
  TestServer loose(BudgetCluster(1));
  EXPECT_EQ(HttpClient(loose.port()).Post("/preempt", PreemptMetaJson(Preemptor({WholeGpus("c", 8)}, 10).ToJson(), {{"w2", {}}})).body,
            R"({"NodeNameToMetaVictims":{"w2":{"Pods":[{"UID":"b1"},{"UID":"b2"},{"UID":"z-db"}],"NumPDBViolations":0}}})");
}

TEST_F(PreemptHttp, ThePodCountIsCheckedToo) {
  // A node allowing 4 pods holds 4 (nothing else limits): one must go, the cheapest offered.
  NodeJson small = NvidiaNode("p4", 8);
  std::string cluster = ListJson({small.ToJson(), Bound("q1", "p4", {WholeGpus("c", 1)}, 0).ToJson(),
                                  Bound("q2", "p4", {WholeGpus("c", 1)}, 3).ToJson(), Bound("q3", "p4", {}, 0).ToJson(),
                                  Bound("q4", "p4", {}, 1).ToJson()});
  // The builder's node allows 110 pods (capacity and allocatable); this one 4.
  for (size_t at; (at = cluster.find(R"("pods":"110")")) != std::string::npos;) cluster.replace(at, 12, R"("pods":"4")");
  TestServer server(cluster);
  HttpClient client(server.port());
  // kube-scheduler offers q3 (priority 0, no GPU): 6 GPUs are free, only the pod count needs it.
  HttpReply r = client.Post("/preempt", PreemptMetaJson(Preemptor({WholeGpus("c", 1)}, 10).ToJson(), {{"p4", {"q3"}}}));
  EXPECT_EQ(r.body, R"({"NodeNameToMetaVictims":{"p4":{"Pods":[{"UID":"q3"}],"NumPDBViolations":0}}})");
}

TEST_F(PreemptHttp, AnUnreadableBodyIsA400NamingTheFieldAndTheServerKeepsServing) {
  HttpReply bad = Preempt(R"({"Pod":{"metadata":{"uid":"u"}},"NodeNameToMetaVictims":{"m0":{"Pods":[{"UID":7}]}}})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("NodeNameToMetaVictims[\"m0\"].Pods[0].UID"));
  HttpReply get = client_.Get("/preempt");
  EXPECT_EQ(get.status, 405);
  HttpReply ok = Preempt(PreemptMetaJson(Preemptor({WholeGpus("c", 2)}, 10).ToJson(), {{"w0", {}}}));
  EXPECT_EQ(ok.status, 200);
}

// What ties a victim to the preemptor through kube-scheduler's other filters. n1: 2 GPUs, 8 CPUs.
// lo-a (app=x) and lo-b hold one GPU each; lo-port (no GPU) has hostPort 8080; all priority 0.
class PreemptRelations : public ::testing::Test {
 protected:
  static std::string Cluster(const std::string& lo_a_spec = "", int32_t lo_b_priority = 0) {
    NodeJson n1 = NvidiaNode("n1", 2);
    n1.cpu = "8";
    PodJson a = Bound("lo-a", "n1", {WholeGpus("c", 1)}, 0);
    a.labels = {{"app", "x"}};
    a.spec_extra = lo_a_spec;
    PodJson port = Bound("lo-port", "n1", {ContainerJson{.name = "c", .requests = {{"cpu", "1"}}, .host_ports = {8080}}}, 0);
    return ListJson({n1.ToJson(), a.ToJson(), Bound("lo-b", "n1", {WholeGpus("c", 1)}, lo_b_priority).ToJson(), port.ToJson()});
  }
  static PodJson Hi(std::string spec_extra = "") {
    PodJson p = Preemptor({WholeGpus("c", 1)}, 1000);
    p.labels = {{"app", "hi"}};
    p.spec_extra = std::move(spec_extra);
    return p;
  }
  static std::string Answer(TestServer& server, const PodJson& pod, std::vector<std::string> offered) {
    return HttpClient(server.port()).Post("/preempt", PreemptMetaJson(pod.ToJson(), {{"n1", std::move(offered)}})).body;
  }
};

// The issue's case: before, gpusched answered lo-b alone; lo-b died, NodePorts still failed, and
// the next round's [lo-port] got no node at all.
TEST_F(PreemptRelations, AVictimOfferedForAHostPortThePreemptorAsksStays) {
  TestServer server(Cluster());
  PodJson hi = Hi();
  hi.containers[0].host_ports = {8080};
  EXPECT_EQ(Answer(server, hi, {"lo-b", "lo-port"}),
            R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"lo-b"},{"UID":"lo-port"}],"NumPDBViolations":0}}})");
  // Offered the port holder alone, gpusched adds the GPU victim its own rules need.
  EXPECT_EQ(Answer(server, hi, {"lo-port"}),
            R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"lo-b"},{"UID":"lo-port"}],"NumPDBViolations":0}}})");
}

// kube-scheduler offers lo-a for the anti-affinity (and the GPU it frees): it stays, and gpusched
// adds no GPU victim since lo-a's GPU is enough. Before, lo-a was given back and lo-b evicted.
TEST_F(PreemptRelations, AVictimTheAntiAffinityOfEitherPodSelectsStays) {
  TestServer server(Cluster());
  std::string away_from_x = R"("affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
    {"labelSelector":{"matchLabels":{"app":"x"}},"topologyKey":"kubernetes.io/hostname"}]}})";
  const std::string kLoA = R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"lo-a"}],"NumPDBViolations":0}}})";
  EXPECT_EQ(Answer(server, Hi(away_from_x), {"lo-a"}), kLoA);
  // The victim's own anti-affinity selecting the preemptor.
  TestServer theirs(Cluster(R"("affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
    {"labelSelector":{"matchExpressions":[{"key":"app","operator":"In","values":["hi"]}]},"topologyKey":"kubernetes.io/hostname"}]}})"));
  EXPECT_EQ(Answer(theirs, Hi(), {"lo-a"}), kLoA);
  // Neither selects the other: lo-a only holds a GPU, so it is given back, and gpusched's own
  // choice frees one (candidates are given back by UID: lo-a stays, lo-b goes).
  EXPECT_EQ(Answer(server, Hi(), {"lo-a"}), R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"lo-b"}],"NumPDBViolations":0}}})");
}

TEST_F(PreemptRelations, AVictimCountedByTheTopologySpreadOrHoldingVolumesStays) {
  TestServer server(Cluster());
  std::string spread = R"("topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"kubernetes.io/hostname",
    "whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"x"}}}])";
  const std::string kLoA = R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"lo-a"}],"NumPDBViolations":0}}})";
  EXPECT_EQ(Answer(server, Hi(spread), {"lo-a"}), kLoA);
  TestServer volumes(Cluster(R"("volumes":[{"name":"data","persistentVolumeClaim":{"claimName":"data-lo-a"}}])"));
  EXPECT_EQ(Answer(volumes, Hi(), {"lo-a"}), kLoA);
}

// A pod the preemptor's required affinity selects is never gpusched's victim: evicting it would
// leave the preemptor without the neighbour it needs. lo-b (priority 5) would be given back first
// and lo-a evicted (as before).
TEST_F(PreemptRelations, GpuschedNeverEvictsAPodThePreemptorsAffinityRequires) {
  TestServer server(Cluster("", 5));
  EXPECT_EQ(Answer(server, Hi(), {}), R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"lo-a"}],"NumPDBViolations":0}}})");
  std::string near_x = R"("affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
    {"labelSelector":{"matchLabels":{"app":"x"}},"topologyKey":"kubernetes.io/hostname"}]}})";
  EXPECT_EQ(Answer(server, Hi(near_x), {}), R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"lo-b"}],"NumPDBViolations":0}}})");
}

TEST_F(PreemptRelations, ANodeThePreemptorsNodeSelectionRefusesIsLeftOut) {
  TestServer server(Cluster());
  EXPECT_EQ(Answer(server, Hi(R"("nodeSelector":{"pool":"b"})"), {"lo-a"}), R"({"NodeNameToMetaVictims":{}})");
}

// n3: 2 GPUs, 4 CPUs. a holds a GPU and 2 CPUs, b a GPU; x (priority 2000, 2 CPUs, no GPU) is
// nominated to n3. The preemptor asks a GPU and 2 CPUs at priority 1000: with x counted, a must
// go (for its CPUs, and its GPU is then enough). Before, nominated pods were not counted: gpusched
// answered b alone, and the preemptor did not fit once b was gone.
TEST(PreemptNominated, PodsNominatedToTheNodeWithHigherPriorityCountAgainstItsResources) {
  NodeJson n3 = NvidiaNode("n3", 2);
  n3.cpu = "4";
  ContainerJson gpu_and_cpu = WholeGpus("c", 1);
  gpu_and_cpu.requests["cpu"] = "2";
  PodJson x{.name = "x", .uid = "x", .phase = "Pending", .containers = {ContainerJson{.name = "c", .requests = {{"cpu", "2"}}}},
            .priority = 2000, .nominated_node = "n3"};
  TestServer server(ListJson({n3.ToJson(), Bound("a", "n3", {gpu_and_cpu}, 0).ToJson(), Bound("b", "n3", {WholeGpus("c", 1)}, 0).ToJson(),
                              x.ToJson()}));
  std::string hi = Preemptor({gpu_and_cpu}, 1000).ToJson();
  EXPECT_EQ(HttpClient(server.port()).Post("/preempt", PreemptMetaJson(hi, {{"n3", {"a"}}})).body,
            R"({"NodeNameToMetaVictims":{"n3":{"Pods":[{"UID":"a"}],"NumPDBViolations":0}}})");
  // Of lower priority than the preemptor, x does not count: a is given back, b frees the GPU.
  std::string top = Preemptor({gpu_and_cpu}, 3000).ToJson();
  EXPECT_EQ(HttpClient(server.port()).Post("/preempt", PreemptMetaJson(top, {{"n3", {"a"}}})).body,
            R"({"NodeNameToMetaVictims":{"n3":{"Pods":[{"UID":"b"}],"NumPDBViolations":0}}})");
}

// n4: 2 GPUs, 4 CPUs; x5 (priority 5) and y1 (priority 1) hold a GPU and 2 CPUs each. The
// preemptor asks a GPU and 4 CPUs: both must go. gpusched's first choice (y1, for its GPU) finds
// x5 needed for CPU; made again with x5 gone it needs no GPU victim, and y1, chosen before, must
// still be weighed for CPU (found by a review: it was given back unchecked).
TEST(PreemptNominated, AVictimChosenFirstIsStillWeighedForCpuWhenTheChoiceIsMadeAgain) {
  NodeJson n4 = NvidiaNode("n4", 2);
  n4.cpu = "4";
  ContainerJson gpu_and_cpu = WholeGpus("c", 1);
  gpu_and_cpu.requests["cpu"] = "2";
  TestServer server(ListJson({n4.ToJson(), Bound("x5", "n4", {gpu_and_cpu}, 5).ToJson(), Bound("y1", "n4", {gpu_and_cpu}, 1).ToJson()}));
  ContainerJson ask = WholeGpus("c", 1);
  ask.requests["cpu"] = "4";
  EXPECT_EQ(HttpClient(server.port()).Post("/preempt", PreemptMetaJson(Preemptor({ask}, 10).ToJson(), {{"n4", {"x5", "y1"}}})).body,
            R"({"NodeNameToMetaVictims":{"n4":{"Pods":[{"UID":"x5"},{"UID":"y1"}],"NumPDBViolations":0}}})");
}

// h6: 6 GPUs; 2 are held for the next pod of ReplicaSet rs-1 (a defrag move's hold, from the node
// annotation); l1 and l2 hold 2 each. The preemptor is that next pod and asks 4 GPUs: the hold is
// room for it, so one victim is enough. Before, the victim search counted the hold against its own
// controller's pod (filter, bind and explain did not) and evicted l1 and l2 both.
TEST(PreemptHolds, AHoldKeptForThePreemptorsControllerIsRoomForItAndCostsNoVictim) {
  int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  NodeJson h6 = NvidiaNode("h6", 6);
  h6.extra_annotations["gpusched.io/holds"] = fmt::format(
      R"({{"moved":{{"for":"controller/rs-1","pod":"default/moved","at":{},"seconds":300,"mode":"nvidia","gpus":2}}}})", now_ms);
  TestServer server(ListJson({h6.ToJson(), Bound("l1", "h6", {WholeGpus("c", 2)}, 0).ToJson(),
                              Bound("l2", "h6", {WholeGpus("c", 2)}, 0).ToJson()}));
  PodJson next = Preemptor({WholeGpus("c", 4)}, 10);
  next.controller_uid = "rs-1";
  EXPECT_EQ(HttpClient(server.port()).Post("/preempt", PreemptMetaJson(next.ToJson(), {{"h6", {"l1", "l2"}}})).body,
            R"({"NodeNameToMetaVictims":{"h6":{"Pods":[{"UID":"l2"}],"NumPDBViolations":0}}})");
}

}  // namespace preempt_http_test
}  // namespace gpusched::testing
