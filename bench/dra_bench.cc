// DRA filter for a pod with one claim for 2 GPUs, selected by productName and memory, over 500
// nvidia-dra nodes of 8 GPUs each with half of them allocated (issue 3's yardstick; upstream
// kube-scheduler's DynamicResources plugin manages 50-80 pods/s at 500 nodes in scheduler_perf).
//
//   BM_DraPlannerFilter    the decision core for one pod after another of the same claim shape:
//                          verdicts cached per node, two nodes changed before each pod
//   BM_DraPlannerRank      the same with the ranked (topology-aligned) choice and the score
//   BM_DraPlanner*Uncached the allocator on every node (what the two above measured before the
//                          verdict cache)
//   BM_DraServiceFilter    the extender's filter in process: JSON body in, JSON reply out
//   BM_DraServiceFilterLinked  the same on nodes whose agent published NVLink pairs: upstream's
//                          first fit judged against them, half the nodes refused for it
//   BM_DraServiceFilterLinkedOwner  the same in DRA owner mode: the ranked choice judged
//   BM_DraServicePrioritize the extender's prioritize in process: cached verdicts, then the node
//                          policy on each fitting node's GPU devices
//   BM_DraServiceFilterExtended  the filter for a pod asking limits nvidia.com/gpu: 2, served
//                          through DRA by a special claim (KEP 5004; goal < 500 µs)
//   BM_DraServicePreempt   the preempt verb in process on full nodes (4 bound pods of priority 0
//                          holding 2 GPUs each through their claims), every node a placeholder
//   BM_DraServiceDefrag    /debug/defrag's plan for the pod on nodes with one GPU free each (500
//                          and 5,000 nodes): one
//                          1-GPU pod moves (placement/dra_defrag.h); full=1: every node full, no
//                          plan (each node skipped: no free devices elsewhere for its pods)
//   BM_DraGangPlan         a gang of 64 members, each with a claim of the pending pod's shape (2
//                          GPUs), planned together over 5,000 nodes (placement/gang_planner.h):
//                          the DRA planner's ranked choice on every node for the first member,
//                          cached verdicts on the nodes the plan did not edit after it
//   BM_DraAllocatorColdCel every node once with empty selector caches (CEL evaluated per device)
//   BM_DraStateFromJson    one DRA change the old way: every object decoded again from JSON
//   BM_DraStateFromTypedDelta  one claim change now: applied to the typed set, state rebuilt
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "cluster_json.h"
#include "gpusched/extender/inventory_claim_writer.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubejson/dra_objects.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/placement/dra_planner.h"
#include "gpusched/placement/gang_planner.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::bench {
namespace {

constexpr std::string_view kSelector =
    "device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3' && "
    "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('79Gi')) >= 0";

void AddJson(ClusterObjects* c, const std::string& object) {
  if (!kubejson::AppendClusterJson(object, c).ok()) std::abort();
}

std::string NodeName(int n) { return fmt::format("dra-{:04}", n); }

// How full DraCluster makes each node: GPUs 0-3 held by one claim of no pod; every GPU held by 4
// claims of 2 GPUs for 4 pods of priority 0 bound there; or 7 GPUs so, the last claim of 1 GPU.
enum class Fill { kHalf, kFull, kOneFree };

// Node `node`'s GPUs held by claims of `sizes` GPUs (from GPU 0 on), each generated from a template
// for a pod of priority 0 bound there and reserved for it.
std::vector<std::string> HeldNodeJson(const std::string& node, const std::vector<int>& sizes) {
  std::vector<std::string> out;
  int next = 0;
  for (int k = 0; k < static_cast<int>(sizes.size()); ++k) {
    std::string results;
    for (int i = next; i < next + sizes[k]; ++i) {
      results += fmt::format(R"({}{{"request":"gpus","driver":"gpu.nvidia.com","pool":"{}","device":"gpu-{}"}})", i > next ? "," : "", node, i);
    }
    next += sizes[k];
    out.push_back(fmt::format(
        R"({{"kind":"ResourceClaim","metadata":{{"name":"hold-{0}-{1}","namespace":"ml","uid":"c-{0}-{1}",
        "ownerReferences":[{{"apiVersion":"v1","kind":"Pod","name":"p-{0}-{1}","uid":"p-{0}-{1}","controller":true}}]}},
        "spec":{{"devices":{{"requests":[{{"name":"gpus","exactly":{{"deviceClassName":"gpu.nvidia.com","count":{3}}}}}]}}}},
        "status":{{"allocation":{{"devices":{{"results":[{2}]}}}},"reservedFor":[{{"resource":"pods","name":"p-{0}-{1}","uid":"p-{0}-{1}"}}]}}}})",
        node, k, results, sizes[k]));
    out.push_back(fmt::format(
        R"({{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"p-{0}-{1}","namespace":"ml","uid":"p-{0}-{1}"}},
        "spec":{{"nodeName":"{0}","priority":0,"containers":[{{"name":"main","resources":{{"requests":{{"cpu":"4"}},"claims":[{{"name":"gpus"}}]}}}}],
        "resourceClaims":[{{"name":"gpus","resourceClaimTemplateName":"two-gpus"}}]}},
        "status":{{"phase":"Running","resourceClaimStatuses":[{{"name":"gpus","resourceClaimName":"hold-{0}-{1}"}}]}}}})",
        node, k));
  }
  return out;
}

