// Gangs with a topology constraint, which kube-scheduler tries one domain at a time: one plan per
// domain, each member's filter keeping its slot of the domain offered, the same plan for every
// member of a pass, a domain that cannot hold the gang refused with why, and nothing held.
#include "gpusched/extender/domain_plans.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <deque>
#include <random>

#include "cluster_json.h"
#include "gpusched/extender/service.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"
#include "scheduler_emulator.h"

namespace gpusched::extender {
namespace domain_plans_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using namespace gpusched::testing;

constexpr std::string_view kGroup =
    R"({"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{"name":"train","namespace":"ml"},)"
    R"("spec":{"schedulingPolicy":{"gang":{"minCount":2}},"schedulingConstraints":{"topology":[{"key":"rack"}]}}})";

// A pending member of ml/train asking 60% of one GPU.
PodJson Member(const std::string& name) {
  return PodJson{.name = name, .namespace_name = "ml", .uid = "uid-" + name, .containers = {Mgpu("s", 60, 4096)},
                 .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"};
}

NodeJson InRack(NodeJson n, const std::string& rack) {
  n.extra_labels["rack"] = rack;
  return n;
}

// Rack a: m0 (GPU 0 free, GPU 1 30% free), a1 and a2 (one free GPU each): the 60% members fit only
// one per node. Rack b: b0, two free GPUs. Rack c: c0, one GPU 30% free: no member fits.
std::string Cluster() {
  auto busy = [](const std::string& node, int gpu, int core) {
    return PodJson{.name = "busy-" + node, .namespace_name = "base", .uid = "busy-" + node, .node = node, .phase = "Running",
                   .containers = {Mgpu("s", core, 4096)},
                   .annotations = {{"vke.volcengine.com/gpu-index-container-s", std::to_string(gpu)}}}
        .ToJson();
  };
  return ListJson({InRack(MgpuNode("m0", 2, 24576), "a").ToJson(), busy("m0", 1, 70), InRack(MgpuNode("a1", 1, 24576), "a").ToJson(),
                   InRack(MgpuNode("a2", 1, 24576), "a").ToJson(),
                   InRack(MgpuNode("b0", 2, 24576), "b").ToJson(), InRack(MgpuNode("c0", 1, 24576), "c").ToJson(), busy("c0", 0, 70),
                   MgpuNode("loose", 2, 24576).ToJson(), std::string(kGroup), Member("w0").ToJson(), Member("w1").ToJson()});
}

class DomainPlansTest : public ::testing::Test {
 protected:
  void Load(ServiceOptions options = {}) {
    ClusterObjects objects;
    ASSERT_TRUE(kubejson::AppendClusterJson(Cluster(), &objects).ok());
    inventory_.ReplaceCluster(std::move(objects));
    service_ = std::make_unique<Service>(&inventory_, std::move(options));
  }
  std::string Filter(const std::string& member, const std::vector<std::string>& nodes) {
    return service_->Filter(ArgsWithNames(Member(member).ToJson(), nodes));
  }

  inventory::Inventory inventory_;
  std::unique_ptr<Service> service_;
};

// kube-scheduler's pass over rack a filters w0 then w1 among m0 and a1, each counting the other
// only in node totals: judged alone both would keep m0 (and the second bind fail); the domain's
// plan gives them one node each. Rack b's pass puts both on b0. Nothing is held.
TEST_F(DomainPlansTest, EachDomainsPassSteersTheMembersIntoThatDomainsPlan) {
  Load();
  std::vector<std::string> w0 = KeptNodes(Filter("w0", {"m0", "a1"}));
  std::vector<std::string> w1 = KeptNodes(Filter("w1", {"m0", "a1"}));
  ASSERT_THAT(w0, SizeIs(1));
  ASSERT_THAT(w1, SizeIs(1));
  EXPECT_NE(w0[0], w1[0]);
  EXPECT_EQ(KeptNodes(Filter("w0", {"m0", "a1"})), w0);  // the same plan while nothing changes
  EXPECT_THAT(KeptNodes(Filter("w0", {"b0"})), ElementsAre("b0"));
  EXPECT_THAT(KeptNodes(Filter("w1", {"b0"})), ElementsAre("b0"));
  EXPECT_THAT(inventory_.Snapshot()->held_nodes(), IsEmpty());
  EXPECT_EQ(service_->SweepGangs(), 0u);
}

// A domain that cannot hold the gang refuses every member there with why; a node without the
// topology label is in no domain.
TEST_F(DomainPlansTest, ADomainThatCannotHoldTheGangRefusesEveryMemberThere) {
  Load();
  std::string reply = Filter("w0", {"c0", "loose"});
  EXPECT_THAT(KeptNodes(reply), IsEmpty());
  EXPECT_THAT(reply, HasSubstr("gang ml/train in rack=c: the gang does not fit in the domain: 0 of 2 members fit"));
  EXPECT_THAT(reply, HasSubstr("the node has no label rack, the group's topology key"));
}

// kube-scheduler's own filters may refuse a member's slot node (its CPU, a taint, an affinity):
// the member alone is planned again among the domain's nodes offered, beside its sibling's slot,
// never onto the share the sibling was planned on.
TEST_F(DomainPlansTest, AMemberKeptOffItsSlotIsPlannedAloneBesideItsSiblingsSlot) {
  Load();
  std::string s0 = KeptNodes(Filter("w0", {"m0", "a1"}))[0];
  std::string s1 = KeptNodes(Filter("w1", {"m0", "a1"}))[0];
  std::vector<std::string> others = {"m0", "a1"};
  std::erase(others, s1);
  EXPECT_THAT(KeptNodes(Filter("w1", others)), IsEmpty());  // only the sibling's node is left: no room beside it
  EXPECT_EQ(KeptNodes(Filter("w0", {"m0", "a1"}))[0], s0);   // the sibling's slot stayed
  EXPECT_THAT(Filter("w1", others), HasSubstr("not offered, and it fits on no node offered beside the other members' slots"));
  others.push_back("a2");
  EXPECT_THAT(KeptNodes(Filter("w1", others)), ElementsAre("a2"));  // its slot moved there
  EXPECT_THAT(KeptNodes(Filter("w1", {"m0", "a1", "a2"})), ElementsAre("a2"));
  EXPECT_EQ(KeptNodes(Filter("w0", {"m0", "a1", "a2"}))[0], s0);
}

// A change on a node of the domain between two members' filters (a pod there finishing, another
// binding) keeps the plan while its slots still fit: the members of one pass see one plan.
TEST_F(DomainPlansTest, APlanWhoseSlotsStillFitIsKeptWhenTheDomainChanges) {
  Load();
  std::string s0 = KeptNodes(Filter("w0", {"m0", "a1"}))[0];
  inventory_.DeletePod("busy-m0");  // m0's GPU 1 is free now: a new plan might put w0 elsewhere
  std::string s1 = KeptNodes(Filter("w1", {"m0", "a1"}))[0];
  EXPECT_NE(s0, s1);
  EXPECT_EQ(KeptNodes(Filter("w0", {"m0", "a1"}))[0], s0);
}

// A member whose filter comes before the pending-pods watch shows it is planned with its
// siblings, not left out (the group needs it for minCount).
TEST_F(DomainPlansTest, AMemberNotSeenYetIsPlannedWithItsSiblings) {
  Load();
  PodJson late = Member("w2");
  std::vector<std::string> kept = KeptNodes(service_->Filter(ArgsWithNames(late.ToJson(), {"b0"})));
  EXPECT_THAT(kept, ElementsAre("b0"));
}

// With gangs off each member is judged alone: both keep m0, where only one fits.
TEST_F(DomainPlansTest, WithGangsOffBothMembersKeepTheNodeOnlyOneFits) {
  Load(ServiceOptions{.gangs = false});
  EXPECT_THAT(KeptNodes(Filter("w0", {"m0", "a1"})), ElementsAre("m0", "a1"));
  EXPECT_THAT(KeptNodes(Filter("w1", {"m0", "a1"})), ElementsAre("m0", "a1"));
}

// 60 gangs of 2-6 members asking 30-70% of a GPU, each to be placed inside one rack of 4 mGPU
// nodes of 2 GPUs (6 racks, GPUs 0-70% used), through the emulated pod-group cycle's pass per
// domain (test/support/scheduler_emulator.h), the 4 latest gangs running. Gangs on: no gang is
// partly bound and no bind fails; off: the same run fails binds (the test can fail).
struct TopologyRun {
  size_t placed = 0, partial = 0, failed_binds = 0;
};

TopologyRun RunTopologyGangs(bool gangs) {
  std::mt19937 rng(5);
  std::vector<std::string> objects;
  for (int r = 0; r < 6; ++r) {
    for (int n = 0; n < 4; ++n) {
      std::string node = fmt::format("r{}n{}", r, n);
      objects.push_back(InRack(MgpuNode(node, 2, 24576), fmt::format("rack-{}", r)).ToJson());
      for (int g = 0; g < 2; ++g) {
        if (int used = std::vector<int>{0, 30, 50, 70}[rng() % 4]; used > 0) {
          objects.push_back(PodJson{.name = fmt::format("busy-{}-{}", node, g), .namespace_name = "base", .uid = fmt::format("busy-{}-{}", node, g),
                                    .node = node, .phase = "Running", .containers = {Mgpu("s", used, 4096)},
                                    .annotations = {{"vke.volcengine.com/gpu-index-container-s", std::to_string(g)}}}
                                .ToJson());
        }
      }
    }
  }
  ClusterObjects cluster;
  EXPECT_TRUE(kubejson::AppendClusterJson(ListJson(objects), &cluster).ok());
  inventory::Inventory inventory;
  std::unique_ptr<Service> service;
  SchedulerEmulator scheduler(
      [&](std::string_view verb, const std::string& body) {
        return verb == "filter" ? service->Filter(body) : verb == "prioritize" ? service->Prioritize(body) : service->Bind(body);
      },
      cluster);
  inventory.ReplaceCluster(std::move(cluster));
  service = std::make_unique<Service>(&inventory, ServiceOptions{.gangs = gangs});
  TopologyRun run;
  std::deque<std::vector<EmulatedPod>> live;
  for (int g = 0; g < 60; ++g) {
    PodGroup group{.namespace_name = "ml", .name = fmt::format("g{}", g), .topology_key = "rack"};
    std::vector<EmulatedPod> members;
    std::vector<Pod> pending;
    for (size_t i = 0, n = 2 + rng() % 5; i < n; ++i) {
      members.push_back(Emulated(PodJson{.name = fmt::format("{}-{}", group.name, i), .namespace_name = "ml",
                                         .uid = fmt::format("uid-{}-{}", group.name, i),
                                         .containers = {Mgpu("s", 30 + 10 * static_cast<int64_t>(rng() % 5), 4096)},
                                         .spec_extra = fmt::format(R"("schedulingGroup":{{"podGroupName":"{}"}})", group.name)}
                                     .ToJson()));
      pending.push_back(members.back().pod);
    }
    group.min_count = static_cast<int32_t>(members.size());
    inventory.Apply(ClusterDelta{.upsert_pending = std::move(pending), .upsert_groups = {group}});
    GangOutcome out = scheduler.ScheduleGang(members, members.size(), GangFlow::kPodGroupCycle, "rack");
    run.placed += out.bound >= out.min_count ? 1 : 0;
    run.partial += out.partial() ? 1 : 0;
    run.failed_binds += out.failed_binds;
    for (const EmulatedPod& m : members) {
      if (!scheduler.bound().contains(m.pod.uid)) inventory.Apply(ClusterDelta{.deleted_pending = {m.pod.uid}});
    }
    if (out.bound > 0) live.push_back(members);
    while (live.size() > 4) {
      for (const EmulatedPod& m : live.front()) {
        inventory.DeletePod(m.pod.uid);
        scheduler.Deleted(m);
      }
      live.pop_front();
    }
  }
  return run;
}

TEST(DomainPlansEmulation, WithGangsNoTopologyGangIsPartlyBoundAndNoBindFails) {
  TopologyRun on = RunTopologyGangs(true);
  TopologyRun off = RunTopologyGangs(false);
  std::printf("topology gangs on: %zu of 60 placed, %zu partial, %zu failed binds; off: %zu placed, %zu partial, %zu failed binds\n",
              on.placed, on.partial, on.failed_binds, off.placed, off.partial, off.failed_binds);
  EXPECT_EQ(on.partial, 0u);
  EXPECT_EQ(on.failed_binds, 0u);
  EXPECT_GT(on.placed, 40u);
  EXPECT_GT(off.failed_binds, 0u);
}

}  // namespace domain_plans_test
}  // namespace gpusched::extender
