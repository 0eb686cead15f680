// Filter + prioritize for one pod over 500 and 5,000 nodes of 8 GPUs at about 60% fill.
//
//   BM_PlannerFilterPrioritize  the decision core alone: every node evaluated, scores mapped
//   BM_ServiceFilterPrioritize  the extender's handlers in process: JSON body in, JSON reply out
//                               (NodeNames, as kube-scheduler sends with nodeCacheCapable: true)
#include <benchmark/benchmark.h>

#include "bench_cluster.h"
#include "cluster_json.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/score_mapping.h"

namespace gpusched::bench {
namespace {

Pod PendingPod(Kind kind) {
  Container c{.name = "main"};
  if (kind == Kind::kWhole) {
    c.limits.nvidia_gpus = 1;
  } else {
    c.limits.mgpu_core_percent = 30;
    c.limits.mgpu_memory_mib = 8192;
  }
  return Pod{.uid = "pending", .namespace_name = "bench", .name = "pending", .containers = {c}};
}

void BM_PlannerFilterPrioritize(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  inventory::Inventory inv;
  inv.ReplaceCluster(MakeCluster(kind, static_cast<int>(state.range(1))));
  auto snapshot = inv.Snapshot();
  // As filter receives them: names in the request, looked up once.
  std::vector<const placement::NodeState*> nodes;
  std::vector<std::string_view> names;
  for (const inventory::NodeStatePtr& node : snapshot->nodes()) {
    nodes.push_back(node.get());
    names.push_back(node->node.name);
  }
  placement::PodRequest request = placement::AnalyzePod(PendingPod(kind));
  placement::Planner planner(placement::PlacementOptions{});
  size_t fits = 0;
  for (auto _ : state) {
    std::vector<placement::ScoredNode> scored;
    scored.reserve(nodes.size());
    size_t failed = 0;
    placement::EvaluateNodes(planner, request, nodes, [&](size_t i, placement::NodeVerdict&& v) {
      if (v.fits) {
        scored.push_back({names[i], v.score});
      } else {
        ++failed;
      }
    });
    std::vector<int64_t> scores = placement::MapScores(scored, placement::ScoreMapping::kRank);
    benchmark::DoNotOptimize(scores.data());
    benchmark::DoNotOptimize(failed);
    fits = scored.size();
  }
  state.counters["fitting_nodes"] = static_cast<double>(fits);
  state.SetItemsProcessed(state.iterations() * state.range(1));
}

void BM_ServiceFilterPrioritize(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  inventory::Inventory inv;
  ClusterObjects cluster = MakeCluster(kind, static_cast<int>(state.range(1)));
  std::vector<std::string> names = NodeNames(cluster);
  inv.ReplaceCluster(std::move(cluster));
  extender::Service service(&inv, extender::ServiceOptions{});
  std::string body = testing::ArgsWithNames(PendingPodJson(kind, "pending"), names);
  size_t reply_bytes = 0;
  for (auto _ : state) {
    std::string filtered = service.Filter(body);
    std::string scores = service.Prioritize(body);
    benchmark::DoNotOptimize(filtered.data());
    benchmark::DoNotOptimize(scores.data());
    reply_bytes = filtered.size() + scores.size();
  }
  state.counters["request_bytes"] = static_cast<double>(body.size());
  state.counters["reply_bytes"] = static_cast<double>(reply_bytes);
  state.SetItemsProcessed(state.iterations() * state.range(1));
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int kind : {0, 1}) {
    for (int nodes : {500, 5000}) b->Args({kind, nodes});
  }
  b->ArgNames({"mgpu", "nodes"})->Unit(benchmark::kMicrosecond);
}

BENCHMARK(BM_PlannerFilterPrioritize)->Apply(Sizes);
BENCHMARK(BM_ServiceFilterPrioritize)->Apply(Sizes);

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
