#include "gpusched/inventory/inventory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "../placement/test_nodes.h"
#include "cluster_json.h"
#include "dra_json.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/placement/fit_check.h"

namespace gpusched::inventory {
namespace inventory_test {

using placement::MgpuC;
using placement::MgpuPod;
using placement::SharedNode;
using placement::WholeNode;
using placement::WholePod;
using ::testing::HasSubstr;

Pod Bound(Pod pod, std::string uid, std::string node, PodPhase phase = PodPhase::kRunning) {
  pod.uid = uid;
  pod.name = uid;
  pod.node_name = std::move(node);
  pod.phase = phase;
  return pod;
}

Placement SharedPlacement(int gpu, int64_t milli, int64_t mib) {
  Placement p{.kind = RequestKind::kMgpu};
  p.containers.push_back(
      ContainerAssignment{.container = "c", .gpu_indices = {gpu}, .milli_per_gpu = milli, .mib_per_gpu = mib});
  return p;
}

TEST(Inventory, RebuildsUsageFromBoundPods) {
  Inventory inv;
  Pod mgpu = Bound(MgpuPod({MgpuC("c", 30, 4096)}, {{"vke.volcengine.com/gpu-index-container-c", "1"}}), "m", "s");
  inv.ReplaceCluster({.nodes = {WholeNode("w", 8), SharedNode("s", 2, 10000)},
                      .pods = {Bound(WholePod(3), "a", "w"), Bound(WholePod(2), "done", "w", PodPhase::kSucceeded),
                               Bound(WholePod(1), "failed", "w", PodPhase::kFailed), mgpu,
                               Bound(WholePod(1), "pending", "")}});
  auto snap = inv.Snapshot();
  EXPECT_EQ(snap->FindNode("w")->whole_used, 3);
  EXPECT_EQ(snap->FindNode("s")->FindGpu(1)->used_milli, 300);
  EXPECT_EQ(snap->FindNode("s")->FindGpu(1)->used_mib, 4096);
  EXPECT_EQ(inv.Stats().ledger_size, 2u);
  EXPECT_EQ(inv.Stats().pending_pods, 1u);
}

TEST(Inventory, ABoundGpuPodIsKnownByItsAllocationAloneAndCountedOnce) {
  Inventory inv;
  Pod a = Bound(WholePod(3), "a", "w");
  a.namespace_name = "ml";
  a.priority = 7;
  Pod pending = Bound(WholePod(1), "p", "");
  inv.ReplaceCluster({.nodes = {WholeNode("w", 8)}, .pods = {a, pending}});
  inv.UpsertPod(Pod(a));  // seen bound again: still one pod
  std::optional<Pod> found = inv.FindPod("a");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->namespace_name, "ml");
  EXPECT_EQ(found->name, "a");
  EXPECT_EQ(found->node_name, "w");
  EXPECT_EQ(found->priority, 7);
  EXPECT_TRUE(found->containers.empty());  // what it holds is its allocation
  EXPECT_EQ(inv.AllocationOf("a")->placement.whole_gpus, 3);
  EXPECT_EQ(inv.Stats().pods_known, 2u);
  EXPECT_EQ(inv.Stats().pending_pods, 1u);

  // A stale copy that filter saw while the pod was pending adds no pending record.
  inv.RememberPod(Bound(WholePod(3), "a", ""));
  EXPECT_EQ(inv.FindPod("a")->node_name, "w");
  EXPECT_EQ(inv.Stats().pending_pods, 1u);

  // Finished: the allocation goes and the record comes back; deleted: both go.
  inv.UpsertPod(Bound(WholePod(3), "a", "w", PodPhase::kSucceeded));
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 0);
  EXPECT_EQ(inv.FindPod("a")->phase, PodPhase::kSucceeded);
  EXPECT_EQ(inv.Stats().pods_known, 2u);
  inv.UpsertPod(Pod(a));
  inv.DeletePod("a");
  EXPECT_FALSE(inv.FindPod("a").has_value());
  EXPECT_EQ(inv.Stats().pods_known, 1u);
  EXPECT_EQ(inv.Stats().ledger_size, 0u);
}

TEST(Inventory, APodIsNeverCountedTwice) {
  Inventory inv;
  Pod a = Bound(WholePod(3), "a", "w");
  // The same pod in two snapshot files, then again from an update.
  inv.ReplaceCluster({.nodes = {WholeNode("w", 8)}, .pods = {a, a}});
  inv.UpsertPod(Pod(a));
  inv.UpsertPod(Pod(a));
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 3);
  EXPECT_EQ(inv.Stats().ledger_size, 1u);
}

