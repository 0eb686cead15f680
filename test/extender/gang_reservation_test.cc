// A domain kept for the gang that waits first (extender/gang_reservation.h, issue 34 §2): while
// a gang cannot be placed, pods outside gangs of its priority or lower stay off the domain with
// the most whole nodes, so that it drains and the gang gets one domain.
#include "gpusched/extender/gang_reservation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "gpusched/common/time_format.h"
#include "gpusched/extender/defrag.h"
#include "gpusched/extender/explain.h"
#include "gpusched/extender/group_defrag.h"
#include "gpusched/extender/group_explain.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace gang_reservation_test {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::PodJson;

constexpr char kClique[] = "nvidia.com/gpu.clique";
const std::vector<std::string> kAll = {"a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"};

// A PodGroup ml/NAME whose gang needs `min_count` members.
std::string Group(const std::string& name, int min_count) {
  return fmt::format(R"({{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{{"name":"{}","namespace":"ml"}},)"
                     R"("spec":{{"schedulingPolicy":{{"gang":{{"minCount":{}}}}}}}}})",
                     name, min_count);
}

// Member i of group `group`, pending, of four whole GPUs.
PodJson Member(const std::string& group, int i) {
  return PodJson{.name = fmt::format("{}-{}", group, i), .namespace_name = "ml", .uid = fmt::format("uid-{}-{}", group, i),
                 .containers = {testing::WholeGpus("c", 4)},
                 .spec_extra = fmt::format(R"("schedulingGroup":{{"podGroupName":"{}"}})", group)};
}

// A running pod of a ReplicaSet (defrag may move it).
PodJson Running(const std::string& name, const std::string& node, int gpus) {
  return PodJson{.name = name, .uid = name, .node = node, .phase = "Running", .containers = {testing::WholeGpus("c", gpus)},
                 .controller_uid = "rs-" + name};
}

// Cliques A (a1-a4) and B (b1-b4) of 4-GPU nodes. a1 runs a 1-GPU pod; every node of B runs one:
// A has three whole nodes, B none. Gang ml/train needs four members of four GPUs: one clique,
// empty; none now. `zoned`: every node in zone z1 too; `small_extra`: more spec of the small pods.
std::vector<std::string> Cluster(bool zoned = false, const std::string& small_extra = "") {
  std::vector<std::string> out;
  for (const std::string& name : kAll) {
    testing::NodeJson n = testing::NvidiaNode(name, 4);
    n.extra_labels[kClique] = name[0] == 'a' ? "c.A" : "c.B";
    if (zoned) n.extra_labels["topology.kubernetes.io/zone"] = "z1";
    out.push_back(n.ToJson());
  }
  for (const char* node : {"a1", "b1", "b2", "b3", "b4"}) {
    PodJson small = Running(fmt::format("small-{}", node), node, 1);
    small.spec_extra = small_extra;
    out.push_back(small.ToJson());
  }
  out.push_back(Group("train", 4));
  return out;
}

std::vector<std::string> WithGang(std::vector<std::string> items, const std::string& group = "train", int members = 4) {
  for (int i = 0; i < members; ++i) items.push_back(Member(group, i).ToJson());
  return items;
}

class GangReservation : public ::testing::Test {
 protected:
  void Load(const std::vector<std::string>& items, ServiceOptions options = {}) {
    ClusterObjects objects;
    ASSERT_TRUE(kubejson::AppendClusterJson(testing::ListJson(items), &objects).ok());
    inventory_.ReplaceCluster(std::move(objects));
    options_ = options;
    service_ = std::make_unique<Service>(&inventory_, options);
  }
  std::optional<DomainReservation> Reserved() { return DomainFullness(ServiceOptions{}).Of(*inventory_.Snapshot(), kClique)->reserved; }
  std::string Filter(const PodJson& pod) { return service_->Filter(testing::ArgsWithNames(pod.ToJson(), kAll)); }
  inventory::Inventory inventory_{inventory::InventoryOptions{.scheduler_name = "gpu-scheduler"}};
  ServiceOptions options_;
  std::unique_ptr<Service> service_;
};

TEST_F(GangReservation, TheCliqueWithTheMostWholeNodesIsKeptForTheWaitingGang) {
  Load(WithGang(Cluster()));
  std::optional<DomainReservation> r = Reserved();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->domain, "c.A");
  EXPECT_EQ(r->gang, "ml/train");
  EXPECT_EQ(r->whole_nodes, 3);
  EXPECT_EQ(r->needs_milli, 16000);
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(service_->DebugInventory("", false), &d).ok());
  EXPECT_STREQ(d["domains"]["keptFor"]["domain"].GetString(), "c.A");
  EXPECT_STREQ(d["domains"]["keptFor"]["gang"].GetString(), "ml/train");
  StatusOr<GroupExplanation> e = service_->ExplainGroup("ml/train", "");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->kept_domain, "nvidia.com/gpu.clique=c.A");
  EXPECT_THAT(GroupExplanationText(*e), HasSubstr("domain nvidia.com/gpu.clique=c.A is kept for it while it waits"));
}

// Clique A runs only gpusched's pods: kept for the gang, it drains (a gang may wait longer for
// it: gang_domains.h). A CPU-only job of the default scheduler on a2 is a pod gpusched cannot keep
// off, and A no longer drains; /debug/inventory shows both.
TEST_F(GangReservation, TheKeptCliqueDrainsUntilAPodOfAnotherSchedulerRunsThere) {
  Load(WithGang(Cluster()));
  std::optional<DomainReservation> r = Reserved();
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->drains);
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(service_->DebugInventory("", false), &d).ok());
  EXPECT_TRUE(d["domains"]["keptFor"]["drains"].GetBool());
  ASSERT_STREQ(d["domains"]["items"][0]["domain"].GetString(), "c.A");
  EXPECT_EQ(d["domains"]["items"][0]["otherSchedulerNodes"].GetInt(), 0);

  std::vector<std::string> items = WithGang(Cluster());
  items.push_back(PodJson{.name = "job", .uid = "job", .node = "a2", .phase = "Running",
                          .containers = {{.name = "c", .requests = {{"cpu", "8"}}}}, .scheduler = "default-scheduler"}
                      .ToJson());
  Load(items);
  r = Reserved();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->domain, "c.A");
  EXPECT_FALSE(r->drains);
  ASSERT_TRUE(json::Parse(service_->DebugInventory("", false), &d).ok());
  EXPECT_FALSE(d["domains"]["keptFor"]["drains"].GetBool());
  ASSERT_STREQ(d["domains"]["items"][0]["domain"].GetString(), "c.A");
  EXPECT_EQ(d["domains"]["items"][0]["otherSchedulerNodes"].GetInt(), 1);
  EXPECT_EQ(d["domains"]["items"][1]["otherSchedulerNodes"].GetInt(), 0);
}

