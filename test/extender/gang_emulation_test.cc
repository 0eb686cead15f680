// 200 gangs of 2-16 members (mGPU shares, whole GPUs that nvidia-dra nodes serve through special
// claims (KEP 5004) as well, or DRA claims), mixed with single pods, scheduled
// through an emulated kube-scheduler (test/support/scheduler_emulator.h: the 1.37 pod-group
// cycle, and Coscheduling) against gpusched's verbs, on nodes whose GPUs are partly used so that
// packing GPU by GPU matters. Members, groups and claims reach the inventory as the watches
// deliver them (the emulated scheduler allocates claims at PreBind, before the extender's bind);
// binds are booked in memory (the API server's side of binding is live_bind_test's and
// live_gang_test's). With gangs on: no gang is partly bound, no bind fails, no GPU is
// over-booked. With gangs off, the same run binds gangs in part and fails binds: the test can
// fail.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <deque>
#include <random>

#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/dra/object_set.h"
#include "gpusched/extender/service.h"
#include "gpusched/kubejson/objects.h"
#include "scheduler_emulator.h"

namespace gpusched::extender {
namespace gang_emulation_test {

using testing::EmulatedPod;
using testing::GangFlow;
using testing::Mgpu;
using testing::PodJson;
using testing::WholeGpus;

struct RunResult {
  size_t gangs_placed = 0;
  size_t partial = 0;
  size_t failed_binds = 0;
  size_t overbooked_gpus = 0;
  size_t singles_bound = 0;
  size_t special_claims = 0;  // whole-GPU pods served on nvidia-dra nodes (KEP 5004) at PreBind
  size_t filter_calls = 0;    // the extender's filter calls, and the node names they carried
  size_t filtered_nodes = 0;
};

// gang.nominate's writer as the API server and the watches carry it: the pod's nomination reaches
// the inventory (the watch of pending pods) and the emulated scheduler (its informer).
class ForwardingNominator : public PodNominator {
 public:
  ForwardingNominator(inventory::Inventory* inventory, testing::SchedulerEmulator** scheduler)
      : inventory_(inventory), scheduler_(scheduler) {}
  Status Nominate(const Pod& pod, const std::string& node) override {
    Pod nominated = pod;
    nominated.nominated_node = node;  // "" clears it
    inventory_->Apply(ClusterDelta{.upsert_pending = {nominated}});
    (*scheduler_)->Nominated(pod.uid, node);
    ++written;
    return OkStatus();
  }
  size_t written = 0;