// The DRA objects as Kubernetes JSON: one slice per node, the NVIDIA class, the pending pod's
// claim and, for every node, the claims of `fill`.
std::vector<std::string> DraClusterJson(int nodes, Fill fill = Fill::kHalf, bool uuids = false) {
  std::vector<std::string> out;
  for (int n = 0; n < nodes; ++n) {
    std::string node = NodeName(n);
    std::string devices;
    for (int i = 0; i < 8; ++i) {
      std::string uuid = uuids ? fmt::format(R"("uuid":{{"string":"GPU-{}-{}"}},)", node, i) : "";
      devices += fmt::format(R"({}{{"name":"gpu-{}","attributes":{{"type":{{"string":"gpu"}},"productName":{{"string":"NVIDIA H100 80GB HBM3"}},{}
        "resource.kubernetes.io/pcieRoot":{{"string":"pci0000:{}"}}}},"capacity":{{"memory":{{"value":"81559Mi"}}}}}})",
                             i ? "," : "", i, uuid, i / 2);
    }
    out.push_back(fmt::format(
        R"({{"kind":"ResourceSlice","metadata":{{"name":"{0}-gpu"}},"spec":{{"driver":"gpu.nvidia.com","nodeName":"{0}",
        "pool":{{"name":"{0}","generation":1,"resourceSliceCount":1}},"devices":[{1}]}}}})",
        node, devices));
    if (fill != Fill::kHalf) {
      for (std::string& o : HeldNodeJson(node, fill == Fill::kFull ? std::vector<int>{2, 2, 2, 2} : std::vector<int>{2, 2, 2, 1})) {
        out.push_back(std::move(o));
      }
      continue;
    }
    std::string results;
    for (int i = 0; i < 4; ++i) {
      results += fmt::format(R"({}{{"request":"gpus","driver":"gpu.nvidia.com","pool":"{}","device":"gpu-{}"}})", i ? "," : "", node, i);
    }
    out.push_back(fmt::format(
        R"({{"kind":"ResourceClaim","metadata":{{"name":"busy-{0}","namespace":"ml"}},
        "spec":{{"devices":{{"requests":[{{"name":"gpus","exactly":{{"deviceClassName":"gpu.nvidia.com","count":4}}}}]}}}},
        "status":{{"allocation":{{"devices":{{"results":[{1}]}}}}}}}})",
        node, results));
  }
  out.push_back(R"({"kind":"DeviceClass","metadata":{"name":"gpu.nvidia.com"},"spec":{"selectors":[{"cel":{"expression":
    "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
    "extendedResourceName":"nvidia.com/gpu"}})");
  std::string selector;
  json::AppendString(&selector, kSelector);
  out.push_back(fmt::format(
      R"({{"kind":"ResourceClaim","metadata":{{"name":"train","namespace":"ml"}},"spec":{{"devices":{{"requests":[{{"name":"gpus",
      "exactly":{{"deviceClassName":"gpu.nvidia.com","count":2,"selectors":[{{"cel":{{"expression":{}}}}}]}}}}]}}}}}})",
      selector));
  return out;
}