// A 4-GPU pod outside gangs fits only on A's whole nodes. Kept off them, it fits nowhere and
// waits, as the gang does; before, it took a2 and the gang waited for A once more. A pod of
// higher priority than the gang's, and a DaemonSet's, are not kept off.
TEST_F(GangReservation, APodOutsideGangsStaysOffTheKeptCliqueEvenWhereNothingElseFits) {
  Load(WithGang(Cluster()));
  PodJson pod{.name = "solo", .namespace_name = "ml", .uid = "solo", .containers = {testing::WholeGpus("c", 4)}};
  std::string reply = Filter(pod);
  EXPECT_TRUE(testing::KeptNodes(reply).empty()) << reply;
  EXPECT_THAT(reply, HasSubstr("domain nvidia.com/gpu.clique=c.A is kept for gang ml/train, which waits for room"));
  StatusOr<Explanation> e = Explain(testing::DecodedPod(pod.ToJson()), std::nullopt,
                                    EvaluationInputs{.snapshot = inventory_.Snapshot().get(), .options = &options_});
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_THAT(e->summary, HasSubstr("0/8 nodes fit"));
  auto a2 = std::find_if(e->nodes.begin(), e->nodes.end(), [](const NodeExplanation& n) { return n.node == "a2"; });
  ASSERT_NE(a2, e->nodes.end());
  EXPECT_THAT(Reasons(*a2), ElementsAre(HasSubstr("kept for gang ml/train")));
  PodJson urgent = pod;
  urgent.spec_extra = R"("priority":1000)";
  EXPECT_THAT(testing::KeptNodes(Filter(urgent)), ElementsAre("a2", "a3", "a4"));
  PodJson daemon = pod;
  daemon.controller_uid = "ds";
  daemon.controller_kind = "DaemonSet";
  EXPECT_THAT(testing::KeptNodes(Filter(daemon)), ElementsAre("a2", "a3", "a4"));
}

// A CPU-only pod that names gpusched goes to the fullest clique in use, B, either way; with the
// gang waiting, A is refused it with the reservation's reason.
TEST_F(GangReservation, ACpuOnlyPodIsKeptOffTheKeptCliqueToo) {
  Load(WithGang(Cluster()));
  PodJson cpu{.name = "etl", .namespace_name = "ml", .uid = "etl", .containers = {{.name = "c", .requests = {{"cpu", "8"}}}}};
  std::string reply = Filter(cpu);
  EXPECT_THAT(testing::KeptNodes(reply), ElementsAre("b1", "b2", "b3", "b4"));
  EXPECT_THAT(reply, HasSubstr("is kept for gang ml/train"));
}

// Preempt drops the kept clique's nodes for a pod kept off it: evicting there would make room the
// pod is not given, and the victims would go for nothing. The small pods run at priority -10.
TEST_F(GangReservation, PreemptEvictsNothingInTheKeptCliqueForAPodKeptOffIt) {
  std::vector<std::string> items = WithGang(Cluster());
  for (std::string& item : items) {
    if (item.find("\"small-") != std::string::npos) item.replace(item.find("\"spec\":{") + 8, 0, R"("priority":-10,)");
  }
  Load(items);
  PodJson gpu{.name = "solo", .namespace_name = "ml", .uid = "solo", .containers = {testing::WholeGpus("c", 4)}};
  PodJson cpu{.name = "etl", .namespace_name = "ml", .uid = "etl", .containers = {{.name = "c", .requests = {{"cpu", "8"}}}}};
  for (const PodJson& pod : {gpu, cpu}) {
    StatusOr<std::string> reply = service_->Preempt(testing::PreemptMetaJson(pod.ToJson(), {{"a1", {"small-a1"}}, {"b1", {"small-b1"}}}));
    ASSERT_TRUE(reply.ok()) << reply.status().message();
    EXPECT_THAT(*reply, HasSubstr("\"b1\"")) << pod.name;
    EXPECT_THAT(*reply, ::testing::Not(HasSubstr("\"a1\""))) << pod.name;
  }
  ServiceOptions off;
  off.topology_reserve = false;
  Load(items, off);
  StatusOr<std::string> reply = service_->Preempt(testing::PreemptMetaJson(gpu.ToJson(), {{"a1", {"small-a1"}}, {"b1", {"small-b1"}}}));
  ASSERT_TRUE(reply.ok());
  EXPECT_THAT(*reply, HasSubstr("\"a1\""));
}

// Defrag makes no room in the kept clique for a pod kept off it: its plan lands in B, by moving one
// small pod there (where a2 held it without moves); with the reservation off, the plan is a2. A
// pod of higher priority than the gang's is let into A by filter, and by defrag (fifth review:
// defrag judged only the kept gang's own members).
TEST_F(GangReservation, DefragMakesNoRoomInTheKeptCliqueForAPodKeptOffIt) {
  PodJson solo{.name = "solo", .namespace_name = "ml", .uid = "solo", .containers = {testing::WholeGpus("c", 4)}};
  Load(WithGang(Cluster()));
  StatusOr<DefragResult> kept = service_->Defrag(solo.ToJson(), -1, 4);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  ASSERT_TRUE(kept->plan.fits) << kept->plan.reason;
  EXPECT_EQ(kept->plan.node[0], 'b');
  EXPECT_EQ(kept->plan.moves.size(), 1u);
  PodJson urgent = solo;  // above the gang's priority: filter lets it into A, and so does defrag
  urgent.spec_extra = R"("priority":1000)";
  StatusOr<DefragResult> above = service_->Defrag(urgent.ToJson(), -1, 4);
  ASSERT_TRUE(above.ok()) << above.status().message();
  EXPECT_EQ(above->plan.node[0], 'a');
  EXPECT_TRUE(above->plan.moves.empty());
  ServiceOptions off;
  off.topology_reserve = false;
  Load(WithGang(Cluster()), off);
  StatusOr<DefragResult> plain = service_->Defrag(solo.ToJson(), -1, 4);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->plan.node[0], 'a');
  EXPECT_TRUE(plain->plan.moves.empty());
}

