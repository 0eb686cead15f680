// Watch events applied to a large inventory: 20,000 whole-GPU nodes of 8 GPUs with about 60,000
// bound pods (and 500 / 5,000 nodes for the growth table), as a live cluster source delivers them
// (Inventory::Apply with a one-object ClusterDelta).
//
//   BM_InventoryPodBoundThenDeleted  a pod's bind event, then its delete event; time per event
//   BM_InventoryNodeUpdated          a node's status update (new resourceVersion, same resources)
//
// Each event must touch only its node: no rebuild of the other nodes' states, no copy of the
// node table (the goal is < 50 µs per event at 20,000 nodes).
#include <benchmark/benchmark.h>

#include <fmt/format.h>

#include "bench_cluster.h"
#include "gpusched/inventory/inventory.h"

namespace gpusched::bench {
namespace {

ClusterObjects Cluster(benchmark::State& state, inventory::Inventory* inv) {
  ClusterObjects cluster = MakeCluster(Kind::kWhole, static_cast<int>(state.range(0)));
  state.counters["pods"] = static_cast<double>(cluster.pods.size());
  ClusterObjects copy{.nodes = cluster.nodes};
  inv->ReplaceCluster(std::move(cluster));
  return copy;
}

void BM_InventoryPodBoundThenDeleted(benchmark::State& state) {
  inventory::Inventory inv;
  ClusterObjects cluster = Cluster(state, &inv);
  size_t i = 0;
  for (auto _ : state) {
    const Node& node = cluster.nodes[(i * 7919) % cluster.nodes.size()];
    Container c{.name = "main"};
    c.limits.nvidia_gpus = 1;
    Pod pod{.uid = fmt::format("event-{}", i), .namespace_name = "bench", .name = fmt::format("event-{}", i),
            .node_name = node.name, .phase = PodPhase::kRunning, .containers = {c}};
    std::string uid = pod.uid;
    inv.Apply(ClusterDelta{.upsert_pods = {std::move(pod)}});
    inv.Apply(ClusterDelta{.deleted_pods = {std::move(uid)}});
    ++i;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * 2);
  state.counters["us_per_event"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 2, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_InventoryNodeUpdated(benchmark::State& state) {
  inventory::Inventory inv;
  ClusterObjects cluster = Cluster(state, &inv);
  size_t i = 0;
  for (auto _ : state) {
    Node node = cluster.nodes[(i * 7919) % cluster.nodes.size()];
    node.resource_version = std::to_string(1000000 + i);
    inv.Apply(ClusterDelta{.upsert_nodes = {std::move(node)}});
    ++i;
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

BENCHMARK(BM_InventoryPodBoundThenDeleted)->ArgName("nodes")->Arg(500)->Arg(5000)->Arg(20000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_InventoryNodeUpdated)->ArgName("nodes")->Arg(500)->Arg(5000)->Arg(20000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