TEST(Inventory, PodMovingOrFinishingReleasesItsBooking) {
  Inventory inv;
  inv.ReplaceCluster({.nodes = {WholeNode("w1", 8), WholeNode("w2", 8)}, .pods = {Bound(WholePod(3), "a", "w1")}});
  inv.UpsertPod(Bound(WholePod(3), "a", "w2"));
  EXPECT_EQ(inv.Snapshot()->FindNode("w1")->whole_used, 0);
  EXPECT_EQ(inv.Snapshot()->FindNode("w2")->whole_used, 3);
  inv.UpsertPod(Bound(WholePod(3), "a", "w2", PodPhase::kSucceeded));
  EXPECT_EQ(inv.Snapshot()->FindNode("w2")->whole_used, 0);
  inv.UpsertPod(Bound(WholePod(2), "b", "w2"));
  inv.DeletePod("b");
  EXPECT_EQ(inv.Snapshot()->FindNode("w2")->whole_used, 0);
  EXPECT_EQ(inv.Stats().ledger_size, 0u);
}

TEST(Inventory, CommitBooksAndRecordsTheResultOnThePod) {
  Inventory inv;
  inv.ReplaceCluster({.nodes = {SharedNode("s", 2, 10000)}});
  Pod pod = MgpuPod({MgpuC("c", 30, 1024)});
  inv.RememberPod(Pod(pod));
  ASSERT_TRUE(inv.Commit(pod, "s", SharedPlacement(1, 300, 1024)).ok());
  EXPECT_EQ(inv.Snapshot()->FindNode("s")->FindGpu(1)->used_milli, 300);
  std::optional<Pod> record = inv.FindPod("new");
  ASSERT_TRUE(record);
  EXPECT_EQ(record->node_name, "s");
  EXPECT_EQ(record->annotations.at("vke.volcengine.com/gpu-index-container-c"), "1");
  EXPECT_EQ(record->annotations.at("vke.volcengine.com/assumed"), "true");
  EXPECT_EQ(inv.AllocationOf("new")->origin, AllocationOrigin::kCommitted);
  EXPECT_EQ(inv.Stats().pending_pods, 0u);
}

TEST(Inventory, CommitRefusesWhatNoLongerFits) {
  Inventory inv;
  inv.ReplaceCluster({.nodes = {SharedNode("s", 1, 10000)}});
  Pod a = MgpuPod({MgpuC("c", 60, 1024)});
  a.uid = "a";
  Pod b = a;
  b.uid = "b";
  ASSERT_TRUE(inv.Commit(a, "s", SharedPlacement(0, 600, 1024)).ok());
  uint64_t version = inv.Snapshot()->version();
  Status s = inv.Commit(b, "s", SharedPlacement(0, 600, 1024));
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(inv.Snapshot()->version(), version);  // nothing changed
  EXPECT_FALSE(inv.AllocationOf("b"));
  EXPECT_EQ(inv.Commit(a, "nowhere", SharedPlacement(0, 1, 1)).code(), StatusCode::kNotFound);
  EXPECT_THAT(inv.Commit(a, "s", SharedPlacement(0, 1, 1)).message(), HasSubstr("already holds an allocation"));
}

