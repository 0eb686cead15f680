// 100 Kueue Workloads (whole GPUs and mGPU shares, 1-4 pods each) through gpusched's admission
// check against the in-process API server, with Kueue's objects as Kueue 0.19 serves them
// (kueue.x-k8s.io/v1beta2), then, once Ready, their pods through the emulated kube-scheduler
// (test/support/scheduler_emulator.h) against the replica's verbs, binding through the API
// server, on nodes partly used. Workloads finish as others arrive; those set to Retry are
// requeued by "Kueue" (this test: quota reserved again, the check Pending) after each departure.
// With the check: no Workload admitted has a pod left unschedulable, and no bind fails. Without it
// (Kueue's aggregate quota alone: every Workload admitted), the same Workloads leave pods
// unschedulable: the test can fail.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <deque>
#include <random>

#include "cluster_json.h"
#include "fake_apiserver.h"
#include "fake_clock.h"
#include "gpusched/common/time_format.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"
#include "live_replica.h"
#include "scheduler_emulator.h"

namespace gpusched {
namespace live_kueue_emulation_test {

using testing::EmulatedPod;
using testing::Eventually;
using testing::PodJson;

// Workload i: one pod set of 1-4 pods, each asking 1, 2, 4 or 8 whole GPUs or 30-70% of one GPU.
struct WorkloadSpec {
  int count = 1;
  std::string limits;  // the container's, JSON
  testing::ContainerJson container;
};
WorkloadSpec MakeSpec(std::mt19937& rng) {
  WorkloadSpec s{.count = 1 + static_cast<int>(rng() % 4)};
  if (rng() % 2 == 0) {
    int gpus = std::vector<int>{1, 2, 4, 8}[rng() % 4];
    s.limits = fmt::format(R"({{"nvidia.com/gpu":"{}"}})", gpus);
    s.container = testing::WholeGpus("c", gpus);
  } else {
    int core = 30 + 10 * static_cast<int>(rng() % 5);
    s.limits = fmt::format(R"({{"vke.volcengine.com/mgpu-core":"{}","vke.volcengine.com/mgpu-memory":"4096"}})", core);
    s.container = testing::Mgpu("c", core, 4096);
  }
  return s;
}

// Workload i as Kueue holds it once it reserved quota: the check Pending.
std::string WorkloadJson(int i, const WorkloadSpec& s) {
  return fmt::format(
      R"({{"metadata":{{"name":"wl{}","namespace":"ml","uid":"wl-uid-{}"}},"spec":{{"queueName":"q","podSets":[{{"name":"main",)"
      R"("count":{},"template":{{"spec":{{"containers":[{{"name":"c","image":"x","resources":{{"limits":{}}}}}]}}}}}}]}},)"
      R"("status":{{"conditions":[{{"type":"QuotaReserved","status":"True","reason":"QuotaReserved","message":"",)"
      R"("lastTransitionTime":"2026-12-05T00:00:00Z"}}],"admission":{{"clusterQueue":"cq","podSetAssignments":[{{"name":"main",)"
      R"("flavors":{{"nvidia.com/gpu":"default"}},"count":{}}}]}},"admissionChecks":[{{"name":"gpu-placement","state":"Pending",)"
      R"("message":"","lastTransitionTime":"2026-12-05T00:00:00Z"}}]}}}})",
      i, i, s.count, s.limits, s.count);
}

// The pods the Job of Workload i makes once admitted: with the podSetUpdates' annotations.
std::vector<EmulatedPod> PodsOf(int i, const WorkloadSpec& s, int generation) {
  std::vector<EmulatedPod> out;
  for (int k = 0; k < s.count; ++k) {
    PodJson p{.name = fmt::format("wl{}-{}-{}", i, generation, k), .namespace_name = "ml",
              .uid = fmt::format("uid-wl{}-{}-{}", i, generation, k), .phase = "Pending", .containers = {s.container},
              .annotations = {{"gpusched.io/kueue-workload", fmt::format("ml/wl{}", i)}, {"gpusched.io/kueue-podset", "main"}}};
    out.push_back(testing::Emulated(p.ToJson()));
  }
  return out;
}

std::string Field(const std::string& json, const char* a, const char* b) {
  rapidjson::Document d;
  if (!json::Parse(json, &d).ok() || !d.IsObject() || !d.HasMember(a) || !d[a].HasMember(b)) return "";
  return d[a][b].IsString() ? d[a][b].GetString() : "";
}

struct RunResult {
  size_t admitted = 0;       // Workloads whose pods were started
  size_t unschedulable = 0;  // of those, Workloads with a pod that did not bind
  size_t failed_binds = 0;
  size_t retries = 0;        // Retry verdicts written
  size_t writes = 0;         // PATCH and POST requests the replica made (status, holds, bookings, bindings)
};

class LiveKueueEmulation {
 public:
  explicit LiveKueueEmulation(bool check) : check_(check) {
    std::vector<std::string> objects = testing::PartlyUsedNodes(16, 12, 5);
    for (const std::string& o : objects) api_.Put(o.find(R"("kind":"Node")") != std::string::npos ? "nodes" : "pods", o);
    EXPECT_TRUE(kubejson::AppendClusterJson(testing::ListJson(objects), &cluster_).ok());
    api_.Put("resourceflavors", R"({"metadata":{"name":"default"},"spec":{}})");
    api_.Put("admissionchecks", R"({"metadata":{"name":"gpu-placement"},"spec":{"controllerName":"gpusched.io/gpu-placement"}})");
    api_.Put("clusterqueues", R"({"metadata":{"name":"cq"},"spec":{"admissionChecksStrategy":{"admissionChecks":[{"name":"gpu-placement"}]}}})");
    api_.Put("leases", fmt::format(R"({{"metadata":{{"name":"gpu-scheduler","namespace":"kube-system"}},"spec":{{"holderIdentity":)"
                                   R"("gpusched-0_1","leaseDurationSeconds":3600,"renewTime":"{}"}}}})",
                                   FormatRfc3339(RealClock().WallMs())));
    replica_ = std::make_unique<testing::LiveReplica>(api_.url(), extender::ServiceOptions{}, inventory::InventoryOptions{},
                                                      kubeapi::ApiBinderOptions{}, false, extender::ServiceCollaborators{.clock = &clock_},
                                                      kubeapi::ApiKueueWriterOptions{.identity = "gpusched-0"},
                                                      kubeapi::ApiClientOptions{.qps = 0});  // no client-side limit: the test's pace
    EXPECT_TRUE(replica_->sync->WaitSynced(std::chrono::seconds(10)));
    EXPECT_TRUE(Eventually([&] { return replica_->sync->kueue_healthy(); }));
  }