// The node agent's annotation for node n: NVLink pairs GPU i with GPU i^1 on even nodes, with
// GPU i^2 (across the PCIe roots) on odd ones. As a JSON string, quoted.
std::string LinkedGpusAnnotation(int n) {
  std::string devices;
  for (int i = 0; i < 8; ++i) {
    devices += fmt::format(R"({}{{"index":{},"uuid":"GPU-{}-{}","nvlinkPeers":[{}]}})", i ? "," : "", i, NodeName(n), i, i ^ (n % 2 ? 2 : 1));
  }
  std::string quoted;
  json::AppendString(&quoted, "[" + devices + "]");
  return quoted;
}

// The whole cluster: nvidia-dra nodes and the DRA objects above; with `linked`, each node's
// GPUs described by the agent with NVLink pairs (LinkedGpusAnnotation).
ClusterObjects DraCluster(int nodes, Fill fill = Fill::kHalf, bool linked = false) {
  ClusterObjects c;
  for (int n = 0; n < nodes; ++n) {
    std::string annotations = linked ? fmt::format(R"(,"annotations":{{"gpusched.io/gpu-devices":{}}})", LinkedGpusAnnotation(n)) : "";
    AddJson(&c, fmt::format(R"({{"apiVersion":"v1","kind":"Node","metadata":{{"name":"{}","labels":{{"vke.node.gpu.schedule":"nvidia-dra"}}{}}},
      "status":{{"allocatable":{{"cpu":"64","memory":"527952472Ki","pods":"110"}}}}}})",
                            NodeName(n), annotations));
  }
  for (const std::string& text : DraClusterJson(nodes, fill, linked)) AddJson(&c, text);
  return c;
}

std::string PodJson() {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"trainer","namespace":"ml","uid":"trainer"},
    "spec":{"containers":[{"name":"main"}],"resourceClaims":[{"name":"gpus","resourceClaimName":"train"}]}})";
}

Pod PendingPod() {
  rapidjson::Document d;
  d.Parse(PodJson().c_str());
  return kubejson::DecodePod(d, "Pod").value();
}

// A claim holding GPUs 4 and 5 of node `n`: moved to the next node before each cached pass, so
// that two nodes' DRA inputs change between consecutive pods (one freed, one taken).
dra::ResourceClaim Mover(int n) {
  dra::ResourceClaim c{.namespace_name = "ml", .name = "mover", .uid = "mover"};
  c.allocation = dra::AllocationResult{};
  for (int i : {4, 5}) c.allocation->results.push_back(dra::DeviceResult{.request = "gpus", .id = {"gpu.nvidia.com", NodeName(n), fmt::format("gpu-{}", i)}});
  return c;
}

// Every node judged for the pending pod. Cached: through one DraVerdictCache kept across
// iterations, as the service keeps it for pods of one claim shape, with the mover claim moved
// (outside the timing) before each pass; uncached: every node through the allocator.
void PlannerFilter(benchmark::State& state, bool rank, bool cached) {
  int nodes = static_cast<int>(state.range(0));
  inventory::Inventory inv;
  inv.ReplaceCluster(DraCluster(nodes));
  auto snapshot = inv.Snapshot();
  dra::ClusterStatePtr dra = snapshot->dra_ptr();
  Pod pod = PendingPod();
  dra::cel::ProgramCache programs;
  placement::DraVerdictCache cache;
  size_t fits = 0;
  int64_t steps = 0, pass = 0;
  for (auto _ : state) {
    if (cached) {
      state.PauseTiming();
      dra = dra::WithClaim(*dra, Mover(static_cast<int>(pass++ % nodes)));
      state.ResumeTiming();
    }
    placement::DraPlanner planner(*dra, pod, &programs);
    fits = 0;
    steps = 0;
    for (uint32_t pos = 0; pos < snapshot->nodes().size(); ++pos) {
      const placement::NodeState& node = *snapshot->nodes()[pos];
      if (cached) {
        std::shared_ptr<const placement::DraVerdict> v = planner.Evaluate(node, pos, rank, &cache);
        fits += v->fits();
        benchmark::DoNotOptimize(v);
      } else {
        placement::DraVerdict v = planner.Evaluate(node, rank);
        fits += v.fits();
        steps += v.steps;
        benchmark::DoNotOptimize(v);
      }
    }
  }
  state.counters["fitting_nodes"] = static_cast<double>(fits);
  if (!cached) state.counters["allocator_steps"] = static_cast<double>(steps);
}