TEST(Inventory, ConcurrentCommitsNeverOverbook) {
  Inventory inv;
  inv.ReplaceCluster({.nodes = {SharedNode("s", 1, 16000)}});
  std::atomic<int> wins{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 64; ++i) {
    threads.emplace_back([&, i] {
      Pod p = MgpuPod({MgpuC("c", 10, 1000)});
      p.uid = "p" + std::to_string(i);
      if (inv.Commit(p, "s", SharedPlacement(0, 100, 1000)).ok()) ++wins;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(wins.load(), 10);  // 10 x 10% of core
  const placement::GpuSlot* gpu = inv.Snapshot()->FindNode("s")->FindGpu(0);
  EXPECT_EQ(gpu->used_milli, 1000);
  EXPECT_EQ(gpu->instances, 10);
  EXPECT_EQ(inv.Stats().ledger_size, 10u);
}

TEST(Inventory, ReleaseUndoesACommit) {
  Inventory inv;
  inv.ReplaceCluster({.nodes = {SharedNode("s", 1, 10000)}});
  Pod pod = MgpuPod({MgpuC("c", 30, 1024)});
  inv.RememberPod(Pod(pod));
  ASSERT_TRUE(inv.Commit(pod, "s", SharedPlacement(0, 300, 1024)).ok());
  inv.Release("new");
  EXPECT_EQ(inv.Snapshot()->FindNode("s")->FindGpu(0)->used_milli, 0);
  EXPECT_FALSE(inv.FindPod("new")->bound());
  EXPECT_FALSE(inv.FindPod("new")->annotations.contains("vke.volcengine.com/assumed"));
}

TEST(Inventory, ReleaseLeavesAnAllocationTheClusterReportedMeanwhile) {
  Inventory inv;
  inv.ReplaceCluster({.nodes = {WholeNode("w", 8)}});
  Pod pod = WholePod(2);
  pod.uid = "p";
  ASSERT_TRUE(inv.Commit(pod, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 2}).ok());
  // The watch shows the pod bound (another replica's bind won) before our failed bind undoes.
  inv.UpsertPod(Bound(WholePod(2), "p", "w"));
  inv.Release("p");
  EXPECT_EQ(inv.AllocationOf("p")->origin, AllocationOrigin::kObserved);
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 2);
}

TEST(Inventory, ReloadKeepsBookingsTheSnapshotDoesNotShowYet) {
  Inventory inv;
  ClusterObjects cluster{.nodes = {SharedNode("s", 1, 10000)}};
  inv.ReplaceCluster(ClusterObjects(cluster));
  Pod pod = MgpuPod({MgpuC("c", 30, 1024)});
  inv.RememberPod(Pod(pod));
  ASSERT_TRUE(inv.Commit(pod, "s", SharedPlacement(0, 300, 1024)).ok());
  inv.ReplaceCluster(ClusterObjects(cluster));  // the file predates the bind
  EXPECT_EQ(inv.Snapshot()->FindNode("s")->FindGpu(0)->used_milli, 300);
  // The cluster now shows the pod bound, without annotations: the booking keeps its GPU and
  // becomes observed.
  Pod seen = pod;
  seen.node_name = "s";
  seen.phase = PodPhase::kRunning;
  cluster.pods = {seen};
  inv.ReplaceCluster(ClusterObjects(cluster));
  auto snap = inv.Snapshot();
  EXPECT_EQ(snap->FindNode("s")->FindGpu(0)->used_milli, 300);
  EXPECT_TRUE(snap->FindNode("s")->ready()) << snap->FindNode("s")->condition_reason;
  EXPECT_EQ(inv.AllocationOf("new")->origin, AllocationOrigin::kObserved);
  // Then it finishes.
  seen.phase = PodPhase::kSucceeded;
  cluster.pods = {seen};
  inv.ReplaceCluster(ClusterObjects(cluster));
  EXPECT_EQ(inv.Snapshot()->FindNode("s")->FindGpu(0)->used_milli, 0);
}

TEST(Inventory, UpsertNodesPublishesOnlyOnChange) {
  Inventory inv;
  inv.ReplaceCluster({.nodes = {WholeNode("w", 8)}});
  uint64_t v = inv.Snapshot()->version();
  EXPECT_EQ(inv.UpsertNodes({WholeNode("w", 8)}), 0u);
  EXPECT_EQ(inv.Snapshot()->version(), v);
  EXPECT_EQ(inv.UpsertNodes({WholeNode("w", 8, "mgpu")}), 1u);
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->mode, NodeMode::kMgpu);
  EXPECT_EQ(inv.UpsertNodes({WholeNode("x", 2)}), 1u);
  EXPECT_NE(inv.Snapshot()->FindNode("x"), nullptr);
}

TEST(Inventory, LabelChangeWithRunningPodsMakesTheNodeSwitching) {
  Inventory inv;
  inv.ReplaceCluster({.nodes = {WholeNode("w", 8, "nvidia")}, .pods = {Bound(WholePod(2), "old", "w")}});
  Node relabelled = WholeNode("w", 8, "mgpu");
  relabelled.allocatable.mgpu_core_percent = 800;
  relabelled.allocatable.mgpu_memory_mib = 8 * 10000;
  inv.UpsertNodes({relabelled});
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->condition, placement::NodeCondition::kSwitching);
  inv.DeletePod("old");
  EXPECT_TRUE(inv.Snapshot()->FindNode("w")->ready());
}

TEST(Inventory, ABoundPodBreakingTheContractMakesItsNodeInconsistent) {
  Inventory inv;
  Pod mixed = WholePod(1);
  mixed.containers.push_back(MgpuC("m", 30, 1024));
  inv.ReplaceCluster({.nodes = {SharedNode("s", 2, 10000)}, .pods = {Bound(mixed, "mixed", "s")}});
  const placement::NodeState* s = inv.Snapshot()->FindNode("s");
  EXPECT_EQ(s->condition, placement::NodeCondition::kInconsistent);
  EXPECT_THAT(s->condition_reason, HasSubstr("pod ns/mixed is bound with an invalid GPU request: pod mixes"));
  inv.DeletePod("mixed");
  EXPECT_TRUE(inv.Snapshot()->FindNode("s")->ready());
}