// Nothing is kept for a gang that does not wait for room: one short of its minCount, gated (by
// Kueue: not in kube-scheduler's queue), with a member bound, or one no clique could hold even
// empty; nor with topology.reserveForGangs off.
TEST_F(GangReservation, NothingIsKeptForAGangThatDoesNotWaitForRoom) {
  PodJson pod{.name = "solo", .namespace_name = "ml", .uid = "solo", .containers = {testing::WholeGpus("c", 4)}};
  Load(WithGang(Cluster(), "train", 3));
  EXPECT_FALSE(Reserved().has_value()) << "3 of 4 members";
  std::vector<std::string> gated = Cluster();
  for (int i = 0; i < 4; ++i) {
    PodJson m = Member("train", i);
    m.spec_extra += R"(,"schedulingGates":[{"name":"kueue.x-k8s.io/admission"}])";
    gated.push_back(m.ToJson());
  }
  Load(gated);
  EXPECT_FALSE(Reserved().has_value()) << "gated";
  std::vector<std::string> bound = WithGang(Cluster(), "train", 3);
  PodJson running = Member("train", 3);
  running.node = "b4";
  running.phase = "Running";
  bound.push_back(running.ToJson());
  Load(bound);
  EXPECT_FALSE(Reserved().has_value()) << "a member bound";
  std::vector<std::string> big = Cluster();
  big.push_back(Group("huge", 5));
  Load(WithGang(big, "huge", 5));
  EXPECT_FALSE(Reserved().has_value()) << "20 GPUs: no clique of 16 holds it";
  ServiceOptions off;
  off.topology_reserve = false;
  Load(WithGang(Cluster()), off);
  EXPECT_THAT(testing::KeptNodes(Filter(pod)), ElementsAre("a2", "a3", "a4"));
}

// Review findings: a gang whose member fits no node even empty (8 GPUs on 4-GPU nodes), or whose
// pods name another scheduler, waits for nothing gpusched could keep; one of a negative priority
// keeps pods of priority 0 on. A launcher without GPUs does not count as a GPU member.
TEST_F(GangReservation, NothingIsKeptForAGangNoNodeHoldsOrAnotherSchedulers) {
  std::vector<std::string> big = Cluster();
  big.push_back(Group("wide", 2));
  for (int i = 0; i < 2; ++i) {
    PodJson m = Member("wide", i);
    m.containers = {testing::WholeGpus("c", 8)};
    big.push_back(m.ToJson());
  }
  Load(big);
  EXPECT_FALSE(Reserved().has_value()) << "8 GPUs a member on nodes of 4";
  std::vector<std::string> other = Cluster();
  for (int i = 0; i < 4; ++i) {
    PodJson m = Member("train", i);
    m.spec_extra += R"(,"schedulerName":"default-scheduler")";
    other.push_back(m.ToJson());
  }
  Load(other);
  EXPECT_FALSE(Reserved().has_value()) << "the default scheduler's gang";
  std::vector<std::string> ours = Cluster();
  for (int i = 0; i < 4; ++i) {
    PodJson m = Member("train", i);
    m.spec_extra += R"(,"schedulerName":"gpu-scheduler","priority":-10)";
    ours.push_back(m.ToJson());
  }
  Load(ours);
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->priority, -10);
  PodJson solo{.name = "solo", .namespace_name = "ml", .uid = "solo", .containers = {testing::WholeGpus("c", 4)}};
  EXPECT_THAT(testing::KeptNodes(Filter(solo)), ElementsAre("a2", "a3", "a4")) << "priority 0 is above the gang's -10";
  std::vector<std::string> launcher = Cluster();
  launcher.back() = Group("train", 5);
  launcher = WithGang(launcher);
  launcher.push_back(PodJson{.name = "launcher", .namespace_name = "ml", .uid = "launcher",
                             .containers = {{.name = "c", .requests = {{"cpu", "1"}}}},
                             .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"}
                         .ToJson());
  Load(launcher);
  ASSERT_TRUE(Reserved().has_value()) << "minCount 5: a launcher and four GPU members";
  EXPECT_EQ(Reserved()->needs_milli, 16000);
}

// Another gang not above the waiting one's priority is planned off the kept clique (before, it
// took A as soon as A could hold it, and the first gang started over); a pod that names a group
// gpusched does not plan as a gang is kept off like any pod outside gangs; a pod nominated to a
// node of the clique (room a preemption made for it) keeps it.
TEST_F(GangReservation, OtherGangsAndPodsOfOtherGroupsStayOffButANominatedPodKeepsItsNode) {
  std::vector<std::string> items = WithGang(Cluster());
  items.push_back(Group("small", 2));
  for (int i = 0; i < 2; ++i) {
    PodJson m = Member("small", i);
    m.creation_timestamp = "2026-11-30T11:00:00Z";
    items.push_back(m.ToJson());
  }
  Load(items);
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->gang, "ml/train") << "older";
  std::string reply = Filter(Member("small", 0));
  EXPECT_TRUE(testing::KeptNodes(reply).empty()) << reply;
  EXPECT_THAT(reply, ::testing::Not(HasSubstr("\"a2\"]")));
  PodJson loose{.name = "loose", .namespace_name = "ml", .uid = "loose", .containers = {testing::WholeGpus("c", 4)},
                .spec_extra = R"("schedulingGroup":{"podGroupName":"nobody"})"};
  EXPECT_TRUE(testing::KeptNodes(Filter(loose)).empty());
  PodJson nominated{.name = "nominated", .namespace_name = "ml", .uid = "nominated", .containers = {testing::WholeGpus("c", 4)},
                    .nominated_node = "a2"};
  EXPECT_THAT(testing::KeptNodes(Filter(nominated)), ::testing::Contains("a2"));
}