 private:
  inventory::Inventory* inventory_;
  testing::SchedulerEmulator** scheduler_;
};

// GPUs whose shares, memory or whole-GPU count are booked beyond what they have, and devices
// allocated to more than one claim.
size_t OverbookedGpus(const inventory::InventorySnapshot& snapshot) {
  size_t out = 0;
  std::set<dra::DeviceId> allocated;
  for (const auto& [key, claim] : snapshot.dra().claims()) {
    if (!claim.allocation) continue;
    for (const dra::DeviceResult& r : claim.allocation->results) out += allocated.insert(r.id).second ? 0 : 1;
  }
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    for (const placement::GpuSlot& g : n->gpus) out += g.used_milli > kMilliPerGpu || g.used_mib > g.memory_mib ? 1 : 0;
    if (n->whole_used > static_cast<int64_t>(n->gpus.size())) out += static_cast<size_t>(n->whole_used) - n->gpus.size();
  }
  return out;
}

// 24 mGPU nodes of 4 GPUs, each GPU 0, 30, 50 or 70% used; 8 whole-GPU nodes of 8, 0-6 used;
// 6 nvidia-dra nodes of 8 GPUs (DRA gangs take them whole or in part).
std::string Cluster() {
  std::vector<std::string> objects = testing::PartlyUsedNodes(24, 8, 7);
  for (int n = 0; n < 6; ++n) {
    objects.push_back(testing::DraNode(fmt::format("d{}", n)));
    objects.push_back(testing::GpuSlice(fmt::format("d{}", n), 8));
  }
  objects.push_back(std::string(testing::kGpuClass));
  return testing::ListJson(objects);
}

// The claim the resourceclaim controller generates for member `pod`: `gpus` GPUs.
dra::ResourceClaim MemberClaim(const std::string& pod, int64_t gpus) {
  ClusterObjects c;
  EXPECT_TRUE(kubejson::AppendClusterJson(testing::GeneratedClaim("c-" + pod, pod, testing::ClaimSpec(static_cast<int>(gpus), "")), &c).ok());
  return std::get<dra::ResourceClaim>(c.dra_objects.at(0).value);
}

// A member whose GPUs come from its claim c-<name> (a template's), in group `group`.
std::string ClaimMemberJson(const std::string& name, const std::string& group, bool cosched) {
  std::string pod = testing::TemplateClaimPod(name, "c-" + name);
  if (cosched) {
    std::string labels = fmt::format(R"("labels":{{"app":"{}")", name);
    return pod.insert(pod.find(labels) + labels.size(), fmt::format(R"(,"{}":"{}")", kCoschedulingLabel, group));
  }
  return pod.insert(pod.find(R"("spec":{)") + 8, fmt::format(R"("schedulingGroup":{{"podGroupName":"{}"}},)", group));
}

// Gang g: its group (a 1.37 PodGroup, or Coscheduling's) and 2-16 pending members, all mGPU
// shares or all whole GPUs; one gang in four can start with one member less (minCount n-1).
// Every fifth gang's members ask 1-2 GPUs through claims (`claims` gets them).
std::pair<PodGroup, std::vector<EmulatedPod>> MakeGang(int g, GangFlow flow, std::mt19937& rng, std::vector<dra::ResourceClaim>* claims) {
  size_t n = 2 + rng() % 15;
  bool mgpu = rng() % 3 != 0;
  bool dra = g % 5 == 4;
  int64_t core = 30 + 10 * static_cast<int64_t>(rng() % 5);
  int64_t gpus = 1 + static_cast<int64_t>(rng() % 2);
  bool cosched = flow == GangFlow::kCoscheduling;
  size_t min_count = g % 4 == 3 ? n - 1 : n;
  PodGroup group{.api = cosched ? GroupApi::kCoscheduling : GroupApi::kPodGroup, .namespace_name = "ml",
                 .name = fmt::format("g{}", g), .min_count = static_cast<int32_t>(min_count)};
  std::vector<EmulatedPod> members;
  for (size_t i = 0; i < n; ++i) {
    if (dra) {
      std::string name = fmt::format("{}-{}", group.name, i);
      claims->push_back(MemberClaim(name, gpus));
      members.push_back(testing::Emulated(ClaimMemberJson(name, group.name, cosched)));
      continue;
    }
    PodJson p{.name = fmt::format("{}-{}", group.name, i), .namespace_name = "ml", .uid = fmt::format("uid-{}-{}", group.name, i),
              .phase = "Pending", .containers = {mgpu ? Mgpu("s", core, 4096) : WholeGpus("c", gpus)}};
    if (cosched) {
      p.labels = {{std::string(kCoschedulingLabel), group.name}};
    } else {
      p.spec_extra = fmt::format(R"("schedulingGroup":{{"podGroupName":"{}"}})", group.name);
    }
    members.push_back(testing::Emulated(p.ToJson()));
  }
  return {group, members};
}

class GangEmulation : public ::testing::TestWithParam<GangFlow> {
 protected:
  // With `nominate`, the serve loop's sweep runs as each gang's members appear, before
  // kube-scheduler's cycle: it plans the gang and nominates each member to its slot.
  RunResult Run(bool gangs, bool nominate = false) {
    ClusterObjects cluster;
    EXPECT_TRUE(kubejson::AppendClusterJson(Cluster(), &cluster).ok());
    inventory::Inventory inventory;
    RunResult result;
    // A claim written: the watch of claims hands its new state to the inventory.
    auto write_claim = [&](const dra::ResourceClaim& claim) {
      inventory.Apply(ClusterDelta{.dra_state = dra::WithClaim(inventory.Snapshot()->dra(), claim)});
    };
    testing::SchedulerEmulator scheduler(
        [&](std::string_view verb, const std::string& body) {
          if (verb == "filter") return service_->Filter(body);
          if (verb == "prioritize") return service_->Prioritize(body);
          return service_->Bind(body);
        },
        cluster, write_claim, [&](const Pod& pod) {
          ++result.special_claims;
          inventory.Apply(ClusterDelta{.upsert_pending = {pod}});
        });
    inventory.ReplaceCluster(std::move(cluster));
    // Whole-GPU members may land on the nvidia-dra nodes too, served through special claims
    // (KEP 5004): the emulated kube-scheduler's DRAExtendedResource and gpusched's judgement alike.
    testing::SchedulerEmulator* emulated = &scheduler;
    ForwardingNominator nominator(&inventory, &emulated);
    service_ = std::make_unique<Service>(&inventory, ServiceOptions{.dra_extended_resources = true, .gangs = gangs, .gang_nominate = nominate},
                                         ServiceCollaborators{.nominator = &nominator});
    std::mt19937 rng(11);
    std::deque<std::vector<EmulatedPod>> live;  // gangs bound, oldest first
    for (int g = 0; g < 200; ++g) {
      std::vector<dra::ResourceClaim> claims;
      auto [group, members] = MakeGang(g, GetParam(), rng, &claims);
      for (const dra::ResourceClaim& c : claims) {  // the resourceclaim controller's, before the pods
        write_claim(c);
        scheduler.Created(c);
      }
      std::vector<Pod> pending;
      for (const EmulatedPod& m : members) pending.push_back(m.pod);
      inventory.Apply(ClusterDelta{.upsert_pending = std::move(pending), .upsert_groups = {group}});  // as the watches
      if (nominate) service_->SweepGangs();
      testing::GangOutcome out = scheduler.ScheduleGang(members, static_cast<size_t>(group.min_count), GetParam());
      result.gangs_placed += out.bound >= out.min_count ? 1 : 0;
      result.partial += out.partial() ? 1 : 0;
      result.failed_binds += out.failed_binds;
      if (out.bound > 0) live.push_back(members);
      for (const EmulatedPod& m : members) {
        if (!scheduler.bound().contains(m.pod.uid)) inventory.Apply(ClusterDelta{.deleted_pending = {m.pod.uid}});  // given up
      }
      for (int sweep = 0; sweep < 2; ++sweep) service_->SweepGangs();  // as the serve loop: slots of members gone end
      if (g % 2 == 0) result.singles_bound += Single(g, rng, &scheduler) ? 1 : 0;
      while (live.size() > 5) {  // the oldest gang finishes
        for (const EmulatedPod& m : live.front()) {
          inventory.DeletePod(m.pod.uid);
          scheduler.Deleted(m);
        }
        live.pop_front();
      }
    }
    result.overbooked_gpus = OverbookedGpus(*inventory.Snapshot());
    result.filter_calls = scheduler.filter_calls();
    result.filtered_nodes = scheduler.filtered_nodes();
    service_.reset();
    return result;
  }