// A clock pair tests can move: steady for assume_ttl, wall (Unix ms) for bookings.
struct TestClocks final : Clock {
  std::chrono::steady_clock::time_point steady{};
  int64_t wall_ms = 1'764'470'000'000;

  std::chrono::steady_clock::time_point Now() const override { return steady; }
  int64_t WallMs() const override { return wall_ms; }
  InventoryOptions Options() { return InventoryOptions{.clock = this}; }
  void Advance(std::chrono::seconds d) {
    steady += d;
    wall_ms += std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  }
};

TEST(Inventory, UnconfirmedBindsExpire) {
  TestClocks clocks;
  Inventory inv(InventoryOptions{.assume_ttl = std::chrono::seconds(60), .clock = &clocks});
  ClusterObjects cluster{.nodes = {WholeNode("w", 8)}};
  Pod pod = WholePod(2);
  cluster.pods = {pod};  // the source knows the pod, pending
  inv.ReplaceCluster(ClusterObjects(cluster));
  ASSERT_TRUE(inv.Commit(pod, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 2}).ok());
  clocks.Advance(std::chrono::seconds(59));
  inv.ReplaceCluster(ClusterObjects(cluster));  // still pending, within the TTL: kept
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 2);
  clocks.Advance(std::chrono::seconds(2));
  inv.ReplaceCluster(ClusterObjects(cluster));  // still pending after the TTL: the bind never happened
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 0);
  EXPECT_FALSE(inv.AllocationOf("new"));
  EXPECT_FALSE(inv.FindPod("new")->bound());
}

// The one hold on node "s" is kept 299 s more, and ends 2 s later (nomination_ttl 300 s).
void ExpectHoldRunsOutIn300Seconds(Inventory& inv, TestClocks& clocks) {
  clocks.Advance(std::chrono::seconds(299));
  inv.Expire();
  EXPECT_EQ(inv.Snapshot()->FindNode("s")->holds.size(), 1u);
  clocks.Advance(std::chrono::seconds(2));
  inv.Expire();
  EXPECT_TRUE(inv.Snapshot()->FindNode("s")->holds.empty());
}

// GPUs held for a preemptor (nomination.h): planned once its victims are gone, counted for every
// other pod, not for the holder, ended by its bind or after the nomination TTL.
TEST(Inventory, ANominatedPodsGpusAreHeldUntilItBindsOrTheHoldExpires) {
  TestClocks clocks;
  Inventory inv(InventoryOptions{.nomination_ttl = std::chrono::seconds(300), .clock = &clocks});
  Pod victim = Bound(MgpuPod({MgpuC("c", 60, 4096)}), "victim", "s");
  victim.annotations["vke.volcengine.com/gpu-index-container-c"] = "1";
  victim.terminating = true;
  Pod stays = Bound(MgpuPod({MgpuC("c", 70, 4096)}), "stays", "s");
  stays.annotations["vke.volcengine.com/gpu-index-container-c"] = "0";
  inv.ReplaceCluster(ClusterObjects{.nodes = {SharedNode("s", 2, 16384)}, .pods = {victim, stays}});
  Pod preemptor = MgpuPod({MgpuC("c", 50, 4096)});
  preemptor.uid = preemptor.name = "preemptor";
  preemptor.priority = 100;
  preemptor.nominated_node = "s";
  inv.Apply(ClusterDelta{.upsert_pending = {preemptor}});
  const placement::NodeState* s = inv.Snapshot()->FindNode("s");
  ASSERT_EQ(s->holds.size(), 1u);
  EXPECT_EQ(s->holds[0].placement.containers[0].gpu_indices, std::vector<int>{1});  // where the victim was
  EXPECT_EQ(s->FindGpu(1)->used_milli, 600 + 500);  // the terminating victim, and the hold
  // The holder is judged without its hold: once the victim is gone it fits, and its bind ends it.
  inv.Apply(ClusterDelta{.deleted_pods = {"victim"}});
  // Any other pod sees the hold: 60% no longer fits on GPU 1, free as it is now.
  EXPECT_FALSE(placement::CheckFits(*inv.Snapshot()->FindNode("s"), SharedPlacement(1, 600, 4096)).ok());
  Placement p = SharedPlacement(1, 500, 4096);
  ASSERT_TRUE(inv.Commit(preemptor, "s", p).ok());
  EXPECT_TRUE(inv.Snapshot()->FindNode("s")->holds.empty());
  EXPECT_EQ(inv.Snapshot()->FindNode("s")->FindGpu(1)->used_milli, 500);

  // Another nomination, never bound: held for nomination_ttl, then released.
  Pod other = preemptor;
  other.uid = other.name = "other";
  inv.Apply(ClusterDelta{.upsert_pending = {other}});
  ASSERT_EQ(inv.Snapshot()->FindNode("s")->holds.size(), 1u);
  ExpectHoldRunsOutIn300Seconds(inv, clocks);
}

