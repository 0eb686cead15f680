// The admission check's sweep and a Kueue pod's claim (extender/kueue_admission.h), in process
// (Kueue's side: test/support/kueue_stand_in.h): a Ready Workload's hold is taken only by a pod of
// its namespace; holds end, claimed or not, when Kueue evicts the Workload, and stay while its
// check is Pending again; they are renewed while the pods have not come; Retry is written at most
// once per kueue.retryAfterSeconds.
#include "gpusched/extender/kueue_admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster_json.h"
#include "fake_clock.h"
#include "gpusched/extender/service.h"
#include "gpusched/kubejson/objects.h"
#include "kueue_stand_in.h"

namespace gpusched::extender {
namespace kueue_admission_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::ArgsWithNames;
using testing::KeptNodes;
using testing::PodJson;
using testing::WholeGpus;

class KueueAdmissionTest : public ::testing::Test {
 protected:
  // g1: 8 GPUs free; g2: 4 of 8 used.
  void SetUp() override {
    ClusterObjects objects;
    ASSERT_TRUE(kubejson::AppendClusterJson(
                    testing::ListJson({testing::NvidiaNode("g1", 8).ToJson(), testing::NvidiaNode("g2", 8).ToJson(),
                                       PodJson{.name = "busy", .uid = "busy", .node = "g2", .phase = "Running",
                                               .containers = {WholeGpus("c", 4)}}
                                           .ToJson()}),
                    &objects)
                    .ok());
    inventory_.ReplaceCluster(std::move(objects));
    inventory_.kueue().Replace(kueue::Objects{.flavors = {{.name = "default"}},
                                              .checks = {{.name = "gpu-placement", .controller_name = "gpusched.io/gpu-placement"}},
                                              .queues = {{.name = "cq", .checks = {{.name = "gpu-placement"}}}}});
    service_ = std::make_unique<Service>(&inventory_, ServiceOptions{}, ServiceCollaborators{.kueue_writer = &kueue_, .clock = &clock_});
  }

  // Kueue reserves quota for ml/wl (pods of `gpus` whole GPUs each), its check Pending, at `rv`.
  void Offer(int pods, int gpus, const std::string& rv, bool evicted = false) {
    kueue::Workload w{.namespace_name = "ml", .name = "wl", .uid = "wl-uid", .resource_version = rv, .quota_reserved = true,
                      .evicted = evicted, .cluster_queue = "cq"};
    Fill(pods, gpus, &w);
    inventory_.kueue().Apply(inventory::KueueDelta{.upserts = {.workloads = {w}}});
  }
  // Kueue admits the Workload: every check Ready.
  void Admit() {
    kueue::Workload w = *inventory_.kueue().State()->FindWorkload("ml/wl");
    w.admitted = true;
    w.resource_version += "-admitted";
    inventory_.kueue().Apply(inventory::KueueDelta{.upserts = {.workloads = {w}}});
  }
  static void Fill(int pods, int gpus, kueue::Workload* out) {
    kueue::Workload& w = *out;
    kueue::PodSet set{.name = "main", .count = pods};
    set.prototype = testing::DecodedPod(PodJson{.name = "t", .namespace_name = "ml", .uid = "t", .containers = {WholeGpus("c", gpus)}}.ToJson());
    w.pod_sets.push_back(std::move(set));
    w.assignments.push_back(kueue::PodSetAssignment{.name = "main", .flavors = {{"nvidia.com/gpu", "default"}}});
    w.checks.push_back(kueue::CheckStatus{.name = "gpu-placement"});
  }
  kueue::CheckState State() { return inventory_.kueue().State()->FindWorkload("ml/wl")->checks[0].state; }
  // The pods some hold on `node` is about.
  std::vector<std::string> HeldFor(const std::string& node) {
    std::vector<std::string> out;
    for (const Allocation& h : inventory_.Snapshot()->FindNode(node)->holds) out.push_back(h.pod_uid);
    return out;
  }
  // A pod of ml/wl as its Job makes it, in namespace `ns`.
  static std::string Pod(const std::string& name, int gpus, const std::string& ns = "ml") {
    return PodJson{.name = name, .namespace_name = ns, .uid = "uid-" + name, .containers = {WholeGpus("c", gpus)},
                   .annotations = {{"gpusched.io/kueue-workload", "ml/wl"}, {"gpusched.io/kueue-podset", "main"}}}
        .ToJson();
  }