// Second review: gang `small` (two 4-GPU members, created later) is kept off clique A at every
// level, not only the clique's: with a zone on every node and no wait for one clique, it went to
// the zone level and took A; its preempt drops A's nodes; room for it as a group is not made in A.
TEST_F(GangReservation, AnotherGangStaysOffTheKeptCliqueAtEveryLevelAndInPreemptAndDefrag) {
  std::vector<std::string> items = WithGang(Cluster(/*zoned=*/true, R"("priority":-10)"));
  items.push_back(Group("small", 2));
  for (int i = 0; i < 2; ++i) {
    PodJson m = Member("small", i);
    m.creation_timestamp = "2026-11-30T11:00:00Z";
    items.push_back(m.ToJson());
  }
  ServiceOptions options;
  options.topology_fallback_after = std::chrono::seconds(0);
  Load(items, options);
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->gang, "ml/train");
  std::string reply = Filter(Member("small", 0));
  EXPECT_TRUE(testing::KeptNodes(reply).empty()) << reply;
  StatusOr<std::string> preempt = service_->Preempt(testing::PreemptMetaJson(Member("small", 0).ToJson(), {{"a1", {"small-a1"}}}));
  ASSERT_TRUE(preempt.ok());
  EXPECT_THAT(*preempt, ::testing::Not(HasSubstr("\"a1\"")));
  StatusOr<GroupDefragResult> room = service_->DefragGroup("ml/small", "", 4);
  ASSERT_TRUE(room.ok()) << room.status().message();
  for (const placement::GangSlot& slot : room->plan.slots) EXPECT_NE(slot.node[0], 'a') << slot.node;
  // Third review: explain's wouldFitAfter evicted small-a1 for it (one eviction, beside a2), where
  // its plan and group defrag never go; now it evicts in B.
  StatusOr<GroupExplanation> e = service_->ExplainGroup("ml/small", "");
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_TRUE(e->would_fit_after.has_value());
  ASSERT_TRUE(e->would_fit_after->fits) << e->would_fit_after->reason;
  for (const placement::DefragMove& m : e->would_fit_after->moves) EXPECT_EQ(m.from[0], 'b') << m.pod << " from " << m.from;
  for (const placement::GangSlot& slot : e->would_fit_after->slots) EXPECT_EQ(slot.node[0], 'b') << slot.node;
}

// Third review: a gang is judged by its highest pending member's priority in preempt too, as the
// gang plan judges it. Gang `mixed` (members at 10 and -10, the kept gang at 0) is not kept off A;
// preempt for its -10 member dropped A's nodes while the plan put the gang there.
TEST_F(GangReservation, PreemptJudgesAGangMemberByItsGangsHighestPriority) {
  // `mixed` does not wait (its first member is nominated), so A is kept for `train`.
  std::vector<std::string> three = WithGang(Cluster(/*zoned=*/false, R"("priority":-20)"));
  three.push_back(Group("mixed", 2));
  for (int i = 0; i < 2; ++i) {
    PodJson m = Member("mixed", i);
    m.spec_extra += i == 0 ? R"(,"priority":10)" : R"(,"priority":-10)";
    m.nominated_node = i == 0 ? "b1" : "";
    three.push_back(m.ToJson());
  }
  Load(three);
  ASSERT_TRUE(Reserved().has_value());
  ASSERT_EQ(Reserved()->gang, "ml/train");
  PodJson low = Member("mixed", 1);
  low.spec_extra += R"(,"priority":-10)";
  StatusOr<std::string> preempt = service_->Preempt(testing::PreemptMetaJson(low.ToJson(), {{"a1", {"small-a1"}}}));
  ASSERT_TRUE(preempt.ok());
  EXPECT_THAT(*preempt, HasSubstr("\"a1\"")) << *preempt;
}

// Third review: the members an empty domain holds are counted as they fit: one per node with a
// host port or anti-affinity per node that picks members, none on nodes without an extended
// resource they ask (unless DRA serves it, KEP 5004). A gang kept apart above nodes
// (anti-affinity per zone that picks members) is not judged: nothing is kept for it. A term
// that picks no member changes nothing (fourth review: any term counted one per node, and a gang
// with a common "away from other jobs" term never had a domain kept). Five 1-GPU members
// labelled job=train; cliques A and B of four 4-GPU nodes each, all whole. Nodes whose
// allocatable lists nothing but GPUs (written by hand) are not counted against.
TEST_F(GangReservation, MembersAreCountedAsTheyFitANodeOrNotJudged) {
  auto items = [](const std::function<void(PodJson&)>& edit, const std::string& rdma_on_a = "", bool lists = true) {
    std::vector<std::string> out;
    for (const std::string& name : kAll) {
      testing::NodeJson n = testing::NvidiaNode(name, 4);
      n.lists_other_resources = lists;
      n.extra_labels[kClique] = name[0] == 'a' ? "c.A" : "c.B";
      if (!rdma_on_a.empty() && name[0] == 'a') n.extra_allocatable["example.com/rdma"] = rdma_on_a;
      out.push_back(n.ToJson());
    }
    out.push_back(Group("train", 5));
    for (int i = 0; i < 5; ++i) {
      PodJson m = Member("train", i);
      m.containers = {testing::WholeGpus("c", 1)};
      m.labels = {{"job", "train"}};
      edit(m);
      out.push_back(m.ToJson());
    }
    return out;
  };
  auto anti = [](const std::string& key, const std::string& job = "train") {
    return fmt::format(R"(,"affinity":{{"podAntiAffinity":{{"requiredDuringSchedulingIgnoredDuringExecution":[)"
                       R"({{"labelSelector":{{"matchLabels":{{"job":"{}"}}}},"topologyKey":"{}"}}]}}}})",
                       job, key);
  };
  Load(items([](PodJson&) {}));
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->domain, "c.A");  // 16 places in each clique
  Load(items([](PodJson& m) { m.containers[0].host_ports = {8080}; }));
  EXPECT_FALSE(Reserved().has_value()) << "one member per node: four places per clique";
  Load(items([&](PodJson& m) { m.spec_extra += anti("kubernetes.io/hostname"); }));
  EXPECT_FALSE(Reserved().has_value()) << "anti-affinity per node: four places per clique";
  Load(items([&](PodJson& m) { m.spec_extra += anti("topology.kubernetes.io/zone"); }));
  EXPECT_FALSE(Reserved().has_value()) << "anti-affinity per zone: not judged";
  for (const char* key : {"kubernetes.io/hostname", "topology.kubernetes.io/zone"}) {
    Load(items([&](PodJson& m) { m.spec_extra += anti(key, "etl"); }));
    EXPECT_TRUE(Reserved().has_value()) << key << ": the term picks no member";
  }
  auto rdma = [](PodJson& m) {
    m.containers[0].requests["example.com/rdma"] = "1";
    m.containers[0].limits["example.com/rdma"] = "1";
  };
  Load(items(rdma));
  EXPECT_FALSE(Reserved().has_value()) << "no node lists example.com/rdma";
  Load(items(rdma, "", false));
  EXPECT_TRUE(Reserved().has_value()) << "nodes whose allocatable lists only GPUs (by hand): not counted against";
  Load(items(rdma, "1"));
  EXPECT_FALSE(Reserved().has_value()) << "four places in A, one per node";
  Load(items(rdma, "2"));
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->domain, "c.A");
  std::vector<std::string> served = items(rdma);  // DRA serves example.com/rdma: nodes list none
  served.push_back(R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"rdma.example.com"},)"
                   R"("spec":{"selectors":[{"cel":{"expression":"device.driver == 'rdma.example.com'"}}],)"
                   R"("extendedResourceName":"example.com/rdma"}})");
  Load(served);
  EXPECT_TRUE(Reserved().has_value()) << "a resource DRA serves is not counted against allocatable";
  served = items(rdma, "1");  // A's device plugin lists one: DRA serves it only on B (dra::ServedOn)
  served.push_back(R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"rdma.example.com"},)"
                   R"("spec":{"selectors":[{"cel":{"expression":"device.driver == 'rdma.example.com'"}}],)"
                   R"("extendedResourceName":"example.com/rdma"}})");
  Load(served);
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->domain, "c.B") << "four places in A, one per node; sixteen in B";
}

