// Gangs across topology domains (extender/gang_domains.h, issue 34 §2): a gang goes inside one
// domain of the lowest level where one holds it, the fullest such domain first, with a fallback to
// the next level and then the cluster; required by a group annotation, it goes inside one domain
// or nowhere. Carried out by filter: each member is kept on its slot node.
#include "gpusched/extender/gang_domains.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "gpusched/common/clock.h"
#include "gpusched/common/time_format.h"
#include "gpusched/extender/group_explain.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace gang_domains_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::PodJson;

constexpr char kClique[] = "nvidia.com/gpu.clique";

// A PodGroup ml/train of `min_count`, with the annotation requiring `required` when given.
std::string Group(int min_count, const std::string& required = "") {
  std::string annotations = required.empty() ? "" : fmt::format(R"(,"annotations":{{"gpusched.io/topology-required":"{}"}})", required);
  return fmt::format(R"({{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{{"name":"train","namespace":"ml"{}}},)"
                     R"("spec":{{"schedulingPolicy":{{"gang":{{"minCount":{}}}}}}}}})",
                     annotations, min_count);
}

PodJson Member(int i, int gpus) {
  return PodJson{.name = fmt::format("w{}", i), .namespace_name = "ml", .uid = fmt::format("uid-w{}", i),
                 .containers = {testing::WholeGpus("c", gpus)}, .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"};
}

// Cliques A (a1-a3) and B (b1-b3) of 4-GPU nodes in zone z1; b1 runs a 2-GPU pod.
std::vector<std::string> Nodes(bool with_zone_label = true) {
  std::vector<std::string> out;
  for (const char* clique : {"A", "B"}) {
    for (int i = 1; i <= 3; ++i) {
      testing::NodeJson n = testing::NvidiaNode(fmt::format("{}{}", static_cast<char>(std::tolower(clique[0])), i), 4);
      n.extra_labels[kClique] = fmt::format("cluster-1.{}", clique);
      if (with_zone_label) n.extra_labels["topology.kubernetes.io/zone"] = "z1";
      out.push_back(n.ToJson());
    }
  }
  out.push_back(PodJson{.name = "busy", .uid = "busy", .node = "b1", .phase = "Running", .containers = {testing::WholeGpus("c", 2)}}.ToJson());
  return out;
}

class GangDomains : public ::testing::Test {
 protected:
  void Load(std::vector<std::string> items, ServiceOptions options = {}) {
    ClusterObjects objects;
    ASSERT_TRUE(kubejson::AppendClusterJson(testing::ListJson(items), &objects).ok());
    inventory_.ReplaceCluster(std::move(objects));
    service_ = std::make_unique<Service>(&inventory_, std::move(options));
  }
  // The nodes a member's filter keeps among every node.
  std::vector<std::string> Kept(const PodJson& member) {
    return testing::KeptNodes(service_->Filter(testing::ArgsWithNames(member.ToJson(), {"a1", "a2", "a3", "b1", "b2", "b3"})));
  }
  std::string Reply(const PodJson& member) {
    return service_->Filter(testing::ArgsWithNames(member.ToJson(), {"a1", "a2", "a3", "b1", "b2", "b3"}));
  }
  inventory::Inventory inventory_{inventory::InventoryOptions{.scheduler_name = "gpu-scheduler"}};
  std::unique_ptr<Service> service_;
};

// Both cliques hold two 4-GPU members; B, already in use, is taken, and A stays whole (across
// the cluster, binpack would take the first nodes by name: a1 and a2).
TEST_F(GangDomains, AGangGoesInsideTheFullestCliqueThatHoldsIt) {
  std::vector<std::string> items = Nodes();
  items.push_back(Group(2));
  for (int i = 0; i < 2; ++i) items.push_back(Member(i, 4).ToJson());
  Load(items);
  StatusOr<GroupExplanation> e = service_->ExplainGroup("ml/train", "");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->domain, "nvidia.com/gpu.clique=cluster-1.B") << "explain plans as filter does";
  std::vector<std::string> first = Kept(Member(0, 4));
  std::vector<std::string> second = Kept(Member(1, 4));
  ASSERT_EQ(first.size(), 1u);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_THAT((std::vector<std::string>{first[0], second[0]}), ::testing::UnorderedElementsAre("b2", "b3"));
}