void BM_DraPlannerFilter(benchmark::State& state) { PlannerFilter(state, false, true); }
void BM_DraPlannerRank(benchmark::State& state) { PlannerFilter(state, true, true); }
void BM_DraPlannerFilterUncached(benchmark::State& state) { PlannerFilter(state, false, false); }
void BM_DraPlannerRankUncached(benchmark::State& state) { PlannerFilter(state, true, false); }

// `pod` through the extender's filter or prioritize in process, JSON in and out, over the DRA
// cluster; returns the last reply.
std::string ServiceVerb(benchmark::State& state, const std::string& pod, bool prioritize, bool linked = false, bool owner = false) {
  inventory::Inventory inv;
  ClusterObjects cluster = DraCluster(static_cast<int>(state.range(0)), Fill::kHalf, linked);
  std::vector<std::string> names;
  for (const Node& n : cluster.nodes) names.push_back(n.name);
  inv.ReplaceCluster(std::move(cluster));
  extender::InventoryClaimWriter writer(&inv);
  extender::Service service(&inv, extender::ServiceOptions{},
                            extender::ServiceCollaborators{.claim_writer = owner ? &writer : nullptr});
  std::string body = testing::ArgsWithNames(pod, names);
  std::string out;
  for (auto _ : state) {
    out = prioritize ? service.Prioritize(body) : service.Filter(body);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["reply_bytes"] = static_cast<double>(out.size());
  return out;
}

void BM_DraServiceFilter(benchmark::State& state) { ServiceVerb(state, PodJson(), false); }

// The same filter where the agent published NVLink pairs: upstream's first fit (GPU4+GPU5) is
// judged against them on every node, and the odd nodes, where it is not a pair, are refused.
void BM_DraServiceFilterLinked(benchmark::State& state) {
  std::string out = ServiceVerb(state, PodJson(), false, true);
  size_t refused = 0;
  for (size_t at = out.find("not NVLink-connected"); at != std::string::npos; at = out.find("not NVLink-connected", at + 1)) ++refused;
  state.counters["nodes_refused"] = static_cast<double>(refused);
}

// The same in DRA owner mode: gpusched's ranked choice is what will be allocated, so filter
// works it out on every linked node (a connected pair is free on each: none is refused).
void BM_DraServiceFilterLinkedOwner(benchmark::State& state) {
  std::string out = ServiceVerb(state, PodJson(), false, true, true);
  state.counters["nodes_kept"] = static_cast<double>(testing::KeptNodes(out).size());
}

// Prioritize: verdicts from the cache of the pod's shape, then each fitting node scored by the
// node policy on its GPU devices.
void BM_DraServicePrioritize(benchmark::State& state) { ServiceVerb(state, PodJson(), true); }

// A pod asking limits nvidia.com/gpu: 2, served through DRA (KEP 5004): its special claim is
// allocated on every node, through the verdict cache kept for its shape.
void BM_DraServiceFilterExtended(benchmark::State& state) {
  std::string pod = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"whole","namespace":"ml","uid":"whole"},
    "spec":{"containers":[{"name":"main","resources":{"limits":{"nvidia.com/gpu":"2"},"requests":{"nvidia.com/gpu":"2"}}}]}})";
  std::string out = ServiceVerb(state, pod, false);
  size_t kept = 0;
  for (size_t at = out.find("dra-"); at != std::string::npos && at < out.find("FailedNodes"); at = out.find("dra-", at + 1)) ++kept;
  state.counters["nodes_kept"] = static_cast<double>(kept);
}