// Second review: the room a pod holds counts only where it is (a pod nominated to b1 is kept off
// A); members are counted as the largest of them (2+3+3+3+3 GPUs on four 4-GPU nodes: five do not
// fit, though five of the 2-GPU one would); a gang at the lowest priority does not come first.
TEST_F(GangReservation, RoomHeldElsewhereTheLargestMemberAndTheLowestPriority) {
  Load(WithGang(Cluster()));
  PodJson nominated{.name = "nominated", .namespace_name = "ml", .uid = "nominated", .containers = {testing::WholeGpus("c", 4)},
                    .nominated_node = "b1"};
  EXPECT_TRUE(testing::KeptNodes(Filter(nominated)).empty());
  std::vector<std::string> mixed = Cluster();
  mixed.back() = Group("train", 5);
  for (int i = 0; i < 5; ++i) {
    PodJson m = Member("train", i);
    m.containers = {testing::WholeGpus("c", i == 0 ? 2 : 3)};
    mixed.push_back(m.ToJson());
  }
  Load(mixed);
  EXPECT_FALSE(Reserved().has_value());
  std::vector<std::string> lowest = Cluster();
  lowest.push_back(Group("floor", 4));
  for (int i = 0; i < 4; ++i) {
    PodJson m = Member("floor", i);
    m.spec_extra += R"(,"priority":-2147483648)";
    m.creation_timestamp = "2026-11-29T10:00:00Z";
    lowest.push_back(m.ToJson());
  }
  Load(WithGang(lowest));
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->gang, "ml/train") << "priority 0 before the lowest, older one";
}

// A DaemonSet's pod stays when a node empties: on nodes of 63 CPUs (testing::NvidiaNode), members
// asking 60 CPUs fit beside none that asks 8 (review finding: the domain was kept, though no
// member could ever run there).
TEST_F(GangReservation, WhatDaemonSetsRequestIsNotRoomForTheGang) {
  std::vector<std::string> items = Cluster();
  for (const std::string& node : kAll) {
    items.push_back(PodJson{.name = "ds-" + node, .uid = "ds-" + node, .node = node, .phase = "Running",
                            .containers = {{.name = "c", .requests = {{"cpu", "8"}}}}, .controller_uid = "ds",
                            .controller_kind = "DaemonSet"}
                        .ToJson());
  }
  for (int i = 0; i < 4; ++i) {
    PodJson m = Member("train", i);
    m.containers[0].requests["cpu"] = "60";
    items.push_back(m.ToJson());
  }
  Load(items);
  EXPECT_FALSE(Reserved().has_value());
  for (int i = 0; i < 4; ++i) items.pop_back();
  Load(WithGang(items));
  EXPECT_TRUE(Reserved().has_value()) << "members asking no CPU fit beside them";
}

// Third review: a gang with a member already running in the kept clique joins it there (before,
// it was kept off and refused); members are counted as the largest in each resource (one 2-GPU
// member of 1 CPU and five of 1 GPU and 60 CPUs: one member a node, five nodes needed, none
// kept); the kept gang's own member may have room made in its clique by defrag.
TEST_F(GangReservation, MembersInTheKeptCliqueJoinItResourcesCountAsTheLargestAndTheGangMayDefrag) {
  std::vector<std::string> items = WithGang(Cluster());
  items.push_back(Group("pair", 2));
  PodJson running = Member("pair", 0);
  running.node = "a2";
  running.phase = "Running";
  items.push_back(running.ToJson());
  items.push_back(Member("pair", 1).ToJson());
  Load(items);
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->gang, "ml/train");
  EXPECT_THAT(testing::KeptNodes(Filter(Member("pair", 1))), ElementsAre(::testing::StartsWith("a")));
  StatusOr<DefragResult> room = service_->Defrag(Member("train", 0).ToJson(), -1, 4);
  ASSERT_TRUE(room.ok()) << room.status().message();
  EXPECT_EQ(room->plan.node[0], 'a') << "the kept gang's own member";
  std::vector<std::string> mixed = Cluster();
  mixed.back() = Group("train", 6);
  for (int i = 0; i < 6; ++i) {
    PodJson m = Member("train", i);
    m.containers = {testing::WholeGpus("c", i == 0 ? 2 : 1)};
    m.containers[0].requests["cpu"] = i == 0 ? "1" : "60";
    mixed.push_back(m.ToJson());
  }
  Load(mixed);
  EXPECT_FALSE(Reserved().has_value());
}

// Constraint of a topology level (PodGroup spec.schedulingConstraints.topology) with `key`.
std::string ConstrainedGroup(const std::string& name, const std::string& key) {
  return fmt::format(R"({{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{{"name":"{}","namespace":"ml"}},)"
                     R"("spec":{{"schedulingPolicy":{{"gang":{{"minCount":2}}}},"schedulingConstraints":{{"topology":[{{"key":"{}"}}]}}}}}})",
                     name, key);
}