  // A single pod of 20-40% of a GPU, scheduled alone (it stays: the cluster fills a little).
  static bool Single(int g, std::mt19937& rng, testing::SchedulerEmulator* scheduler) {
    PodJson p{.name = fmt::format("single-{}", g), .namespace_name = "ml", .uid = fmt::format("uid-single-{}", g),
              .phase = "Pending", .containers = {Mgpu("s", 20 + 10 * static_cast<int64_t>(rng() % 3), 2048)}};
    return scheduler->Schedule(testing::Emulated(p.ToJson()));
  }

  std::unique_ptr<Service> service_;
};

TEST_P(GangEmulation, WithGangsNoGangIsPartlyBoundAndNoBindFails) {
  RunResult on = Run(/*gangs=*/true);
  EXPECT_EQ(on.partial, 0u);
  EXPECT_EQ(on.failed_binds, 0u);
  EXPECT_EQ(on.overbooked_gpus, 0u);
  EXPECT_GT(on.gangs_placed, 150u);
  EXPECT_GT(on.special_claims, 0u);
  std::printf("gangs on: %zu of 200 gangs placed, %zu partial, %zu failed binds, %zu singles bound, %zu special claims\n",
              on.gangs_placed, on.partial, on.failed_binds, on.singles_bound, on.special_claims);
}

TEST_P(GangEmulation, WithGangsOffTheSameRunBindsGangsInPartAndFailsBinds) {
  RunResult off = Run(/*gangs=*/false);
  EXPECT_GT(off.partial, 0u);
  EXPECT_GT(off.failed_binds, 0u);
  EXPECT_EQ(off.overbooked_gpus, 0u);  // gpusched's bind refuses what does not fit, gangs or not
  std::printf("gangs off: %zu of 200 gangs placed, %zu partial, %zu failed binds, %zu singles bound, %zu special claims\n",
              off.gangs_placed, off.partial, off.failed_binds, off.singles_bound, off.special_claims);
}

// Measured: a member nominated to its slot is tried there alone (one node through in-tree
// filters and the extender, no prioritize) instead of on every node whose totals fit.
TEST_P(GangEmulation, NominatedMembersAreTriedOnTheirSlotsAloneAndStillNoneIsPartlyBound) {
  RunResult plain = Run(/*gangs=*/true, /*nominate=*/false);
  RunResult nominated = Run(/*gangs=*/true, /*nominate=*/true);
  EXPECT_EQ(nominated.partial, 0u);
  EXPECT_EQ(nominated.failed_binds, 0u);
  EXPECT_EQ(nominated.overbooked_gpus, 0u);
  EXPECT_GE(nominated.gangs_placed, plain.gangs_placed);
  EXPECT_LT(nominated.filtered_nodes * 2, plain.filtered_nodes);
  std::printf("nodes per filter: %.1f without nominations (%zu calls), %.1f with (%zu calls); gangs placed %zu, %zu\n",
              static_cast<double>(plain.filtered_nodes) / static_cast<double>(plain.filter_calls), plain.filter_calls,
              static_cast<double>(nominated.filtered_nodes) / static_cast<double>(nominated.filter_calls), nominated.filter_calls,
              plain.gangs_placed, nominated.gangs_placed);
}

INSTANTIATE_TEST_SUITE_P(Flows, GangEmulation, ::testing::Values(GangFlow::kPodGroupCycle, GangFlow::kCoscheduling),
                         [](const auto& info) { return info.param == GangFlow::kPodGroupCycle ? "PodGroupCycle" : "Coscheduling"; });

}  // namespace gang_emulation_test
}  // namespace gpusched::extender
