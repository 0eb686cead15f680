// Pods outside gangs steered into the fullest domain in use (extender/domain_steering.h, issue
// 34 §2), so that whole NVLink domains stay free for gangs; explain says the same.
#include "gpusched/extender/domain_steering.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "gpusched/extender/explain.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace domain_steering_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ContainerJson;
using testing::PodJson;

// A bound pod of no GPU on `node`, of `controller_kind` (a CPU-only job's, or a DaemonSet's),
// requesting `cpu` ("" for nothing: a BestEffort pod).
std::string CpuPod(const std::string& name, const std::string& node, const std::string& controller_kind,
                   const std::string& cpu = "40") {
  ContainerJson c{.name = "c"};
  if (!cpu.empty()) c.requests["cpu"] = cpu;
  return PodJson{.name = name, .uid = name, .node = node, .phase = "Running", .containers = {c},
                 .controller_uid = "owner-" + name, .controller_kind = controller_kind}
      .ToJson();
}

// Cliques A (a1, a2) and B (b1, b2) of 4-GPU nodes, and u1 without a clique; b1 runs a 1-GPU pod;
// `extra` are more objects.
std::string Cluster(const std::vector<std::string>& extra = {}) {
  std::vector<std::string> items = extra;
  for (const char* name : {"a1", "a2", "b1", "b2", "u1"}) {
    testing::NodeJson n = testing::NvidiaNode(name, 4);
    if (name[0] != 'u') n.extra_labels["nvidia.com/gpu.clique"] = fmt::format("c.{}", static_cast<char>(std::toupper(name[0])));
    items.push_back(n.ToJson());
  }
  items.push_back(PodJson{.name = "busy", .uid = "busy", .node = "b1", .phase = "Running", .containers = {testing::WholeGpus("c", 1)}}.ToJson());
  return testing::ListJson(items);
}

class DomainSteering : public ::testing::Test {
 protected:
  void Load(ServiceOptions options = {}, const std::vector<std::string>& extra = {}) {
    ClusterObjects objects;
    ASSERT_TRUE(kubejson::AppendClusterJson(Cluster(extra), &objects).ok());
    inventory_.ReplaceCluster(std::move(objects));
    options_ = options;
    service_ = std::make_unique<Service>(&inventory_, options);
  }
  StatusOr<Explanation> ExplainPod(const PodJson& pod) {
    return Explain(testing::DecodedPod(pod.ToJson()), std::nullopt,
                   EvaluationInputs{.snapshot = inventory_.Snapshot().get(), .options = &options_});
  }
  std::string Filter(const PodJson& pod) {
    return service_->Filter(testing::ArgsWithNames(pod.ToJson(), {"a1", "a2", "b1", "b2", "u1"}));
  }
  inventory::Inventory inventory_;
  ServiceOptions options_;
  std::unique_ptr<Service> service_;
};

TEST_F(DomainSteering, APodOutsideGangsGoesToTheFullestCliqueInUse) {
  Load();
  PodJson pod{.name = "p", .uid = "p", .containers = {testing::WholeGpus("c", 1)}};
  std::string reply = Filter(pod);
  EXPECT_THAT(testing::KeptNodes(reply), ElementsAre("b1", "b2", "u1")) << "clique B and the node in no clique";
  EXPECT_THAT(reply, HasSubstr("pods outside gangs go to the fullest domain in use (nvidia.com/gpu.clique=c.B)"));
  StatusOr<Explanation> e = ExplainPod(pod);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_THAT(e->summary, HasSubstr("3/5 nodes fit"));
}