// `items` with two 4-GPU members, created after ml/train's, of each group named.
std::vector<std::string> WithLaterMembers(std::vector<std::string> items, std::initializer_list<const char*> groups) {
  for (const char* group : groups) {
    for (int i = 0; i < 2; ++i) {
      PodJson m = Member(group, i);
      m.creation_timestamp = "2026-11-30T11:00:00Z";
      items.push_back(m.ToJson());
    }
  }
  return items;
}

// Third review, the fixes without a test of their own: a gang that requires the zone (a level the
// reservation is not for) is not kept off clique A: its plan in zone z1 may use A (before, A's
// nodes were left out and it fitted nowhere); nor is a gang kube-scheduler places per zone (a
// topology constraint of another level): group defrag may make room for it in A's zone, A too.
// Fourth review: preempt, group defrag and explain kept `zonal` off A while its plan used A; one
// judgement (GangKeptOff) now serves them all.
TEST_F(GangReservation, GangsOfAnotherLevelAreNotKeptOff) {
  std::vector<std::string> items = WithGang(Cluster(/*zoned=*/true, R"("priority":-10)"));
  items.push_back(R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"zonal","namespace":"ml",)"
                  R"("annotations":{"gpusched.io/topology-required":"topology.kubernetes.io/zone"}},)"
                  R"("spec":{"schedulingPolicy":{"gang":{"minCount":2}}}})");
  items.push_back(ConstrainedGroup("zoned", "topology.kubernetes.io/zone"));
  Load(WithLaterMembers(items, {"zonal", "zoned"}));
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->gang, "ml/train");
  // Before any filter holds its slots (a slot in A would let it in by itself):
  StatusOr<std::string> preempt = service_->Preempt(testing::PreemptMetaJson(Member("zonal", 0).ToJson(), {{"a1", {"small-a1"}}}));
  ASSERT_TRUE(preempt.ok());
  EXPECT_THAT(*preempt, HasSubstr("\"a1\"")) << *preempt;
  StatusOr<GroupDefragResult> zonal = service_->DefragGroup("ml/zonal", "", 4);
  ASSERT_TRUE(zonal.ok()) << zonal.status().message();
  ASSERT_TRUE(zonal->plan.fits) << zonal->plan.reason;
  for (const placement::GangSlot& slot : zonal->plan.slots) EXPECT_EQ(slot.node[0], 'a') << slot.node;
  EXPECT_THAT(testing::KeptNodes(Filter(Member("zonal", 0))), ElementsAre(::testing::StartsWith("a")));
  StatusOr<GroupDefragResult> room = service_->DefragGroup("ml/zoned", "", 4);
  ASSERT_TRUE(room.ok()) << room.status().message();
  ASSERT_TRUE(room->plan.fits) << room->plan.reason;
  for (const placement::GangSlot& slot : room->plan.slots) EXPECT_EQ(slot.node[0], 'a') << slot.node;
}

// Fourth review: a pod of a group that is no gang (none declared) is judged by its own priority:
// kube-scheduler queues it alone. loose-0 (priority 0) has a pending sibling at 1000; it took the
// kept clique's a2-a4 as if it were of priority 1000.
TEST_F(GangReservation, APodOfAGroupThatIsNoGangIsJudgedByItsOwnPriority) {
  std::vector<std::string> items = WithGang(Cluster());
  PodJson urgent = Member("loose", 1);
  urgent.spec_extra += R"(,"priority":1000)";
  items.push_back(urgent.ToJson());
  items.push_back(Member("loose", 0).ToJson());
  Load(items);
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_TRUE(testing::KeptNodes(Filter(Member("loose", 0))).empty());
  EXPECT_THAT(testing::KeptNodes(Filter(urgent)), ElementsAre("a2", "a3", "a4"));
  StatusOr<GroupDefragResult> room = service_->DefragGroup("ml/loose", "", 4);  // fifth review: it made room in A
  ASSERT_TRUE(room.ok()) << room.status().message();
  ASSERT_TRUE(room->plan.fits) << room->plan.reason;
  for (const placement::GangSlot& slot : room->plan.slots) EXPECT_EQ(slot.node[0], 'b') << slot.node;
}

// Fourth review: a gang whose member already runs in the kept clique joins it there, in every
// verb. Gang `joined` (two 4-GPU members, created after ml/train): joined-0 runs on a2, joined-1
// waits. Its plan puts joined-1 beside it in A (before and after); preempt kept it off A and
// dropped a1, and group defrag made its room in B.
TEST_F(GangReservation, AGangWithAMemberInTheKeptCliqueJoinsItInEveryVerb) {
  std::vector<std::string> items = WithGang(Cluster(/*zoned=*/false, R"("priority":-10)"));
  items.push_back(Group("joined", 2));
  PodJson running = Member("joined", 0);
  running.node = "a2";
  running.phase = "Running";
  items.push_back(running.ToJson());
  PodJson waiting = Member("joined", 1);
  waiting.creation_timestamp = "2026-11-30T11:00:00Z";
  items.push_back(waiting.ToJson());
  Load(items);
  ASSERT_TRUE(Reserved().has_value());
  ASSERT_EQ(Reserved()->gang, "ml/train");
  ASSERT_EQ(Reserved()->domain, "c.A");
  StatusOr<std::string> preempt = service_->Preempt(testing::PreemptMetaJson(waiting.ToJson(), {{"a1", {"small-a1"}}}));
  ASSERT_TRUE(preempt.ok());
  EXPECT_THAT(*preempt, HasSubstr("\"a1\"")) << *preempt;
  StatusOr<GroupDefragResult> room = service_->DefragGroup("ml/joined", "", 4);
  ASSERT_TRUE(room.ok()) << room.status().message();
  ASSERT_TRUE(room->plan.fits) << room->plan.reason;
  for (const placement::GangSlot& slot : room->plan.slots) EXPECT_EQ(slot.node[0], 'a') << slot.node;
  StatusOr<DefragResult> one = service_->Defrag(waiting.ToJson(), -1, 4);
  ASSERT_TRUE(one.ok()) << one.status().message();
  EXPECT_EQ(one->plan.node[0], 'a') << "defrag for the one member";
  EXPECT_THAT(testing::KeptNodes(Filter(waiting)), ElementsAre(::testing::StartsWith("a")));
}