  testing::FakeClock clock_;
  inventory::Inventory inventory_{inventory::InventoryOptions{.clock = &clock_}};
  testing::KueueStandIn kueue_{&inventory_};
  std::unique_ptr<Service> service_;
};

TEST_F(KueueAdmissionTest, AReadyWorkloadsHoldIsTakenOnlyByAPodOfItsNamespace) {
  Offer(1, 8, "1");
  ASSERT_EQ(service_->SweepKueue(), 1u);
  ASSERT_EQ(State(), kueue::CheckState::kReady);
  EXPECT_THAT(HeldFor("g1"), ElementsAre("kueue/ml/wl/main/0"));
  EXPECT_THAT(KeptNodes(service_->Filter(ArgsWithNames(Pod("forged", 8, "evil"), {"g1", "g2"}))), IsEmpty())
      << "another namespace's pod naming the Workload takes nothing";
  EXPECT_THAT(KeptNodes(service_->Filter(ArgsWithNames(Pod("wl-0", 8), {"g1", "g2"}))), ElementsAre("g1"));
  EXPECT_THAT(HeldFor("g1"), ElementsAre("uid-wl-0")) << "the hold is the pod's now";
}

TEST_F(KueueAdmissionTest, HoldsEndClaimedOrNotWhenKueueEvictsTheWorkloadAndStayWhileItsCheckIsPending) {
  Offer(2, 4, "1");
  ASSERT_EQ(service_->SweepKueue(), 1u);
  ASSERT_EQ(State(), kueue::CheckState::kReady);
  EXPECT_THAT(KeptNodes(service_->Filter(ArgsWithNames(Pod("wl-0", 4), {"g1", "g2"}))), ElementsAre("g1"));
  EXPECT_EQ(HeldFor("g1").size(), 2u);
  // A replica whose watch has not brought the Ready yet sees the check Pending at the old
  // version: it decides again, and no hold is dropped meanwhile.
  Service other(&inventory_, ServiceOptions{}, ServiceCollaborators{.kueue_writer = &kueue_, .clock = &clock_});
  Offer(2, 4, "1");
  other.SweepKueue();
  EXPECT_EQ(HeldFor("g1").size(), 2u);
  Offer(2, 4, "7", /*evicted=*/true);
  service_->SweepKueue();
  EXPECT_THAT(HeldFor("g1"), IsEmpty()) << "the claimed hold too";
}

// Other checks keep Kueue from admitting for ten minutes: the hold is renewed meanwhile. Once
// admitted, it lasts kueue.holdSeconds (300 s) at most, for the pods to come.
TEST_F(KueueAdmissionTest, HoldsAreRenewedUntilKueueAdmitsThenLastHoldSecondsAtMost) {
  Offer(1, 8, "1");
  ASSERT_EQ(service_->SweepKueue(), 1u);
  auto minutes = [&](int n) {
    for (int m = 0; m < n; ++m) {
      clock_.Advance(std::chrono::minutes(1));
      inventory_.Expire();
      service_->SweepKueue();
    }
  };
  minutes(10);
  EXPECT_THAT(HeldFor("g1"), ElementsAre("kueue/ml/wl/main/0"));
  Admit();
  minutes(6);
  EXPECT_THAT(HeldFor("g1"), IsEmpty());
}

TEST_F(KueueAdmissionTest, RetryIsWrittenAtMostOncePerRetryAfter) {
  Offer(1, 16, "1");  // 16 GPUs on one node: g1 and g2 have 8 each... never: Rejected
  ASSERT_EQ(service_->SweepKueue(), 1u);
  EXPECT_EQ(State(), kueue::CheckState::kRejected);
  Offer(2, 8, "2");  // g1 holds one, g2 none: Retry
  ASSERT_EQ(service_->SweepKueue(), 1u);
  EXPECT_EQ(State(), kueue::CheckState::kRetry);
  Offer(2, 8, "3");  // Kueue requeued it at once
  EXPECT_EQ(service_->SweepKueue(), 0u);
  EXPECT_EQ(State(), kueue::CheckState::kPending);
  clock_.Advance(std::chrono::seconds(61));
  EXPECT_EQ(service_->SweepKueue(), 1u);
  EXPECT_EQ(State(), kueue::CheckState::kRetry);
}

// The API server refuses the write outright (a role without the status patch, say): the holds
// end, and the Workload is asked about again only after kueue.retryAfterSeconds, not at every
// sweep (each attempt writes and withdraws its holds on the nodes).
TEST_F(KueueAdmissionTest, AWriteRefusedOutrightIsNotRetriedAtEverySweep) {
  kueue_.refuse = FailedPreconditionError("403 Forbidden");
  Offer(1, 8, "1");
  EXPECT_EQ(service_->SweepKueue(), 0u);
  EXPECT_EQ(kueue_.attempts, 1);
  EXPECT_THAT(HeldFor("g1"), IsEmpty());
  service_->SweepKueue();
  EXPECT_EQ(kueue_.attempts, 1);
  clock_.Advance(std::chrono::seconds(61));
  service_->SweepKueue();
  EXPECT_EQ(kueue_.attempts, 2);
}

// Kueue's topology scheduling will assign the domains later: Ready, nothing held.
TEST_F(KueueAdmissionTest, AReadyBeforeKueuesDelayedTopologyAssignmentHoldsNothing) {
  kueue::Workload w{.namespace_name = "ml", .name = "wl", .uid = "wl-uid", .resource_version = "1", .quota_reserved = true,
                    .cluster_queue = "cq"};
  Fill(1, 8, &w);
  w.assignments[0].topology_delayed = true;
  inventory_.kueue().Apply(inventory::KueueDelta{.upserts = {.workloads = {w}}});
  ASSERT_EQ(service_->SweepKueue(), 1u);
  EXPECT_EQ(State(), kueue::CheckState::kReady);
  EXPECT_THAT(HeldFor("g1"), IsEmpty());
  EXPECT_TRUE(kueue_.last.updates[0].node_selector.empty());
}

// With topology levels configured (NVLink cliques) and no domain from Kueue's topology
// scheduling, the Workload goes inside one clique, the fullest in use that holds it: clique B,
// where g2 already runs a pod; and its pods are pointed there by a nodeSelector in podSetUpdates.
TEST_F(KueueAdmissionTest, WithTopologyLevelsTheWorkloadGoesInsideOneDomainAndItsPodsAreToldWhich) {
  ClusterObjects objects;
  std::vector<std::string> items;
  for (const char* name : {"a1", "a2", "b1", "b2"}) {
    testing::NodeJson n = testing::NvidiaNode(name, 4);
    n.extra_labels["nvidia.com/gpu.clique"] = name[0] == 'a' ? "c.A" : "c.B";
    items.push_back(n.ToJson());
  }
  items.push_back(PodJson{.name = "busy", .uid = "busy", .node = "b1", .phase = "Running", .containers = {WholeGpus("c", 2)}}.ToJson());
  ASSERT_TRUE(kubejson::AppendClusterJson(testing::ListJson(items), &objects).ok());
  objects.kueue = kueue::Objects{.flavors = {{.name = "default"}},
                                 .checks = {{.name = "gpu-placement", .controller_name = "gpusched.io/gpu-placement"}},
                                 .queues = {{.name = "cq", .checks = {{.name = "gpu-placement"}}}}};
  inventory_.ReplaceCluster(std::move(objects));
  Offer(2, 2, "1");
  ASSERT_EQ(service_->SweepKueue(), 1u);
  ASSERT_EQ(State(), kueue::CheckState::kReady);
  EXPECT_EQ(kueue_.last.message, "2 pods fit on 1 node: b2 (2) (one domain: nvidia.com/gpu.clique=c.B)");
  ASSERT_EQ(kueue_.last.updates.size(), 1u);
  EXPECT_EQ(kueue_.last.updates[0].node_selector, (Labels{{"nvidia.com/gpu.clique", "c.B"}}));
}

}  // namespace kueue_admission_test
}  // namespace gpusched::extender