// A victim with a long grace period outlives the nomination TTL: the GPUs stay held for the
// preemptor while any pod on the node is terminating, and the TTL counts from when the last one
// is gone. Before, the hold ended 300 s after the nomination, victims or not.
TEST(Inventory, ANominationsTtlCountsFromWhenItsLastVictimIsGone) {
  TestClocks clocks;
  Inventory inv(InventoryOptions{.nomination_ttl = std::chrono::seconds(300), .clock = &clocks});
  Pod victim = Bound(MgpuPod({MgpuC("c", 60, 4096)}), "victim", "s");
  victim.annotations["vke.volcengine.com/gpu-index-container-c"] = "1";
  victim.terminating = true;  // terminationGracePeriodSeconds: 3600
  inv.ReplaceCluster(ClusterObjects{.nodes = {SharedNode("s", 2, 16384)}, .pods = {victim}});
  Pod preemptor = MgpuPod({MgpuC("c", 50, 4096)});
  preemptor.uid = preemptor.name = "preemptor";
  preemptor.priority = 100;
  preemptor.nominated_node = "s";
  inv.Apply(ClusterDelta{.upsert_pending = {preemptor}});
  for (int minute = 0; minute < 60; ++minute) {
    clocks.Advance(std::chrono::seconds(60));
    inv.Expire();
  }
  ASSERT_EQ(inv.Snapshot()->FindNode("s")->holds.size(), 1u) << "an hour later, the victim still terminating";
  inv.Apply(ClusterDelta{.deleted_pods = {"victim"}});
  ExpectHoldRunsOutIn300Seconds(inv, clocks);
}

TEST(Inventory, PendingPodsAreBounded) {
  Inventory inv(InventoryOptions{.max_pending_pods = 3});
  for (int i = 0; i < 10; ++i) {
    Pod p = WholePod(1);
    p.uid = "p" + std::to_string(i);
    inv.RememberPod(Pod(p));
  }
  EXPECT_FALSE(inv.FindPod("p0"));
  EXPECT_TRUE(inv.FindPod("p9"));
  EXPECT_EQ(inv.Stats().pending_pods, 3u);
}

TEST(Inventory, SnapshotsAreImmutable) {
  Inventory inv;
  inv.ReplaceCluster({.nodes = {WholeNode("w", 8)}});
  auto before = inv.Snapshot();
  Pod pod = WholePod(2);
  ASSERT_TRUE(inv.Commit(pod, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 2}).ok());
  EXPECT_EQ(before->FindNode("w")->whole_used, 0);
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 2);
  EXPECT_GT(inv.Snapshot()->version(), before->version());
}

// A watch event rebuilds only its node: the next snapshot shares every other node's state with
// the last one, and holds what a full reload of the same objects holds.
TEST(Inventory, AWatchEventRebuildsOnlyItsNodeAndMatchesAFullReload) {
  std::vector<Node> nodes;
  for (int i = 0; i < 300; ++i) nodes.push_back(WholeNode("w" + std::to_string(1000 + i), 8));
  Inventory inv;
  inv.ReplaceCluster({.nodes = nodes});
  auto before = inv.Snapshot();
  Pod pod = Bound(WholePod(3), "p", "w1200");
  inv.UpsertPod(Pod(pod));
  auto after = inv.Snapshot();
  ASSERT_EQ(after->nodes().size(), 300u);
  for (size_t i = 0; i < 300; ++i) {
    bool changed = after->nodes()[i]->node.name == "w1200";
    EXPECT_EQ(after->nodes()[i] != before->nodes()[i], changed) << i;
  }
  EXPECT_EQ(after->FindNode("w1200")->whole_used, 3);
  Inventory fresh;
  fresh.ReplaceCluster({.nodes = nodes, .pods = {pod}});
  for (size_t i = 0; i < 300; ++i) EXPECT_EQ(after->nodes()[i]->whole_used, fresh.Snapshot()->nodes()[i]->whole_used) << i;
  inv.DeletePod("p");
  EXPECT_EQ(inv.Snapshot()->FindNode("w1200")->whole_used, 0);
  EXPECT_EQ(inv.Snapshot()->nodes()[199], before->nodes()[199]);
}