// Clique A runs a CPU-only job on both nodes (BestEffort: no requests): every GPU free, but no
// whole node for a gang. It is fuller than clique B (one whole node), and a small GPU pod strands
// nothing more there. Before, A counted as not in use (no GPU allocated) and the pod went to B.
TEST_F(DomainSteering, ACliqueOfCpuOnlyJobsIsFullerThanOneWithAWholeNode) {
  Load({}, {CpuPod("job-1", "a1", "Job", ""), CpuPod("job-2", "a2", "Job", "")});
  PodJson pod{.name = "p", .uid = "p", .containers = {testing::WholeGpus("c", 1)}};
  std::string reply = Filter(pod);
  EXPECT_THAT(testing::KeptNodes(reply), ElementsAre("a1", "a2", "u1"));
  EXPECT_THAT(reply, HasSubstr("fullest domain in use (nvidia.com/gpu.clique=c.A)"));
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(service_->DebugInventory("", false), &d).ok());
  const auto& a = d["domains"]["items"][0];
  EXPECT_EQ(a["idleNodes"].GetInt(), 0);
  EXPECT_DOUBLE_EQ(a["strandedGpus"].GetDouble(), 8);
}

// A CPU-only job takes 40 of a2's 63 CPUs: a2's GPUs are idle beside it, and no gang member of
// whole nodes can have them. A GPU pod goes there first (and to u1, in no clique). Before, it
// went to clique B, whose b1 runs a GPU pod, and spoiled b2 or took b1's last GPUs.
TEST_F(DomainSteering, AGpuPodGoesFirstToGpusACpuOnlyJobLeavesIdle) {
  Load({}, {CpuPod("job-1", "a2", "Job")});
  PodJson pod{.name = "p", .uid = "p", .containers = {testing::WholeGpus("c", 1)}};
  std::string reply = Filter(pod);
  EXPECT_THAT(testing::KeptNodes(reply), ElementsAre("a2", "u1"));
  EXPECT_THAT(reply, HasSubstr("pods outside gangs go first to GPUs that other pods' CPU or memory leaves idle"));
}

// b1 runs a 1-GPU pod, and a DaemonSet's pod asks 16 of its 63 CPUs: CPU free 0.75 of it, just
// under the 0.75 of its GPUs. Short by less than one GPU's share, b1 is not stranded, and the
// pod goes to clique B as a whole (review finding: it went to b1 alone).
TEST_F(DomainSteering, ADaemonSetBesideAGpuPodLeavesItsNodeNotStranded) {
  Load({}, {CpuPod("ds-1", "b1", "DaemonSet", "16")});
  PodJson pod{.name = "p", .uid = "p", .containers = {testing::WholeGpus("c", 1)}};
  EXPECT_THAT(testing::KeptNodes(Filter(pod)), ElementsAre("b1", "b2", "u1"));
}

// DaemonSet pods run on every node: they leave a node whole, and a clique of them is not in use.
TEST_F(DomainSteering, DaemonSetPodsLeaveANodeWhole) {
  Load({}, {CpuPod("ds-1", "a1", "DaemonSet"), CpuPod("ds-2", "a2", "DaemonSet")});
  PodJson pod{.name = "p", .uid = "p", .containers = {testing::WholeGpus("c", 1)}};
  EXPECT_THAT(testing::KeptNodes(Filter(pod)), ElementsAre("b1", "b2", "u1"));
}

// A cordoned node and a node whose GPUs are not registered yet take no GPU pods: they count in no
// domain, so an otherwise idle clique is not in use (review finding: it was, for good).
TEST_F(DomainSteering, NodesThatTakeNoGpuPodsDoNotPutTheirCliqueInUse) {
  testing::NodeJson cordoned = testing::NvidiaNode("a3", 4), bare = testing::NvidiaNode("a4", 0);
  cordoned.spec_extra = R"("unschedulable":true)";
  for (testing::NodeJson* n : {&cordoned, &bare}) n->extra_labels["nvidia.com/gpu.clique"] = "c.A";
  Load({}, {cordoned.ToJson(), bare.ToJson()});
  std::shared_ptr<const DomainIndex> index = DomainFullness().Of(*inventory_.Snapshot(), "nvidia.com/gpu.clique");
  const DomainUse& a = index->domains.at("c.A");
  EXPECT_EQ(a.nodes, 2);
  EXPECT_EQ(a.whole_nodes, 2);
  EXPECT_FALSE(a.in_use());
}