// Fifth review: a gang's priority is its highest pending member's, launchers without GPUs too, in
// every verb. Gang `mpi`: a launcher of priority 100 (nominated to b1, so the gang waits for
// nothing) and two 4-GPU workers of 0; ml/train (priority 0) waits for clique A. Filter's gang
// plan counted only the workers and kept them off A, while preempt let them in. Without the
// nomination, mpi waits, and comes first: A is kept for it (its workers' 0 put it after train).
TEST_F(GangReservation, AGangsPriorityIsItsHighestPendingMembersLaunchersToo) {
  auto items = [](const std::string& nominated) {
    std::vector<std::string> out = WithGang(Cluster(/*zoned=*/false, R"("priority":-10)"));
    out.push_back(Group("mpi", 3));
    PodJson launcher{.name = "mpi-launcher", .namespace_name = "ml", .uid = "uid-mpi-launcher",
                     .containers = {{.name = "c", .requests = {{"cpu", "1"}}}},
                     .creation_timestamp = "2026-11-30T11:00:00Z", .nominated_node = nominated,
                     .spec_extra = R"("schedulingGroup":{"podGroupName":"mpi"},"priority":100)"};
    out.push_back(launcher.ToJson());
    for (int i = 0; i < 2; ++i) {
      PodJson w = Member("mpi", i);
      w.creation_timestamp = "2026-11-30T11:00:00Z";
      out.push_back(w.ToJson());
    }
    return out;
  };
  Load(items(""));
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->gang, "ml/mpi");
  EXPECT_EQ(Reserved()->priority, 100);
  Load(items("b1"));
  ASSERT_TRUE(Reserved().has_value());
  ASSERT_EQ(Reserved()->gang, "ml/train");
  StatusOr<std::string> preempt = service_->Preempt(testing::PreemptMetaJson(Member("mpi", 0).ToJson(), {{"a1", {"small-a1"}}}));
  ASSERT_TRUE(preempt.ok());
  EXPECT_THAT(*preempt, HasSubstr("\"a1\"")) << *preempt;
  EXPECT_THAT(testing::KeptNodes(Filter(Member("mpi", 0))), ::testing::Contains(::testing::StartsWith("a")));
}

// Fifth review: explain plans a gang whose members hold slots as filter does, off the kept
// clique. Gang `late` (two 2-GPU members, created after ml/train): filter gives them slots in B;
// explain --pod-group planned them across the cluster, into A.
TEST_F(GangReservation, ExplainPlansMembersHoldingSlotsOffTheKeptClique) {
  std::vector<std::string> items = WithGang(Cluster());
  items.push_back(Group("late", 2));
  std::vector<PodJson> late;
  for (int i = 0; i < 2; ++i) {
    late.push_back(Member("late", i));
    late.back().containers = {testing::WholeGpus("c", 2)};
    late.back().creation_timestamp = "2026-11-30T11:00:00Z";
    items.push_back(late.back().ToJson());
  }
  Load(items);
  ASSERT_TRUE(Reserved().has_value());
  ASSERT_EQ(Reserved()->gang, "ml/train");
  EXPECT_THAT(testing::KeptNodes(Filter(late[0])), Each(::testing::StartsWith("b")));
  StatusOr<GroupExplanation> e = service_->ExplainGroup("ml/late", "");
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_THAT(e->held, Each(::testing::Not(::testing::IsEmpty()))) << "the members hold slots";
  ASSERT_TRUE(e->plan.fits) << e->plan.reason;
  for (const placement::GangSlot& slot : e->plan.slots) EXPECT_EQ(slot.node[0], 'b') << slot.node;
}

// Fifth review: a plan that makes room by moving pods never lands one of the gang's priority or
// lower in the kept clique, whose filter would refuse its replacement. Every node runs a 1-GPU
// pod; a member of ml/train and `urgent` (4 GPUs, above the gang's priority) may have their room
// in A, but the pod moved off its node goes to B (before, train-0's went to a2), as do those group
// defrag moves for ml/train (sixth review: untested). Moved pods above the gang's priority may
// land in A, as filter lets them in.
TEST_F(GangReservation, AMovedPodOfTheGangsPriorityOrLowerNeverLandsInTheKeptClique) {
  auto items = [](const std::string& small_extra, int members) {
    std::vector<std::string> out;
    for (const std::string& name : kAll) {
      testing::NodeJson n = testing::NvidiaNode(name, 4);
      n.extra_labels[kClique] = name[0] == 'a' ? "c.A" : "c.B";
      out.push_back(n.ToJson());
      PodJson small = Running("small-" + name, name, 1);
      small.spec_extra = small_extra;
      out.push_back(small.ToJson());
    }
    out.push_back(Group("train", members));
    return WithGang(out, "train", members);
  };
  Load(items("", 4));
  ASSERT_TRUE(Reserved().has_value());
  ASSERT_EQ(Reserved()->domain, "c.A");
  PodJson urgent{.name = "urgent", .namespace_name = "ml", .uid = "urgent", .containers = {testing::WholeGpus("c", 4)},
                 .spec_extra = R"("priority":1000)"};
  for (const PodJson& pod : {Member("train", 0), urgent}) {
    StatusOr<DefragResult> room = service_->Defrag(pod.ToJson(), -1, 4);
    ASSERT_TRUE(room.ok()) << room.status().message();
    ASSERT_TRUE(room->plan.fits) << room->plan.reason;
    ASSERT_EQ(room->plan.moves.size(), 1u) << pod.name;
    EXPECT_EQ(room->plan.moves[0].to[0], 'b') << pod.name << " " << room->plan.moves[0].to;
  }
  StatusOr<DefragResult> own = service_->Defrag(Member("train", 0).ToJson(), -1, 4);
  ASSERT_TRUE(own.ok());
  EXPECT_EQ(own->plan.node[0], 'a') << "the kept gang's member has its room in A";
  Load(items("", 2));
  ASSERT_TRUE(Reserved().has_value());
  ASSERT_EQ(Reserved()->domain, "c.A");
  StatusOr<GroupDefragResult> group = service_->DefragGroup("ml/train", "", 4);
  ASSERT_TRUE(group.ok()) << group.status().message();
  ASSERT_TRUE(group->plan.fits) << group->plan.reason;
  ASSERT_FALSE(group->plan.moves.empty());
  for (const placement::DefragMove& m : group->plan.moves) EXPECT_EQ(m.to[0], 'b') << "group defrag: " << m.pod << " to " << m.to;
  Load(items(R"("priority":500)", 4));
  StatusOr<DefragResult> above = service_->Defrag(Member("train", 0).ToJson(), -1, 4);
  ASSERT_TRUE(above.ok()) << above.status().message();
  ASSERT_EQ(above->plan.moves.size(), 1u);
  EXPECT_EQ(above->plan.moves[0].to[0], 'a') << "a moved pod of priority 500 may stay in A: " << above->plan.moves[0].to;
}