NodeBooking Booking(std::string uid, int64_t gpus, int64_t at_ms, std::string node = "w") {
  return NodeBooking{.allocation = {.pod_uid = uid,
                                    .pod_namespace = "d",
                                    .pod_name = uid,
                                    .node_name = std::move(node),
                                    .mode = NodeMode::kNvidia,
                                    .placement = {.kind = RequestKind::kWholeGpu, .whole_gpus = gpus},
                                    .origin = AllocationOrigin::kBooked},
                     .booked_at_ms = at_ms};
}

Node WithBookings(Node node, std::vector<NodeBooking> bookings, std::string rv) {
  node.bookings = std::move(bookings);
  node.resource_version = std::move(rv);
  return node;
}

TEST(InventoryBookings, ANodesBookingCountsUntilThePodIsSeenBound) {
  TestClocks clocks;
  Inventory inv(clocks.Options());
  inv.ReplaceCluster({.nodes = {WholeNode("w", 8)}});
  inv.Apply({.upsert_nodes = {WithBookings(WholeNode("w", 8), {Booking("p", 3, clocks.wall_ms)}, "2")}});
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 3);
  EXPECT_EQ(inv.AllocationOf("p")->origin, AllocationOrigin::kBooked);
  // The pod arrives bound: the same UID, counted once, now observed.
  inv.Apply({.upsert_pods = {Bound(WholePod(3), "p", "w")}});
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 3);
  EXPECT_EQ(inv.AllocationOf("p")->origin, AllocationOrigin::kObserved);
  EXPECT_EQ(inv.Stats().ledger_size, 1u);
  // The annotation dropping the entry changes nothing for a pod seen bound.
  inv.Apply({.upsert_nodes = {WithBookings(WholeNode("w", 8), {}, "3")}});
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 3);
}

TEST(InventoryBookings, ABookingDroppedFromTheAnnotationIsReleased) {
  TestClocks clocks;
  Inventory inv(clocks.Options());
  inv.ReplaceCluster({.nodes = {WithBookings(WholeNode("w", 8), {Booking("p", 2, clocks.wall_ms)}, "1")}});
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 2);
  inv.Apply({.upsert_nodes = {WithBookings(WholeNode("w", 8), {}, "2")}});
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 0);
  EXPECT_FALSE(inv.AllocationOf("p"));
}

TEST(InventoryBookings, ABookingExpiresAfterTheTtlIfThePodNeverBinds) {
  TestClocks clocks;
  Inventory inv(clocks.Options());
  inv.ReplaceCluster({.nodes = {WithBookings(WholeNode("w", 8), {Booking("p", 2, clocks.wall_ms)}, "1")}});
  clocks.Advance(std::chrono::seconds(299));
  EXPECT_EQ(inv.Expire(), 0u);
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 2);
  clocks.Advance(std::chrono::seconds(2));
  EXPECT_EQ(inv.Expire(), 1u);
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 0);
  // A stale booking read later (a node object from before) does not count either.
  inv.Apply({.upsert_nodes = {WithBookings(WholeNode("w", 8), {Booking("p", 2, clocks.wall_ms - 301'000)}, "1b")}});
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 0);
}

TEST(InventoryBookings, ADeletedOrFinishedPodIsNotBroughtBackByABooking) {
  TestClocks clocks;
  Inventory inv(clocks.Options());
  inv.ReplaceCluster({.nodes = {WholeNode("w", 8)}, .pods = {Bound(WholePod(2), "done", "w")}});
  inv.Apply({.upsert_pods = {Bound(WholePod(2), "done", "w", PodPhase::kSucceeded)}, .deleted_pods = {"gone"}});
  inv.Apply({.upsert_nodes = {WithBookings(WholeNode("w", 8),
                                           {Booking("gone", 1, clocks.wall_ms), Booking("done", 2, clocks.wall_ms),
                                            Booking("live", 4, clocks.wall_ms)},
                                           "2")}});
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 4);
  EXPECT_FALSE(inv.AllocationOf("gone"));
  EXPECT_FALSE(inv.AllocationOf("done"));
}

TEST(InventoryBookings, ABookingOfAPodBoundElsewhereDoesNotCount) {
  TestClocks clocks;
  Inventory inv(clocks.Options());
  inv.ReplaceCluster({.nodes = {WholeNode("w", 8), WholeNode("v", 8)}, .pods = {Bound(WholePod(2), "p", "v")}});
  inv.Apply({.upsert_nodes = {WithBookings(WholeNode("w", 8), {Booking("p", 2, clocks.wall_ms)}, "2")}});
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 0);
  EXPECT_EQ(inv.Snapshot()->FindNode("v")->whole_used, 2);
}

TEST(InventoryBookings, CommitChecksAgainstBookingsAndReportsTheNodeItChecked) {
  TestClocks clocks;
  Inventory inv(clocks.Options());
  inv.ReplaceCluster({.nodes = {WithBookings(WholeNode("w", 4), {Booking("peer", 3, clocks.wall_ms)}, "7")}});
  Pod pod = WholePod(2);
  pod.uid = "mine";
  Node checked;
  Status s = inv.Commit(pod, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 2}, &checked);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  ASSERT_TRUE(inv.Commit(pod, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 1}, &checked).ok());
  EXPECT_EQ(checked.resource_version, "7");
  ASSERT_EQ(checked.bookings.size(), 1u);
  // Our own booking, once the annotation lists it too, is still one allocation.
  inv.Apply({.upsert_nodes = {WithBookings(WholeNode("w", 4),
                                           {Booking("peer", 3, clocks.wall_ms), Booking("mine", 1, clocks.wall_ms)},
                                           "8")}});
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 4);
  EXPECT_EQ(inv.AllocationOf("mine")->origin, AllocationOrigin::kCommitted);
}