// CPU-only jobs run on a1 and a2: clique A has one whole node, B two, though A has more GPUs free.
// A is the fuller (domain_steering.h's IsWholeNode): the gang goes there, and B keeps its two
// whole nodes. Before, the domain with the least free GPU (B) was taken.
TEST_F(GangDomains, TheFullestCliqueIsTheOneWithTheFewestWholeNodes) {
  std::vector<std::string> items = Nodes();
  for (const char* node : {"a1", "a2"}) {
    items.push_back(PodJson{.name = fmt::format("job-{}", node), .uid = fmt::format("job-{}", node), .node = node,
                            .phase = "Running", .containers = {{.name = "c", .requests = {{"cpu", "40"}}}},
                            .controller_uid = "job", .controller_kind = "Job"}
                        .ToJson());
  }
  items.push_back(Group(2));
  for (int i = 0; i < 2; ++i) items.push_back(Member(i, 4).ToJson());
  Load(items);
  for (int i = 0; i < 2; ++i) EXPECT_THAT(Kept(Member(i, 4)), ElementsAre(::testing::StartsWith("a"))) << i;
}

// a1 runs a 1-GPU pod (`scheduler`'s: the default scheduler's, or gpusched's own), and gang
// ml/train of three 4-GPU members, created at `created`: no clique holds
// it now, though clique A (kept for it) would when empty.
std::vector<std::string> WaitingGang(const std::string& created, const std::string& scheduler) {
  std::vector<std::string> items = Nodes();
  items.push_back(PodJson{.name = "small", .uid = "small", .node = "a1", .phase = "Running",
                          .containers = {testing::WholeGpus("c", 1)}, .scheduler = scheduler}
                      .ToJson());
  items.push_back(Group(3));
  for (int i = 0; i < 3; ++i) {
    PodJson m = Member(i, 4);
    m.creation_timestamp = created;
    items.push_back(m.ToJson());
  }
  return items;
}

// A pod of another scheduler runs in clique A: more may come, so A need not drain. A gang created
// just now waits for one clique (topology.fallbackAfterSeconds, 300 s), and filter says so; one
// created an hour ago goes to the next level, across the cliques.
TEST_F(GangDomains, AGangWaitsForOneCliqueBeforeItFallsBack) {
  auto items_created = [](const std::string& created) { return WaitingGang(created, "default-scheduler"); };
  auto member = [](int i, const std::string& created) {
    PodJson m = Member(i, 4);
    m.creation_timestamp = created;
    return m;
  };
  std::string now = FormatRfc3339(RealClock().WallMs());
  Load(items_created(now));
  std::string reply = Reply(member(0, now));
  EXPECT_TRUE(testing::KeptNodes(reply).empty()) << reply;
  EXPECT_THAT(reply, HasSubstr("no one domain of nvidia.com/gpu.clique holds it now"));
  // Until the oldest member's creation + 300 s: a text that stays the same while it waits.
  EXPECT_THAT(reply, HasSubstr("it waits for one until " + FormatRfc3339(ParseRfc3339(now).value() + 300 * 1000) +
                               " before it is planned across domains"));
  // Not short of room: unresolvable, so that kube-scheduler evicts nothing for it (review finding).
  rapidjson::Document d;
  ASSERT_TRUE(json::Parse(reply, &d).ok());
  ASSERT_TRUE(d["FailedAndUnresolvableNodes"].IsObject()) << reply;
  EXPECT_EQ(d["FailedAndUnresolvableNodes"].MemberCount(), 6u) << reply;
  // Explain says the same, and offers no evictions for it.
  StatusOr<GroupExplanation> e = service_->ExplainGroup("ml/train", "");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_FALSE(e->plan.fits);
  EXPECT_THAT(e->plan.reason, HasSubstr("before it is planned across domains"));
  EXPECT_FALSE(e->would_fit_after.has_value());

  std::string hour_ago = FormatRfc3339(RealClock().WallMs() - 3600 * 1000);
  Load(items_created(hour_ago));
  StatusOr<GroupExplanation> fell_back = service_->ExplainGroup("ml/train", "");
  ASSERT_TRUE(fell_back.ok());
  EXPECT_TRUE(fell_back->plan.fits) << fell_back->plan.reason;
  EXPECT_EQ(fell_back->domain, "topology.kubernetes.io/zone=z1");
  std::set<std::string> used;
  for (int i = 0; i < 3; ++i) {
    std::vector<std::string> kept = Kept(member(i, hour_ago));
    ASSERT_EQ(kept.size(), 1u) << i;
    used.insert(kept[0]);
  }
  EXPECT_EQ(used.size(), 3u);

  ServiceOptions at_once;
  at_once.topology_fallback_after = std::chrono::seconds(0);
  Load(items_created(now), at_once);
  EXPECT_EQ(Kept(member(0, now)).size(), 1u) << "fallbackAfterSeconds: 0 falls back at once";
}