// A gang kube-scheduler places per clique (a constraint of the reservation's own level) competes
// for the kept clique as any gang does. Gang `racked`, created after ml/train: filter refuses A's
// nodes to its members with the reservation's reason (before, it took a2 and a3, and train waited
// again), preempt drops A's candidates, group defrag and explain --pod-group make its room in B.
// Created first, it waits first, and A is kept for it.
TEST_F(GangReservation, AGangPlacedPerCliqueIsKeptOffTheKeptCliqueOrHasItKept) {
  std::vector<std::string> items = WithGang(Cluster(/*zoned=*/false, R"("priority":-10)"));
  items.push_back(ConstrainedGroup("racked", kClique));
  Load(WithLaterMembers(items, {"racked"}));
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->gang, "ml/train");
  std::string reply = Filter(Member("racked", 0));
  EXPECT_TRUE(testing::KeptNodes(reply).empty()) << reply;
  EXPECT_THAT(reply, HasSubstr("kept for gang ml/train"));
  StatusOr<std::string> preempt =
      service_->Preempt(testing::PreemptMetaJson(Member("racked", 0).ToJson(), {{"a1", {"small-a1"}}, {"b1", {"small-b1"}}}));
  ASSERT_TRUE(preempt.ok());
  EXPECT_THAT(*preempt, ::testing::Not(HasSubstr("\"a1\"")));
  EXPECT_THAT(*preempt, HasSubstr("\"b1\"")) << "a candidate outside the kept clique stays";
  StatusOr<GroupDefragResult> room = service_->DefragGroup("ml/racked", "", 4);
  ASSERT_TRUE(room.ok()) << room.status().message();
  ASSERT_TRUE(room->plan.fits) << room->plan.reason;
  EXPECT_EQ(room->domain, "c.B");
  StatusOr<GroupExplanation> e = service_->ExplainGroup("ml/racked", "");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_FALSE(e->plan.fits);
  ASSERT_TRUE(e->would_fit_after.has_value());
  for (const placement::GangSlot& slot : e->would_fit_after->slots) EXPECT_EQ(slot.node[0], 'b') << slot.node;

  std::vector<std::string> first = Cluster();  // ml/train's members come an hour after racked's
  first.push_back(ConstrainedGroup("racked", kClique));
  for (int i = 0; i < 2; ++i) first.push_back(Member("racked", i).ToJson());
  for (int i = 0; i < 4; ++i) {
    PodJson m = Member("train", i);
    m.creation_timestamp = "2026-11-30T11:00:00Z";
    first.push_back(m.ToJson());
  }
  Load(first);
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->gang, "ml/racked");
  EXPECT_EQ(Reserved()->domain, "c.A");
  EXPECT_THAT(testing::KeptNodes(Filter(Member("racked", 0))), ElementsAre(::testing::StartsWith("a")));
}

// Third review: gang `mid` (three 4-GPU members, created just now) is kept off clique A, kept for
// `train`; cliques B and C hold two whole nodes each. No clique it may use could ever hold it, so
// it does not wait for one but goes to the zone level at once, on B and C. Before, A counted as
// a clique that could hold it, and it waited 300 s for a domain it could not have.
TEST_F(GangReservation, AGangKeptOffTheDomainDoesNotWaitForIt) {
  std::vector<std::string> items, names;
  for (const char* name : {"a1", "a2", "a3", "a4", "b1", "b2", "c1", "c2"}) {
    testing::NodeJson n = testing::NvidiaNode(name, 4);
    n.extra_labels[kClique] = fmt::format("c.{}", static_cast<char>(std::toupper(name[0])));
    n.extra_labels["topology.kubernetes.io/zone"] = "z1";
    items.push_back(n.ToJson());
    names.push_back(name);
  }
  items.push_back(Running("small-a1", "a1", 1).ToJson());
  items.push_back(Group("train", 4));
  items = WithGang(items);
  items.push_back(Group("mid", 3));
  std::string now = FormatRfc3339(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::system_clock::now().time_since_epoch()).count());
  for (int i = 0; i < 3; ++i) {
    PodJson m = Member("mid", i);
    m.creation_timestamp = now;
    items.push_back(m.ToJson());
  }
  Load(items);
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->domain, "c.A");
  std::string reply = service_->Filter(testing::ArgsWithNames(Member("mid", 0).ToJson(), names));
  EXPECT_THAT(testing::KeptNodes(reply), ElementsAre(::testing::AnyOf(::testing::StartsWith("b"), ::testing::StartsWith("c"))))
      << reply;
}

// kube-scheduler's queue pops the higher priority first, then the older: the domain is kept for
// that gang.
TEST_F(GangReservation, TheGangKeptForIsTheOneKubeSchedulerTriesFirst) {
  std::vector<std::string> items = Cluster();
  items.push_back(Group("later", 4));
  for (int i = 0; i < 4; ++i) {
    PodJson m = Member("later", i);
    m.creation_timestamp = "2026-11-30T11:00:00Z";
    items.push_back(m.ToJson());
  }
  items = WithGang(items);  // created 10:00
  Load(items);
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->gang, "ml/train") << "older";
  for (std::string& item : items) {
    if (item.find("\"later-") != std::string::npos) item.replace(item.find("\"spec\":{") + 8, 0, R"("priority":10,)");
  }
  Load(items);
  ASSERT_TRUE(Reserved().has_value());
  EXPECT_EQ(Reserved()->gang, "ml/later") << "higher priority";
  EXPECT_EQ(Reserved()->priority, 10);
}

}  // namespace gang_reservation_test
}  // namespace gpusched::extender
