// One HTTP filter round trip (and filter + prioritize) over a real loopback socket with 5,000
// NodeNames, as kube-scheduler sends with nodeCacheCapable: true.
#include <benchmark/benchmark.h>

#include "bench_cluster.h"
#include "cluster_json.h"
#include "gpusched/kubejson/objects.h"
#include "http_client.h"
#include "test_server.h"

namespace gpusched::bench {
namespace {

void BM_HttpRoundTrip(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  bool with_prioritize = state.range(2) != 0;
  ClusterObjects cluster = MakeCluster(kind, static_cast<int>(state.range(1)));
  std::vector<std::string> names = NodeNames(cluster);
  testing::TestServer server(testing::ListJson({}));
  server.inventory().ReplaceCluster(std::move(cluster));
  testing::HttpClient client(server.port());
  std::string body = testing::ArgsWithNames(PendingPodJson(kind, "pending"), names);
  for (auto _ : state) {
    testing::HttpReply r = client.Post("/filter", body);
    if (r.status != 200) state.SkipWithError("filter failed");
    if (with_prioritize) {
      testing::HttpReply p = client.Post("/prioritize", body);
      if (p.status != 200) state.SkipWithError("prioritize failed");
    }
  }
  state.counters["request_bytes"] = static_cast<double>(body.size());
}

BENCHMARK(BM_HttpRoundTrip)
    ->ArgNames({"mgpu", "nodes", "prioritize"})
    ->Args({0, 5000, 0})
    ->Args({1, 5000, 0})
    ->Args({0, 5000, 1})
    ->Args({1, 5000, 1})
    ->Args({1, 500, 1})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
