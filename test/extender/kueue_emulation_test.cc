// 100 Kueue Workloads (whole GPUs and mGPU shares, 1-4 pods each) through gpusched's admission
// check, then, once Ready, their pods through the emulated kube-scheduler
// (test/support/scheduler_emulator.h) against gpusched's verbs, on nodes partly used, with
// Workloads finishing as others arrive and Workloads set to Retry coming back after each
// departure, as Kueue requeues them. Kueue's side is a KueueWriter that writes the check's state
// into the inventory's Kueue objects, as the watch would bring it. With the check: no Workload
// admitted has a pod left unschedulable, and no bind fails. Without it (Kueue's aggregate quota
// alone, every Workload admitted), the same Workloads leave pods unschedulable: the test can fail.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <deque>
#include <random>

#include "cluster_json.h"
#include "fake_clock.h"
#include "kueue_stand_in.h"
#include "gpusched/extender/service.h"
#include "gpusched/kubejson/objects.h"
#include "scheduler_emulator.h"

namespace gpusched::extender {
namespace kueue_emulation_test {

using testing::EmulatedPod;
using testing::Mgpu;
using testing::PodJson;
using testing::WholeGpus;

// 16 mGPU nodes of 4 GPUs, each GPU 0, 30, 50 or 70% used; 12 whole-GPU nodes of 8, 0-6 used.
std::string Cluster() { return testing::ListJson(testing::PartlyUsedNodes(16, 12, 5)); }

// Workload i: one pod set of 1-4 pods, each asking 1, 2, 4 or 8 whole GPUs or 30-70% of one GPU.
struct WorkloadSpec {
  int count = 1;
  std::string resources;  // the container's limits, JSON
  testing::ContainerJson container;
};
WorkloadSpec MakeSpec(std::mt19937& rng) {
  WorkloadSpec s{.count = 1 + static_cast<int>(rng() % 4)};
  if (rng() % 2 == 0) {
    int gpus = std::vector<int>{1, 2, 4, 8}[rng() % 4];
    s.resources = fmt::format(R"({{"nvidia.com/gpu":"{}"}})", gpus);
    s.container = WholeGpus("c", gpus);
  } else {
    int core = 30 + 10 * static_cast<int>(rng() % 5);
    s.resources = fmt::format(R"({{"vke.volcengine.com/mgpu-core":"{}","vke.volcengine.com/mgpu-memory":"4096"}})", core);
    s.container = Mgpu("c", core, 4096);
  }
  return s;
}

kueue::Workload WorkloadOf(int i, const WorkloadSpec& s, int generation) {
  kueue::Workload w{.namespace_name = "ml", .name = fmt::format("wl{}", i), .uid = fmt::format("wl-uid-{}", i),
                    .resource_version = fmt::format("{}-{}", i, generation), .queue_name = "q", .quota_reserved = true,
                    .cluster_queue = "cq"};
  kueue::PodSet set{.name = "main", .count = s.count};
  set.prototype = testing::DecodedPod(PodJson{.name = "t", .namespace_name = "ml", .uid = "t", .containers = {s.container}}.ToJson());
  w.pod_sets.push_back(std::move(set));
  w.assignments.push_back(kueue::PodSetAssignment{.name = "main", .flavors = {{"nvidia.com/gpu", "default"}}});
  w.checks.push_back(kueue::CheckStatus{.name = "gpu-placement"});
  return w;
}

// The pods the Job of Workload i makes once admitted: with the podSetUpdates' annotations.
std::vector<EmulatedPod> PodsOf(int i, const WorkloadSpec& s, int generation) {
  std::vector<EmulatedPod> out;
  for (int k = 0; k < s.count; ++k) {
    PodJson p{.name = fmt::format("wl{}-{}-{}", i, generation, k), .namespace_name = "ml", .uid = fmt::format("uid-wl{}-{}-{}", i, generation, k),
              .phase = "Pending", .containers = {s.container},
              .annotations = {{"gpusched.io/kueue-workload", fmt::format("ml/wl{}", i)}, {"gpusched.io/kueue-podset", "main"}}};
    out.push_back(testing::Emulated(p.ToJson()));
  }
  return out;
}

struct RunResult {
  size_t admitted = 0;           // Workloads whose pods were started
  size_t unschedulable = 0;      // of those, Workloads with a pod that did not bind
  size_t failed_binds = 0;
  size_t retries = 0;            // Retry verdicts written
};

RunResult RunWorkloads(bool check) {
  ClusterObjects cluster;
  EXPECT_TRUE(kubejson::AppendClusterJson(Cluster(), &cluster).ok());
  inventory::Inventory inventory;
  std::unique_ptr<Service> service;
  testing::SchedulerEmulator scheduler(
      [&](std::string_view verb, const std::string& body) {
        if (verb == "filter") return service->Filter(body);
        if (verb == "prioritize") return service->Prioritize(body);
        return service->Bind(body);
      },
      cluster);
  inventory.ReplaceCluster(std::move(cluster));
  inventory.kueue().Replace(kueue::Objects{
      .flavors = {{.name = "default"}},
      .checks = {{.name = "gpu-placement", .controller_name = "gpusched.io/gpu-placement"}},
      .queues = {{.name = "cq", .checks = {{.name = "gpu-placement"}}}}});
  testing::KueueStandIn kueue(&inventory);
  testing::FakeClock clock;  // a minute passes at each departure: Retry verdicts are a minute apart at most
  service = std::make_unique<Service>(&inventory, ServiceOptions{}, ServiceCollaborators{.kueue_writer = &kueue, .clock = &clock});
  std::mt19937 rng(13);
  std::vector<WorkloadSpec> specs;
  std::map<int, int> generation;              // Workload -> times it was queued
  std::deque<std::vector<EmulatedPod>> live;  // running Workloads' pods, oldest first
  std::deque<int> retrying;                   // Workloads Kueue requeued after Retry
  RunResult r;
  // Kueue reserves quota for Workload i (again): the check Pending; once decided, a Ready one starts.
  auto offer = [&](int i) {
    int gen = ++generation[i];
    inventory.kueue().Apply(inventory::KueueDelta{.upserts = {.workloads = {WorkloadOf(i, specs[i], gen)}}});
    kueue::CheckState state = kueue::CheckState::kReady;
    if (check) {
      service->SweepKueue();
      state = inventory.kueue().State()->FindWorkload(fmt::format("ml/wl{}", i))->checks[0].state;
    }
    if (state == kueue::CheckState::kRetry) {
      ++r.retries;
      retrying.push_back(i);
      return;
    }
    ASSERT_EQ(state, kueue::CheckState::kReady);
    ++r.admitted;
    std::vector<EmulatedPod> pods = PodsOf(i, specs[i], gen);
    size_t bound = 0;
    for (const EmulatedPod& p : pods) bound += scheduler.Schedule(p) ? 1 : 0;
    r.unschedulable += bound < pods.size() ? 1 : 0;
    live.push_back(pods);
  };
  for (int i = 0; i < 100; ++i) {
    specs.push_back(MakeSpec(rng));
    offer(i);
    while (live.size() > 12) {  // the oldest running Workload finishes: its pods go
      for (const EmulatedPod& p : live.front()) {
        if (!scheduler.bound().contains(p.pod.uid)) continue;
        inventory.DeletePod(p.pod.uid);
        scheduler.Deleted(p);
      }
      live.pop_front();
      clock.Advance(std::chrono::minutes(1));
      for (size_t n = retrying.size(); n > 0; --n) {  // requeued Workloads come back
        int again = retrying.front();
        retrying.pop_front();
        offer(again);
      }
    }
  }
  r.failed_binds = scheduler.failed_binds();
  return r;
}

TEST(KueueEmulation, AWorkloadTheCheckAdmitsIsNeverLeftUnschedulableNorRefusedAtBind) {
  RunResult on = RunWorkloads(/*check=*/true);
  EXPECT_EQ(on.unschedulable, 0u);
  EXPECT_EQ(on.failed_binds, 0u);
  EXPECT_GT(on.admitted, 80u);
  EXPECT_GT(on.retries, 0u);
  std::printf("with the check: %zu Workloads admitted, %zu Retry verdicts, %zu admitted-then-unschedulable, %zu failed binds\n",
              on.admitted, on.retries, on.unschedulable, on.failed_binds);
}

TEST(KueueEmulation, WithoutTheCheckTheSameWorkloadsLeavePodsUnschedulable) {
  RunResult off = RunWorkloads(/*check=*/false);
  EXPECT_GT(off.unschedulable, 0u);
  std::printf("aggregate quota alone: %zu Workloads admitted, %zu admitted-then-unschedulable, %zu failed binds\n", off.admitted,
              off.unschedulable, off.failed_binds);
}

}  // namespace kueue_emulation_test
}  // namespace gpusched::extender