TEST_F(DomainSteering, SteeringOffOrAPodOfAGroupKeepsEveryNode) {
  ServiceOptions off;
  off.topology_steer = false;
  Load(off);
  PodJson pod{.name = "p", .uid = "p", .containers = {testing::WholeGpus("c", 1)}};
  EXPECT_EQ(testing::KeptNodes(Filter(pod)).size(), 5u);
  Load();
  PodJson member = pod;
  member.spec_extra = R"("schedulingGroup":{"podGroupName":"none"})";
  EXPECT_EQ(testing::KeptNodes(Filter(member)).size(), 5u) << "a group's member is the gang planner's";
}

// A CPU-only pod that names gpusched's scheduler reaches its filter (no managedResources), and
// is kept to the fullest clique in use as a GPU pod is: CPU-only jobs scattered over cliques are
// what leaves no clique whole for a gang (marin PR #8249). Before, it passed through: every node.
TEST_F(DomainSteering, ACpuOnlyPodThatNamesGpuschedGoesToTheFullestCliqueInUse) {
  Load();
  PodJson pod{.name = "cpu", .uid = "cpu", .containers = {ContainerJson{.name = "c", .requests = {{"cpu", "8"}}}}};
  std::string reply = Filter(pod);
  EXPECT_THAT(testing::KeptNodes(reply), ElementsAre("b1", "b2", "u1")) << "clique B and the node in no clique";
  EXPECT_THAT(reply, HasSubstr("pods outside gangs go to the fullest domain in use (nvidia.com/gpu.clique=c.B)"));
  StatusOr<Explanation> e = ExplainPod(pod);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_THAT(e->summary, HasSubstr("3/5 nodes kept for a pod without GPUs"));
  EXPECT_THAT(e->summary, HasSubstr("fullest domain in use (nvidia.com/gpu.clique=c.B)"));
  ASSERT_EQ(e->nodes.size(), 5u);
  EXPECT_TRUE(e->nodes[0].fits);
  EXPECT_EQ(e->nodes[3].node, "a1");
  EXPECT_THAT(Reasons(e->nodes[3]), ElementsAre(HasSubstr("fullest domain in use")));
}

// A GPU pod goes first to a2, whose GPUs a CPU-only job leaves idle; a CPU-only pod uses none of
// them there, so it is not sent to a2 but to the fullest clique (B: as many whole nodes as A, and
// fewer free GPUs).
TEST_F(DomainSteering, ACpuOnlyPodIsNotSentToGpusOtherResourcesStrand) {
  Load({}, {CpuPod("job-1", "a2", "Job")});
  PodJson gpu{.name = "p", .uid = "p", .containers = {testing::WholeGpus("c", 1)}};
  EXPECT_THAT(testing::KeptNodes(Filter(gpu)), ElementsAre("a2", "u1"));
  PodJson cpu{.name = "cpu", .uid = "cpu", .containers = {ContainerJson{.name = "c", .requests = {{"cpu", "8"}}}}};
  EXPECT_THAT(testing::KeptNodes(Filter(cpu)), ElementsAre("b1", "b2", "u1"));
}