  RunResult Run() {
    testing::SchedulerEmulator scheduler(
        [&](std::string_view verb, const std::string& body) {
          if (verb == "filter") return replica_->service->Filter(body);
          if (verb == "prioritize") return replica_->service->Prioritize(body);
          return replica_->service->Bind(body);
        },
        cluster_);
    std::mt19937 rng(13);
    for (int i = 0; i < 100; ++i) {
      specs_.push_back(MakeSpec(rng));
      Offer(i, &scheduler);
      while (live_.size() > 12) Depart(&scheduler);
    }
    result_.failed_binds = scheduler.failed_binds();
    for (const testing::RecordedRequest& r : api_.Requests()) result_.writes += r.method == "PATCH" || r.method == "POST" ? 1 : 0;
    return result_;
  }

 private:
  // Kueue reserves quota for Workload i (again); the check decides; a Ready one starts its pods.
  void Offer(int i, testing::SchedulerEmulator* scheduler) {
    int gen = ++generation_[i];
    std::string stored = api_.Put("workloads.kueue.x-k8s.io", WorkloadJson(i, specs_[i]));
    std::string rv = Field(stored, "metadata", "resourceVersion"), key = fmt::format("ml/wl{}", i);
    ASSERT_TRUE(Eventually([&] {
      const kueue::Workload* w = replica_->inventory->kueue().State()->FindWorkload(key);
      return w != nullptr && w->resource_version == rv;
    }));
    std::string state = "Ready";
    if (check_) {
      replica_->service->SweepKueue();
      std::string now = *api_.Get("workloads.kueue.x-k8s.io", "ml", fmt::format("wl{}", i));
      state = now.find(R"("state":"Ready")") != std::string::npos   ? "Ready"
              : now.find(R"("state":"Retry")") != std::string::npos ? "Retry"
                                                                     : "other";
    }
    if (state == "Retry") {
      ++result_.retries;
      retrying_.push_back(i);
      return;
    }
    ASSERT_EQ(state, "Ready");
    ++result_.admitted;
    std::vector<EmulatedPod> pods = PodsOf(i, specs_[i], gen);
    size_t bound = 0;
    for (const EmulatedPod& p : pods) {
      api_.Put("pods", p.json);
      bound += scheduler->Schedule(p) ? 1 : 0;
    }
    result_.unschedulable += bound < pods.size() ? 1 : 0;
    live_.push_back(pods);
  }