void BM_DraGangPlan(benchmark::State& state) {
  int nodes = static_cast<int>(state.range(0));
  int members = static_cast<int>(state.range(1));
  ClusterObjects cluster = DraCluster(nodes);
  std::string selector;
  json::AppendString(&selector, kSelector);
  std::vector<Pod> pods;
  for (int i = 0; i < members; ++i) {
    AddJson(&cluster, fmt::format(R"({{"kind":"ResourceClaim","metadata":{{"name":"train-{}","namespace":"ml"}},"spec":{{"devices":{{"requests":[
      {{"name":"gpus","exactly":{{"deviceClassName":"gpu.nvidia.com","count":2,"selectors":[{{"cel":{{"expression":{}}}}}]}}}}]}}}}}})",
                                  i, selector));
    Pod p = PendingPod();
    p.name = p.uid = fmt::format("trainer-{}", i);
    p.resource_claims[0].claim_name = fmt::format("train-{}", i);
    pods.push_back(std::move(p));
  }
  inventory::Inventory inv;
  inv.ReplaceCluster(std::move(cluster));
  auto snapshot = inv.Snapshot();
  std::vector<placement::GangMember> gang;
  for (const Pod& p : pods) gang.push_back(placement::GangMember{.pod = &p, .request = placement::AnalyzePod(p)});
  std::vector<const placement::NodeState*> states;
  for (const inventory::NodeStatePtr& n : snapshot->nodes()) states.push_back(n.get());
  std::unique_ptr<scoring::Scorer> scorer = std::move(scoring::MakeScorer("binpack", nullptr)).value();
  dra::cel::ProgramCache programs;
  placement::GangDra dra{.state = &snapshot->dra(), .programs = &programs};
  placement::GangPlan plan;
  for (auto _ : state) {
    plan = placement::PlanGang(gang, states, placement::PlacementOptions{}, *scorer, dra);
    benchmark::DoNotOptimize(plan);
  }
  if (!plan.fits) state.SkipWithError(plan.reason.c_str());
  state.counters["nodes_used"] = static_cast<double>(plan.nodes);
}

void BM_DraServicePreempt(benchmark::State& state) {
  inventory::Inventory inv;
  ClusterObjects cluster = DraCluster(static_cast<int>(state.range(0)), Fill::kFull);
  std::map<std::string, std::vector<std::string>> placeholders;
  for (const Node& n : cluster.nodes) placeholders[n.name] = {};
  inv.ReplaceCluster(std::move(cluster));
  extender::Service service(&inv, extender::ServiceOptions{});
  std::string pod = PodJson();
  pod.replace(pod.find(R"("containers")"), 12, R"("priority":1000,"containers")");
  std::string body = testing::PreemptMetaJson(pod, placeholders);
  size_t reply = 0;
  for (auto _ : state) {
    StatusOr<std::string> out = service.Preempt(body);
    if (!out.ok()) state.SkipWithError(out.status().message().c_str());
    reply = out.ok() ? out->size() : 0;
    benchmark::DoNotOptimize(out);
  }
  state.counters["reply_bytes"] = static_cast<double>(reply);
}