// Nodes gpusched does not know (a CPU pool it reads no object of) are kube-scheduler's to judge:
// kept. With steering off, without a clique label anywhere, or for a group's pod, every node is.
TEST_F(DomainSteering, ACpuOnlyPodKeepsUnknownNodesAndEveryNodeWhereNothingSteersIt) {
  Load();
  PodJson pod{.name = "cpu", .uid = "cpu", .containers = {ContainerJson{.name = "c", .requests = {{"cpu", "8"}}}}};
  EXPECT_THAT(testing::KeptNodes(service_->Filter(testing::ArgsWithNames(pod.ToJson(), {"a1", "b1", "cpu-7"}))),
              ElementsAre("b1", "cpu-7"));
  PodJson member = pod;
  member.spec_extra = R"("schedulingGroup":{"podGroupName":"none"})";
  EXPECT_EQ(testing::KeptNodes(Filter(member)).size(), 5u);
  ServiceOptions off;
  off.topology_steer = false;
  Load(off);
  EXPECT_EQ(testing::KeptNodes(Filter(pod)).size(), 5u);
  ServiceOptions other;
  other.topology_levels = {"example.com/rack"};
  Load(other);
  EXPECT_EQ(testing::KeptNodes(Filter(pod)).size(), 5u);
  StatusOr<Explanation> e = ExplainPod(pod);
  EXPECT_THAT(e.status().message(), HasSubstr("asks for no GPU"));
}

// /debug/inventory groups the nodes by domain: b1's three free GPUs are stranded (no whole-node
// member can use them), and clique A has the most idle nodes.
TEST_F(DomainSteering, TheInventoryShowsEachDomainsFreeAndStrandedGpusAndTheLargestGang) {
  Load();
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(service_->DebugInventory("", false), &d).ok());
  ASSERT_TRUE(d.HasMember("domains"));
  const auto& domains = d["domains"];
  EXPECT_STREQ(domains["key"].GetString(), "nvidia.com/gpu.clique");
  ASSERT_EQ(domains["items"].Size(), 2u);
  const auto& b = domains["items"][1];
  EXPECT_STREQ(b["domain"].GetString(), "c.B");
  EXPECT_EQ(b["idleNodes"].GetInt(), 1);
  EXPECT_DOUBLE_EQ(b["freeGpus"].GetDouble(), 7);
  EXPECT_DOUBLE_EQ(b["strandedGpus"].GetDouble(), 3);
  EXPECT_STREQ(domains["largestGang"]["domain"].GetString(), "c.A");
  EXPECT_EQ(domains["largestGang"]["idleNodes"].GetInt(), 2);
  EXPECT_STREQ(d["nodes"][2]["domain"].GetString(), "c.B");
}

// Clique A: a1 runs a 1-GPU pod, a2 and a3 are whole (8 GPUs); clique B: b1 runs one, b2-b4 are
// whole (12 GPUs). A is the fuller. A gang ml/train of two 4-GPU members runs on u1 and u2 (in no
// clique): the cluster's gangs ask 8 GPUs, and A holds one only with both of its whole nodes. A
// 4-GPU pod then goes to B, which holds such a gang without the node it takes. When the pods on
// u1 and u2 are of no group, or before, it went to A and left no clique able to hold one.
TEST(DomainSteeringTarget, APodTakesNoDomainsLastRoomForTheGangsOfTheCluster) {
  auto cluster = [](bool with_gang) {
    std::vector<std::string> items;
    for (const char* name : {"a1", "a2", "a3", "b1", "b2", "b3", "b4", "u1", "u2"}) {
      testing::NodeJson n = testing::NvidiaNode(name, 4);
      if (name[0] != 'u') n.extra_labels["nvidia.com/gpu.clique"] = fmt::format("c.{}", static_cast<char>(std::toupper(name[0])));
      items.push_back(n.ToJson());
    }
    for (const char* node : {"a1", "b1"}) {
      items.push_back(PodJson{.name = fmt::format("busy-{}", node), .uid = fmt::format("busy-{}", node), .node = node,
                              .phase = "Running", .containers = {testing::WholeGpus("c", 1)}}
                          .ToJson());
    }
    if (with_gang) {
      items.push_back(R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"train","namespace":"ml"},)"
                      R"("spec":{"schedulingPolicy":{"gang":{"minCount":2}}}})");
    }
    for (const char* node : {"u1", "u2"}) {  // members of ml/train, or the same pods of no group
      items.push_back(PodJson{.name = fmt::format("w-{}", node), .namespace_name = "ml", .uid = fmt::format("w-{}", node),
                              .node = node, .phase = "Running", .containers = {testing::WholeGpus("c", 4)},
                              .spec_extra = with_gang ? R"("schedulingGroup":{"podGroupName":"train"})" : ""}
                          .ToJson());
    }
    return testing::ListJson(items);
  };
  PodJson pod{.name = "p", .uid = "p", .containers = {testing::WholeGpus("c", 4)}};
  auto kept = [&](bool with_gang, std::string* reply) {
    ClusterObjects objects;
    EXPECT_TRUE(kubejson::AppendClusterJson(cluster(with_gang), &objects).ok());
    inventory::Inventory inventory;
    inventory.ReplaceCluster(std::move(objects));
    Service service(&inventory, ServiceOptions{});
    *reply = service.Filter(testing::ArgsWithNames(pod.ToJson(), {"a1", "a2", "a3", "b1", "b2", "b3", "b4", "u1", "u2"}));
    EXPECT_EQ(GangDemands(*inventory.Snapshot()), with_gang ? std::vector<int64_t>{8000} : std::vector<int64_t>{});
    rapidjson::Document d;
    EXPECT_TRUE(json::Parse(service.DebugInventory("", false), &d).ok());
    EXPECT_EQ(d["domains"]["gangGpus"].Size(), with_gang ? 1u : 0u) << "the target, shown";
    if (with_gang) {
      EXPECT_DOUBLE_EQ(d["domains"]["gangGpus"][0].GetDouble(), 8);
    }
    return testing::KeptNodes(*reply);
  };
  std::string reply;
  EXPECT_THAT(kept(false, &reply), ElementsAre("a2", "a3")) << reply;
  EXPECT_THAT(kept(true, &reply), ElementsAre("b2", "b3", "b4")) << reply;
  EXPECT_THAT(reply, HasSubstr("pods outside gangs take no whole node from nvidia.com/gpu.clique=c.A while it holds a "
                               "gang of 8 GPUs only with that node and other nodes fit"));
}