  // The oldest running Workload finishes: its pods go; a minute passes; requeued ones come back.
  void Depart(testing::SchedulerEmulator* scheduler) {
    for (const EmulatedPod& p : live_.front()) {
      api_.Remove("pods", "ml", p.pod.name);
      if (!scheduler->bound().contains(p.pod.uid)) continue;
      scheduler->Deleted(p);
      ASSERT_TRUE(Eventually([&] { return !replica_->inventory->AllocationOf(p.pod.uid).has_value(); }));
    }
    live_.pop_front();
    clock_.Advance(std::chrono::minutes(1));
    for (size_t n = retrying_.size(); n > 0; --n) {
      int again = retrying_.front();
      retrying_.pop_front();
      Offer(again, scheduler);
    }
  }

  const bool check_;
  testing::FakeApiServer api_{testing::FakeApiServerOptions{.kueue_version = "v1beta2"}};
  testing::FakeClock clock_{RealClock().WallMs()};
  ClusterObjects cluster_;
  std::unique_ptr<testing::LiveReplica> replica_;
  std::vector<WorkloadSpec> specs_;
  std::map<int, int> generation_;
  std::deque<std::vector<EmulatedPod>> live_;
  std::deque<int> retrying_;
  RunResult result_;
};

TEST(LiveKueueEmulation, AWorkloadTheCheckAdmitsIsNeverLeftUnschedulableNorRefusedAtBind) {
  RunResult on = LiveKueueEmulation(/*check=*/true).Run();
  EXPECT_EQ(on.unschedulable, 0u);
  EXPECT_EQ(on.failed_binds, 0u);
  EXPECT_GT(on.admitted, 80u);
  EXPECT_GT(on.retries, 0u);
  std::printf("with the check: %zu Workloads admitted, %zu Retry verdicts, %zu admitted-then-unschedulable, %zu failed binds, "
              "%zu writes to the API server\n",
              on.admitted, on.retries, on.unschedulable, on.failed_binds, on.writes);
}

TEST(LiveKueueEmulation, WithoutTheCheckTheSameWorkloadsLeavePodsUnschedulable) {
  RunResult off = LiveKueueEmulation(/*check=*/false).Run();
  EXPECT_GT(off.unschedulable, 0u);
  std::printf("aggregate quota alone: %zu Workloads admitted, %zu admitted-then-unschedulable, %zu failed binds, %zu writes\n",
              off.admitted, off.unschedulable, off.failed_binds, off.writes);
}

}  // namespace live_kueue_emulation_test
}  // namespace gpusched