// Only gpusched's pods run in clique A, kept for the gang: they stay off it while the gang waits,
// so A drains, and the gang waits for it up to topology.drainWaitSeconds (4 hours) rather than
// 300 s. Before, a gang created an hour ago was split across the cliques.
TEST_F(GangDomains, AGangWaitsLongerForACliqueThatDrains) {
  auto member = [](const std::string& created) {
    PodJson m = Member(0, 4);
    m.creation_timestamp = created;
    return m;
  };
  int64_t now_ms = RealClock().WallMs();
  std::string hour_ago = FormatRfc3339(now_ms - 3600 * 1000);
  Load(WaitingGang(hour_ago, "gpu-scheduler"));
  std::string reply = Reply(member(hour_ago));
  EXPECT_TRUE(testing::KeptNodes(reply).empty()) << reply;
  EXPECT_THAT(reply, HasSubstr("it waits for one until " + FormatRfc3339(ParseRfc3339(hour_ago).value() + 14400 * 1000) +
                               " before it is planned across domains (topology.drainWaitSeconds"));
  StatusOr<GroupExplanation> e = service_->ExplainGroup("ml/train", "");
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_FALSE(e->plan.fits) << "explain waits as filter does";
  EXPECT_THAT(e->plan.reason, HasSubstr("topology.drainWaitSeconds"));

  std::string five_hours_ago = FormatRfc3339(now_ms - 5 * 3600 * 1000);
  Load(WaitingGang(five_hours_ago, "gpu-scheduler"));
  EXPECT_EQ(Kept(member(five_hours_ago)).size(), 1u) << "after 4 hours it spans the cliques";

  ServiceOptions no_drain_wait;
  no_drain_wait.topology_drain_wait = std::chrono::seconds(0);
  Load(WaitingGang(hour_ago, "gpu-scheduler"), no_drain_wait);
  EXPECT_EQ(Kept(member(hour_ago)).size(), 1u) << "drainWaitSeconds: 0 waits fallbackAfterSeconds only";
}

// Pods of the default scheduler that do not stop clique A from draining: a DaemonSet's (one runs
// on every node whatever gpusched does), a static pod (owned by its Node) and a terminating one.
TEST_F(GangDomains, DaemonSetStaticAndTerminatingPodsOfOtherSchedulersLeaveTheCliqueDraining) {
  std::string hour_ago = FormatRfc3339(RealClock().WallMs() - 3600 * 1000);
  std::vector<std::string> items = WaitingGang(hour_ago, "gpu-scheduler");
  items.push_back(PodJson{.name = "agent-a2", .uid = "agent-a2", .node = "a2", .phase = "Running",
                          .containers = {{.name = "c", .requests = {{"cpu", "100m"}}}}, .controller_uid = "ds",
                          .controller_kind = "DaemonSet", .scheduler = "default-scheduler"}
                      .ToJson());
  items.push_back(PodJson{.name = "leaving", .uid = "leaving", .node = "a1", .phase = "Running",
                          .containers = {{.name = "c", .requests = {{"cpu", "1"}}}},
                          .deletion_timestamp = "2026-11-30T10:05:00Z", .scheduler = "default-scheduler"}
                      .ToJson());
  items.push_back(PodJson{.name = "static-a3", .uid = "static-a3", .node = "a3", .phase = "Running",
                          .containers = {{.name = "c", .requests = {{"cpu", "100m"}}}}, .controller_uid = "a3",
                          .controller_kind = "Node", .scheduler = "default-scheduler"}
                      .ToJson());
  Load(items);
  PodJson m = Member(0, 4);
  m.creation_timestamp = hour_ago;
  EXPECT_THAT(Reply(m), HasSubstr("(topology.drainWaitSeconds"));
}