// A member of `group` in namespace ml asking `gpus` whole GPUs (0: a launcher), pending or bound.
Pod GroupMember(const std::string& group, const std::string& uid, int64_t gpus, const std::string& node = "") {
  Pod p{.uid = uid, .namespace_name = "ml", .name = uid, .node_name = node, .group = PodGroupRef{.name = group}};
  Container c{.name = "c"};
  if (gpus > 0) c.limits.nvidia_gpus = c.requests.nvidia_gpus = gpus;
  p.containers.push_back(c);
  if (!node.empty()) p.phase = PodPhase::kRunning;
  return p;
}

// The target: each gang whose members are all created, by its minCount of GPU members (smallest
// first, a launcher not counted), bound or pending; not a gang still being created, a group that
// is no gang, members of a group not declared, or a gang without GPU members. Each demand once.
TEST(GangDemandsTest, EachCreatedGangByItsMinCountOfGpuMembers) {
  ClusterObjects cluster;
  cluster.pod_groups = {PodGroup{.namespace_name = "ml", .name = "train", .min_count = 3},
                        PodGroup{.namespace_name = "ml", .name = "same", .min_count = 2},
                        PodGroup{.namespace_name = "ml", .name = "early", .min_count = 4},
                        PodGroup{.namespace_name = "ml", .name = "basic", .min_count = 0},
                        PodGroup{.namespace_name = "ml", .name = "cpu", .min_count = 2}};
  cluster.pods = {GroupMember("train", "t-launcher", 0), GroupMember("train", "t0", 4, "n1"), GroupMember("train", "t1", 8),
                  GroupMember("train", "t2", 4),         GroupMember("same", "s0", 4),        GroupMember("same", "s1", 4),
                  GroupMember("early", "e0", 2),         GroupMember("early", "e1", 2),       GroupMember("basic", "b0", 4),
                  GroupMember("basic", "b1", 4),         GroupMember("undeclared", "u0", 4),  GroupMember("undeclared", "u1", 4),
                  GroupMember("cpu", "c0", 0),           GroupMember("cpu", "c1", 0)};
  inventory::Inventory inventory;
  inventory.ReplaceCluster(std::move(cluster));
  // train: minCount 3 less its launcher = 2 GPU members, the smallest (4 + 4); same: 4 + 4. early
  // (2 of 4 members created) counted 2 + 2 before it had to be whole.
  EXPECT_EQ(GangDemands(*inventory.Snapshot()), (std::vector<int64_t>{8000}));
}