// /debug/defrag's plan for the pod's claim (2 H100s) on nodes with one GPU free each: every node
// weighed (its 1-GPU pod must leave), then that pod's claim placed on another node. With arg
// full=1 every node is full: no plan, after the most candidates tried.
void BM_DraServiceDefrag(benchmark::State& state) {
  inventory::Inventory inv;
  inv.ReplaceCluster(DraCluster(static_cast<int>(state.range(0)), state.range(1) != 0 ? Fill::kFull : Fill::kOneFree));
  extender::Service service(&inv, extender::ServiceOptions{});
  std::string pod = PodJson();
  size_t moves = 0;
  for (auto _ : state) {
    StatusOr<extender::DefragResult> plan = service.Defrag(pod, 0, 8);
    if (!plan.ok()) state.SkipWithError(plan.status().message().c_str());
    std::string out = plan.ok() ? extender::DefragJson(*plan) : "";
    moves = plan.ok() && plan->plan.fits ? static_cast<size_t>(std::count(out.begin(), out.end(), '{')) - 2 : 0;
    benchmark::DoNotOptimize(out);
  }
  state.counters["moves"] = static_cast<double>(moves);
}

// The DRA state of `cluster`, built anew (the set it is built from is gone on return).
dra::ClusterStatePtr FreshState(const ClusterObjects& cluster) {
  dra::DraObjectSet objects;
  objects.Apply(dra::DraDelta{.upserts = cluster.dra_objects});
  return objects.Build();
}

void BM_DraAllocatorColdCel(benchmark::State& state) {
  ClusterObjects cluster = DraCluster(static_cast<int>(state.range(0)));
  Pod pod = PendingPod();
  for (auto _ : state) {
    state.PauseTiming();
    dra::ClusterStatePtr dra = FreshState(cluster);  // fresh slices: empty verdict caches
    dra::cel::ProgramCache programs;
    state.ResumeTiming();
    placement::DraPlanner planner(*dra, pod, &programs);
    for (const Node& n : cluster.nodes) {
      placement::NodeState node = placement::BuildNodeState(n, {});
      benchmark::DoNotOptimize(planner.Evaluate(node, false));
    }
  }
}

// What one ResourceClaim change costs the DRA state at N nodes (a slice and a claim per node).
// Before: every DRA object decoded again from its JSON, under the inventory's lock
// (BM_DraStateFromJson reproduces that path); now: the change applied to the typed set and the
// state built from it, outside the lock (BM_DraStateFromTypedDelta).
void BM_DraStateFromJson(benchmark::State& state) {
  std::vector<std::string> json = DraClusterJson(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    ClusterObjects decoded;
    for (const std::string& text : json) AddJson(&decoded, text);
    dra::DraObjectSet objects;
    objects.Apply(dra::DraDelta{.upserts = std::move(decoded.dra_objects)});
    benchmark::DoNotOptimize(objects.Build());
  }
}

void BM_DraStateFromTypedDelta(benchmark::State& state) {
  ClusterObjects cluster = DraCluster(static_cast<int>(state.range(0)));
  dra::DraObjectSet objects;
  objects.Apply(dra::DraDelta{.upserts = cluster.dra_objects});
  dra::DraObject claim = cluster.dra_objects.back();  // the pending pod's claim
  int64_t version = 0;
  dra::ClusterStatePtr last = objects.Build();
  for (auto _ : state) {
    claim.resource_version = std::to_string(++version);
    objects.Apply(dra::DraDelta{.upserts = {claim}});
    last = objects.Build(last.get());  // as the live sync builds: node versions follow the last state
    benchmark::DoNotOptimize(last);
  }
}

BENCHMARK(BM_DraStateFromJson)->Arg(500)->Arg(5000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DraStateFromTypedDelta)->Arg(500)->Arg(5000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DraPlannerFilter)->Arg(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DraPlannerRank)->Arg(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DraPlannerFilterUncached)->Arg(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DraPlannerRankUncached)->Arg(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DraServiceFilter)->Arg(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DraServiceFilterLinked)->Arg(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DraServiceFilterLinkedOwner)->Arg(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DraServicePrioritize)->Arg(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DraServiceFilterExtended)->Arg(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DraServicePreempt)->Arg(500)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DraServiceDefrag)->ArgNames({"nodes", "full"})->Args({500, 0})->Args({500, 1})->Args({5000, 0})->Args({5000, 1})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DraGangPlan)->ArgNames({"nodes", "members"})->Args({5000, 64})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DraAllocatorColdCel)->Arg(500)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