TEST(InventoryBookings, APodBookedOnTwoNodesCountsOnBothUntilItIsSeen) {
  // Two attempts to bind one pod in flight (a replica that lost leadership and the new leader):
  // either may win, so both nodes keep the GPUs booked.
  TestClocks clocks;
  Inventory inv(clocks.Options());
  inv.ReplaceCluster({.nodes = {WithBookings(WholeNode("a", 2), {Booking("p", 2, clocks.wall_ms, "a")}, "1"),
                                WithBookings(WholeNode("b", 2), {Booking("p", 2, clocks.wall_ms + 5, "b")}, "1")}});
  EXPECT_EQ(inv.Snapshot()->FindNode("a")->whole_used, 2);
  EXPECT_EQ(inv.Snapshot()->FindNode("b")->whole_used, 2);
  EXPECT_EQ(inv.Stats().ledger_size, 1u);
  // b won.
  inv.Apply({.upsert_pods = {Bound(WholePod(2), "p", "b")}});
  EXPECT_EQ(inv.Snapshot()->FindNode("a")->whole_used, 0);
  EXPECT_EQ(inv.Snapshot()->FindNode("b")->whole_used, 2);
}

TEST(InventoryBookings, OurOwnCommitElsewhereDoesNotHideAnotherReplicasBooking) {
  // Another replica booked p on a; we commit p on b and bind. Until the cluster says where p
  // runs, a keeps p's GPUs: our in-flight bind is not the cluster's word, whatever the node
  // object does next.
  TestClocks clocks;
  Inventory inv(clocks.Options());
  inv.ReplaceCluster({.nodes = {WithBookings(WholeNode("a", 4), {Booking("p", 2, clocks.wall_ms, "a")}, "1"),
                                WholeNode("b", 4)}});
  Pod pod = WholePod(2);
  pod.uid = "p";
  pod.namespace_name = "default";
  ASSERT_TRUE(inv.Commit(pod, "b", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 2}).ok());
  EXPECT_EQ(inv.Snapshot()->FindNode("a")->whole_used, 2);
  // The node object changes (another booking lands): a is re-read and p still counts there.
  inv.UpsertNodes({WithBookings(WholeNode("a", 4),
                                {Booking("p", 2, clocks.wall_ms, "a"), Booking("q", 1, clocks.wall_ms, "a")}, "2")});
  EXPECT_EQ(inv.Snapshot()->FindNode("a")->whole_used, 3);
  // Our bind lost: released, p's booking on a is the only one and still counts.
  inv.Release("p");
  inv.UpsertNodes({WithBookings(WholeNode("a", 4),
                                {Booking("p", 2, clocks.wall_ms, "a"), Booking("q", 1, clocks.wall_ms, "a")}, "3")});
  EXPECT_EQ(inv.Snapshot()->FindNode("a")->whole_used, 3);
  EXPECT_EQ(inv.Snapshot()->FindNode("b")->whole_used, 0);
}

TEST(InventoryBookings, CommitReplacesALeftoverBookingOfTheSamePod) {
  TestClocks clocks;
  Inventory inv(clocks.Options());
  inv.ReplaceCluster({.nodes = {WithBookings(WholeNode("w", 2), {Booking("p", 2, clocks.wall_ms)}, "1")}});
  Pod pod = WholePod(2);
  pod.uid = "p";
  ASSERT_TRUE(inv.Commit(pod, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 2}).ok());
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 2);
  EXPECT_EQ(inv.AllocationOf("p")->origin, AllocationOrigin::kCommitted);
  // A commit that does not fit puts the leftover back.
  Inventory other(clocks.Options());
  other.ReplaceCluster({.nodes = {WithBookings(WholeNode("w", 2), {Booking("p", 1, clocks.wall_ms)}, "1")}});
  EXPECT_FALSE(other.Commit(pod, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 3}).ok());
  EXPECT_EQ(other.AllocationOf("p")->origin, AllocationOrigin::kBooked);
  EXPECT_EQ(other.Snapshot()->FindNode("w")->whole_used, 1);
}