// The domain index reads the demands again when the members change: a gang of two 4-GPU members
// is no target until its second member is created, and none once it is gone again.
TEST(GangDemandsTest, TheIndexReadsThemAgainWhenMembersChange) {
  ClusterObjects cluster;
  cluster.pod_groups = {PodGroup{.namespace_name = "ml", .name = "train", .min_count = 2}};
  cluster.pods = {GroupMember("train", "t0", 4)};
  inventory::Inventory inventory;
  inventory.ReplaceCluster(std::move(cluster));
  DomainFullness fullness;
  EXPECT_TRUE(fullness.Of(*inventory.Snapshot(), "nvidia.com/gpu.clique")->gang_demands.empty());
  inventory.Apply(ClusterDelta{.upsert_pending = {GroupMember("train", "t1", 4)}});
  EXPECT_EQ(fullness.Of(*inventory.Snapshot(), "nvidia.com/gpu.clique")->gang_demands, (std::vector<int64_t>{8000}));
  Pod loner = GroupMember("", "loner", 1, "a1");
  loner.group.reset();
  inventory.Apply(ClusterDelta{.upsert_pods = {loner}});  // no member changed
  EXPECT_EQ(fullness.Of(*inventory.Snapshot(), "nvidia.com/gpu.clique")->gang_demands, (std::vector<int64_t>{8000}));
  inventory.Apply(ClusterDelta{.deleted_pending = {"t1"}});
  EXPECT_TRUE(fullness.Of(*inventory.Snapshot(), "nvidia.com/gpu.clique")->gang_demands.empty());
}

// Where only a domain's last room fits, the pod still goes there: the step only chooses.
TEST(DomainFullnessTest, TheLastRoomForAGangIsTakenWhenNothingElseFits) {
  DomainIndex index;
  index.domains = {{"c.A", {.free_milli = 8000, .used_milli = 4000, .nodes = 3, .whole_nodes = 2, .whole_milli = 8000}}};
  index.of = {&*index.domains.find("c.A"), &*index.domains.find("c.A")};
  index.facts = {{.domain = 0, .free_milli = 4000, .takes_gpu_pods = true, .whole = true},
                 {.domain = 0, .free_milli = 4000, .takes_gpu_pods = true, .whole = true}};
  index.gang_demands = {8000};
  EXPECT_EQ(LastRoomForGang(index, 0), 8000);
  EXPECT_TRUE(OutsideFullestDomain({0, 1}, "k", index).empty());
  index.gang_demands = {4000, 12000};  // one node is not A's last room for 4 GPUs; 12 it cannot hold
  EXPECT_EQ(LastRoomForGang(index, 0), 0);
  index.domains.begin()->second.whole_milli = 4000;  // one whole node left: a gang it holds alone needs no domain
  index.gang_demands = {4000};
  EXPECT_EQ(LastRoomForGang(index, 0), 0);
}

TEST(DomainFullnessTest, NoDomainInUseSteersNothing) {
  DomainIndex idle;
  idle.domains = {{"c.A", {.free_milli = 8000, .nodes = 2, .whole_nodes = 2}}, {"c.B", {.free_milli = 8000, .nodes = 2, .whole_nodes = 2}}};
  idle.of = {&*idle.domains.find("c.A"), &*idle.domains.find("c.B")};
  idle.facts.resize(2);
  EXPECT_TRUE(OutsideFullestDomain({0, 1}, "k", idle).empty());
}

}  // namespace domain_steering_test
}  // namespace gpusched::extender