// The wait's contract: 300 s from the oldest member's creation at every level; 4 hours at the
// first level while the kept domain drains; never longer with a fallback of 0 (at once stays at
// once), nor where the kept domain does not drain.
TEST(DomainWaitOf, TheDrainWaitIsLongerAtTheFirstLevelOnlyWhileTheKeptDomainDrains) {
  Pod oldest{.uid = "a", .created_ms = 1'000'000};
  Pod younger{.uid = "b", .created_ms = 2'000'000};
  DomainReservation drains{.domain = "c.A", .drains = true};
  ServiceOptions options;
  DomainWait w = DomainWaitOf({younger, oldest}, options, &drains, 1'500'000);
  EXPECT_EQ(w.UntilAt(false), 1'000'000 + 300'000);
  EXPECT_EQ(w.UntilAt(true), 1'000'000 + 14'400'000);
  EXPECT_TRUE(w.Draining());
  EXPECT_EQ(w.NextEnd(), 15'400'000) << "past 300 s: a plan made now holds until the drain wait ends";
  EXPECT_EQ(DomainWaitOf({oldest}, options, &drains, 1'200'000).NextEnd(), 1'300'000) << "until the first end";
  DomainReservation busy{.domain = "c.A", .drains = false};
  EXPECT_EQ(DomainWaitOf({oldest}, options, &busy, 1'500'000).UntilAt(true), 1'300'000);
  EXPECT_EQ(DomainWaitOf({oldest}, options, nullptr, 1'500'000).UntilAt(true), 1'300'000);
  options.topology_fallback_after = std::chrono::seconds(0);
  EXPECT_FALSE(DomainWaitOf({oldest}, options, &drains, 1'500'000).ActiveAt(true)) << "0 falls back at once";
  options.topology_fallback_after = std::chrono::seconds(300);
  options.topology_drain_wait = std::chrono::seconds(0);
  EXPECT_EQ(DomainWaitOf({oldest}, options, &drains, 1'500'000).UntilAt(true), 1'300'000) << "drainWaitSeconds 0: off";
  Pod unknown{.uid = "c"};
  EXPECT_FALSE(DomainWaitOf({unknown}, ServiceOptions{}, &drains, 1'500'000).ActiveAt(true)) << "creation unknown: no wait";
}

// Three 4-GPU members fit only clique A; four fit no clique, and go to the next level (the zone).
TEST_F(GangDomains, AGangNoCliqueHoldsFallsBackToTheNextLevel) {
  std::vector<std::string> items = Nodes();
  items.push_back(Group(3));
  for (int i = 0; i < 3; ++i) items.push_back(Member(i, 4).ToJson());
  Load(items);
  for (int i = 0; i < 3; ++i) EXPECT_THAT(Kept(Member(i, 4)), ElementsAre(::testing::StartsWith("a"))) << i;

  std::vector<std::string> bigger = Nodes();
  bigger.push_back(Group(4));
  for (int i = 0; i < 4; ++i) bigger.push_back(Member(i, 4).ToJson());
  Load(bigger);
  std::set<std::string> used;
  for (int i = 0; i < 4; ++i) {
    std::vector<std::string> kept = Kept(Member(i, 4));
    ASSERT_EQ(kept.size(), 1u) << i;
    used.insert(kept[0]);
  }
  EXPECT_EQ(used.size(), 4u) << "placed across both cliques of the zone";
}

TEST_F(GangDomains, ARequiredCliqueThatNoneHoldsRefusesTheWholeGang) {
  std::vector<std::string> items = Nodes();
  items.push_back(Group(4, kClique));
  for (int i = 0; i < 4; ++i) items.push_back(Member(i, 4).ToJson());
  Load(items);
  std::string reply = Reply(Member(0, 4));
  EXPECT_THAT(testing::KeptNodes(reply), ::testing::IsEmpty());
  EXPECT_THAT(reply, HasSubstr("no one domain of nvidia.com/gpu.clique holds it (nvidia.com/gpu.clique=cluster-1."));
  EXPECT_THAT(reply, HasSubstr("nvidia.com/gpu.clique=cluster-1.A: "));
  EXPECT_THAT(reply, HasSubstr("nvidia.com/gpu.clique=cluster-1.B: "));
}

// The slots are on b2 and b3; kube-scheduler's own filters refuse b2 for w0, so w0 is planned
// again alone among the nodes offered: with the clique required it stays in clique B (where no
// room is left), preferred it may go to A.
TEST_F(GangDomains, AMemberPlannedAgainAloneStaysInItsRequiredDomain) {
  for (bool required : {true, false}) {
    std::vector<std::string> items = Nodes();
    items.push_back(Group(2, required ? kClique : ""));
    for (int i = 0; i < 2; ++i) items.push_back(Member(i, 4).ToJson());
    Load(items);
    ASSERT_THAT(Kept(Member(0, 4)), ElementsAre("b2")) << required;
    std::string reply = service_->Filter(testing::ArgsWithNames(Member(0, 4).ToJson(), {"a1", "a2", "b1"}));
    if (required) {
      EXPECT_THAT(testing::KeptNodes(reply), ::testing::IsEmpty());
      EXPECT_THAT(reply, HasSubstr("fits on none of the nodes offered"));
    } else {
      EXPECT_THAT(testing::KeptNodes(reply), ElementsAre(::testing::StartsWith("a")));
    }
  }
}

// Review finding: w0 is bound in clique A; w1, planned later, joins it, although clique B is now
// the fuller (b1 and b2 busy) and would be taken by a gang planned afresh. explain --pod-group
// plans it there too (before, it planned the pending member afresh, in B).
TEST_F(GangDomains, AMemberPlannedLaterJoinsTheDomainOfItsBoundSibling) {
  std::vector<std::string> items = Nodes();
  items.push_back(Group(2, kClique));
  PodJson bound = Member(0, 4);
  bound.node = "a2";
  bound.phase = "Running";
  items.push_back(bound.ToJson());
  items.push_back(Member(1, 4).ToJson());
  items.push_back(PodJson{.name = "busy2", .uid = "busy2", .node = "b2", .phase = "Running", .containers = {testing::WholeGpus("c", 4)}}.ToJson());
  Load(items);
  StatusOr<GroupExplanation> e = service_->ExplainGroup("ml/train", "");  // before filter holds a slot
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_TRUE(e->plan.fits) << e->plan.reason;
  EXPECT_EQ(e->domain, "nvidia.com/gpu.clique=cluster-1.A") << GroupExplanationText(*e);
  ASSERT_EQ(e->plan.slots.size(), 1u);
  EXPECT_THAT(e->plan.slots[0].node, ::testing::AnyOf("a1", "a3"));
  EXPECT_THAT(Kept(Member(1, 4)), ElementsAre(::testing::AnyOf("a1", "a3")));
}

// w0 of a gang of three 4-GPU members is bound on a2; w1 and w2, created just now, fit clique A
// no more (a1 runs a 1-GPU pod). Beside a sibling already placed, they wait for no domain: they
// go across the cliques at once (review finding: they waited 300 s while w0 held its GPUs).
TEST_F(GangDomains, MembersBesideABoundSiblingDoNotWaitForADomain) {
  std::string now = FormatRfc3339(RealClock().WallMs());
  std::vector<std::string> items = Nodes();
  items.push_back(PodJson{.name = "small", .uid = "small", .node = "a1", .phase = "Running", .containers = {testing::WholeGpus("c", 1)}}.ToJson());
  items.push_back(Group(3));
  PodJson bound = Member(0, 4);
  bound.node = "a2";
  bound.phase = "Running";
  items.push_back(bound.ToJson());
  std::vector<PodJson> pending;
  for (int i = 1; i < 3; ++i) {
    pending.push_back(Member(i, 4));
    pending.back().creation_timestamp = now;
    items.push_back(pending.back().ToJson());
  }
  Load(items);
  for (const PodJson& m : pending) EXPECT_EQ(Kept(m).size(), 1u) << Reply(m);
}

TEST_F(GangDomains, WithoutTopologyLabelsAGangIsPlannedAsBefore) {
  std::vector<std::string> items = {testing::NvidiaNode("a1", 4).ToJson(), testing::NvidiaNode("a2", 4).ToJson(), Group(2)};
  for (int i = 0; i < 2; ++i) items.push_back(Member(i, 4).ToJson());
  ServiceOptions none;
  none.topology_levels.clear();
  Load(items, none);
  std::vector<std::string> without = {Kept(Member(0, 4)).at(0), Kept(Member(1, 4)).at(0)};
  Load(items);
  EXPECT_EQ((std::vector<std::string>{Kept(Member(0, 4)).at(0), Kept(Member(1, 4)).at(0)}), without);
}

}  // namespace gang_domains_test
}  // namespace gpusched::extender