TEST(InventoryApply, ARelistDeletesWhatItNoLongerHoldsAndKeepsOurBindsInFlight) {
  TestClocks clocks;
  Inventory inv(clocks.Options());
  inv.ReplaceCluster({.nodes = {WholeNode("w", 8), WholeNode("old", 8)},
                      .pods = {Bound(WholePod(2), "a", "w"), Bound(WholePod(1), "b", "w")}});
  Pod mine = WholePod(3);
  mine.uid = "mine";
  ASSERT_TRUE(inv.Commit(mine, "w", Placement{.kind = RequestKind::kWholeGpu, .whole_gpus = 3}).ok());
  inv.Apply({.upsert_nodes = {WholeNode("w", 8)}, .upsert_pods = {Bound(WholePod(2), "a", "w")}, .all_nodes = true,
             .all_pods = true});
  auto snap = inv.Snapshot();
  EXPECT_EQ(snap->FindNode("old"), nullptr);
  EXPECT_EQ(snap->FindNode("w")->whole_used, 5);  // a (2) + mine (3); b is gone
  EXPECT_FALSE(inv.FindPod("b"));
  // Our bind not yet seen after assume_ttl: Expire releases it.
  clocks.Advance(std::chrono::seconds(601));
  EXPECT_EQ(inv.Expire(), 1u);
  EXPECT_EQ(inv.Snapshot()->FindNode("w")->whole_used, 2);
}

// A pod whose nvidia.com/gpu its node serves through DRA (KEP 5004), bound by a commit without
// GPUs of its own before the watch shows the special claim kube-scheduler named: the commit ends
// its nomination, as any bind does (it is judged by its node from the commit on).
TEST(Inventory, ABareCommitOfAPodServedThroughDraEndsItsNomination) {
  ClusterObjects objects;
  ASSERT_TRUE(kubejson::AppendClusterJson(
                  testing::ListJson({testing::DraNode("dra-a"), testing::GpuSlice("dra-a", 2), std::string(testing::kGpuClass)}),
                  &objects)
                  .ok());
  Inventory inv;
  inv.ReplaceCluster(std::move(objects));
  rapidjson::Document d;
  d.Parse(testing::ExtendedGpuPod("w", 1).c_str());
  Pod pod = kubejson::DecodePod(d, "Pod").value();
  pod.nominated_node = "dra-a";
  inv.Apply(ClusterDelta{.upsert_pending = {pod}});
  ASSERT_EQ(inv.Snapshot()->FindNode("dra-a")->nominated.size(), 1u);
  ASSERT_TRUE(inv.Commit(pod, "dra-a", Placement{}).ok());
  EXPECT_THAT(inv.Snapshot()->FindNode("dra-a")->nominated, ::testing::IsEmpty());
}

// The GPU drivers configured for the inventory decide where a nominated claim pod's devices are
// held: a GPU driver's devices only on nvidia-dra nodes, another driver's devices anywhere (the
// allocator alone judges them, as upstream).
TEST(Inventory, TheConfiguredGpuDriversDecideWhereANominatedClaimPodsDevicesAreHeld) {
  auto holds_on_plain = [](InventoryOptions options) {
    ClusterObjects objects;
    EXPECT_TRUE(kubejson::AppendClusterJson(testing::ListJson({testing::DraNode("plain", "nvidia"), testing::GpuSlice("plain", 2),
                                                               std::string(testing::kGpuClass),
                                                               testing::Claim("pair", testing::ClaimSpec(2, ""))}),
                                            &objects)
                    .ok());
    Inventory inv(std::move(options));
    inv.ReplaceCluster(std::move(objects));
    Pod pod = testing::DecodedPod(testing::ClaimPod("p", "pair", "", 5));
    pod.nominated_node = "plain";
    inv.Apply(ClusterDelta{.upsert_pending = {pod}});
    return inv.Snapshot()->FindNode("plain")->holds.size();
  };
  EXPECT_EQ(holds_on_plain(InventoryOptions{}), 0u);  // gpu.nvidia.com is a GPU driver: not on a node in mode nvidia
  EXPECT_EQ(holds_on_plain(InventoryOptions{.dra_gpu_drivers = {"gpu.example.com"}}), 1u);
}

}  // namespace inventory_test
}  // namespace gpusched::inventory
