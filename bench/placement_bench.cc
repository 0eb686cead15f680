// Filter + prioritize for one pod over 500 and 5,000 nodes of 8 GPUs at about 60% fill.
//
//   BM_PlannerFilterPrioritize  the decision core alone, as the extender runs it: scores of the
//                               last pod of the same shape reused (placement/score_cache.h), with
//                               one node changed between pods (the one the last pod was bound
//                               to), every node's verdict and score produced, scores mapped
//   ...Uncached                 the same with nothing reused: the first pod of a shape
//   BM_ServiceFilterPrioritize  the extender's handlers in process: JSON body in, JSON reply out
//                               (NodeNames, as kube-scheduler sends with nodeCacheCapable: true)
//   BM_ServicePreempt           the preempt verb's handler: 500 full candidates, 10 offered victims each
//   BM_ServiceExplain           /explain of one pod over 5,000 nodes, at 60% fill and full
//   BM_PreemptChooseVictims     victim choice (placement/victims.h) on every node of a full
//                               cluster for a pod of higher priority than every pod there: a
//                               whole GPU (whole-GPU nodes) or 90% core and 40 GiB of one GPU
//                               (mGPU nodes)
//   BM_ServiceDefrag            /debug/defrag's plan for a pod that fits nowhere, at 85% fill;
//                               target=1: one consolidation move
//   BM_GangPlan                 a gang's plan (placement/gang_planner.h): `members` pods of one
//                               GPU (whole) or 30% core and 8 GiB (mGPU) over the cluster at
//                               60% fill, all or nothing
//   BM_ServiceGangMemberFilter  filter for one member of a held gang of `members` (each as
//                               BM_GangPlan's) over every node: its slot kept, every other node
//                               failed naming it (extender/gang_holds.h)
//   BM_GroupDefrag              room for a group at once (placement/group_defrag.h): `members` pods
//                               of `gpus` whole GPUs or 30% shares, at most 64 moves
//   BM_ServiceSteeredFilter     filter for a GPU pod outside groups on nodes in NVLink cliques of
//                               18, topology.steer on (1) or off (0) (extender/domain_steering.h)
//   BM_ServiceSteeredPassThrough  filter for a pod without GPUs on the same cliques: kept to the
//                               fullest clique in use (steer=1) or passed through (0)
//   BM_DomainIndexUpdate        the domains of a snapshot one bind newer than the last one seen
//                               (incremental=1) or from nothing (0), 5,000 nodes in cliques
//   BM_DomainIndexWithWaitingGang  the same, incremental, while a gang of 16 waits: the domain
//                               kept for it chosen again (extender/gang_reservation.h)
//   BM_GangDemands              what `gangs` gangs of 16 members ask: domain steering's target,
//                               read again when groups or members change (domain_steering.h)
//   BM_KeptOffJudgement         whether a gang of `members` pending pods stays off the domain kept
//                               for another waiting gang (extender/pod_evaluation.h's
//                               KeptOffFor), 5,000 nodes in cliques of 18: every plan asks it
//   BM_KueueJudgeWorkload       the Kueue admission check's verdict (extender/kueue_check.h) on
//                               a Workload of `pods` pods, each as BM_GangPlan's members, over
//                               the cluster at 60% fill: its pods made, planned together, Ready
//   BM_ServiceDomainMemberFilter  filter for one member of a gang of `members` with a topology
//                               key, racks of 64 nodes, offered its rack's nodes as one
//                               domain's pass does: the domain's plan kept
//                               (extender/domain_plans.h); first=1: the plan made, as at a
//                               pass's first member
#include <benchmark/benchmark.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <tuple>

#include "bench_cluster.h"
#include "cluster_json.h"
#include "gpusched/extender/kueue_check.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/extender/service.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/gang_planner.h"
#include "gpusched/placement/group_defrag.h"
#include "gpusched/placement/node_ranking.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/score_mapping.h"
#include "gpusched/placement/victims.h"
#include "gpusched/scoring/scorer.h"

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

// Filter (every node checked) and prioritize (the fitting nodes scored by `policy` and mapped to
// 0-10), as the handlers do once the request is parsed.
void PlannerFilterPrioritize(benchmark::State& state, std::string_view policy, bool cached = true) {
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
  scoring::TargetWorkload workload = placement::ObservedWorkload(nodes);
  auto scorer = scoring::MakeScorer(policy, &workload);
  std::vector<uint32_t> order(nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::vector<uint64_t> generations(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) generations[i] = snapshot->nodes().generation(i);
  placement::ScoreCache cache;
  uint64_t next_generation = uint64_t{1} << 40;
  size_t changed = 0;
  size_t fits = 0;
  for (auto _ : state) {
    // The node the previous pod went to is a new state now.
    generations[changed] = ++next_generation;
    changed = (changed + 7919) % nodes.size();
    size_t failed = 0;
    std::vector<placement::RankedNode> ranked = placement::FilterAndRank(
        planner, **scorer, request, nodes, order, 42, [&](size_t, placement::NodeVerdict&&) { ++failed; },
        placement::CachedScores{cached ? &cache : nullptr, generations});
    std::vector<placement::ScoredNode> scored(ranked.size());
    for (size_t i = 0; i < ranked.size(); ++i) scored[i] = {names[ranked[i].pos], ranked[i].score};
    std::vector<int64_t> mapped = placement::MapScores(scored, placement::ScoreMapping::kRank);
    benchmark::DoNotOptimize(mapped.data());
    benchmark::DoNotOptimize(failed);
    fits = ranked.size();
  }
  state.counters["fitting_nodes"] = static_cast<double>(fits);
  state.SetItemsProcessed(state.iterations() * state.range(1));
}

void BM_PlannerFilterPrioritize(benchmark::State& state) { PlannerFilterPrioritize(state, "binpack"); }
void BM_PlannerFilterPrioritizeFgd(benchmark::State& state) { PlannerFilterPrioritize(state, "fgd"); }
void BM_PlannerFilterPrioritizeSoftmix(benchmark::State& state) { PlannerFilterPrioritize(state, "softmix"); }
void BM_PlannerFilterPrioritizeUncached(benchmark::State& state) { PlannerFilterPrioritize(state, "binpack", false); }
void BM_PlannerFilterPrioritizeFgdUncached(benchmark::State& state) { PlannerFilterPrioritize(state, "fgd", false); }
void BM_PlannerFilterPrioritizeSoftmixUncached(benchmark::State& state) {
  PlannerFilterPrioritize(state, "softmix", false);
}

void BM_GangPlan(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  inventory::Inventory inv;
  inv.ReplaceCluster(MakeCluster(kind, static_cast<int>(state.range(1))));
  auto snapshot = inv.Snapshot();
  std::vector<const placement::NodeState*> nodes;
  for (const inventory::NodeStatePtr& node : snapshot->nodes()) nodes.push_back(node.get());
  std::deque<Pod> pods;
  std::vector<placement::GangMember> members;
  for (int64_t i = 0; i < state.range(2); ++i) {
    Pod& p = pods.emplace_back(PendingPod(kind));
    p.uid = p.name = "member-" + std::to_string(i);
    members.push_back(placement::GangMember{.pod = &p, .request = placement::AnalyzePod(p)});
  }
  scoring::TargetWorkload workload = placement::ObservedWorkload(nodes);
  auto scorer = scoring::MakeScorer("binpack", &workload);
  size_t used = 0;
  for (auto _ : state) {
    placement::GangPlan plan = placement::PlanGang(members, nodes, placement::PlacementOptions{}, **scorer);
    if (!plan.fits) state.SkipWithError(plan.reason.c_str());
    used = plan.nodes;
  }
  state.counters["nodes_used"] = static_cast<double>(used);
}

void BM_KueueJudgeWorkload(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  inventory::Inventory inv;
  inv.ReplaceCluster(MakeCluster(kind, static_cast<int>(state.range(1))));
  auto snapshot = inv.Snapshot();
  kueue::Workload w{.namespace_name = "ml", .name = "wl", .resource_version = "1", .quota_reserved = true};
  w.pod_sets.push_back(kueue::PodSet{.name = "main", .count = static_cast<int32_t>(state.range(2)), .prototype = PendingPod(kind)});
  inventory::KueueState kueue;
  extender::ServiceOptions options;
  dra::cel::ProgramCache programs;
  for (auto _ : state) {
    extender::WorkloadVerdict v =
        extender::JudgeWorkload(w, kueue, extender::EvaluationInputs{.snapshot = snapshot.get(), .options = &options, .programs = &programs});
    if (v.state != kueue::CheckState::kReady) state.SkipWithError(v.message.c_str());
  }
}

// Room for a group at once (placement/group_defrag.h): `members` members of `gpus` whole GPUs
// (mgpu:0) or 30% shares (mgpu:1, gpus ignored) over the cluster at 60% fill.
void BM_GroupDefrag(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  inventory::Inventory inv;
  inv.ReplaceCluster(MakeCluster(kind, static_cast<int>(state.range(1))));
  auto snapshot = inv.Snapshot();
  placement::DefragInput input{.budgets = snapshot->budgets()};
  for (const inventory::NodeStatePtr& node : snapshot->nodes()) input.nodes.push_back(node.get());
  std::deque<Pod> pods;
  std::vector<placement::GangMember> members;
  for (int64_t i = 0; i < state.range(2); ++i) {
    Pod& p = pods.emplace_back(PendingPod(kind));
    p.uid = p.name = "member-" + std::to_string(i);
    if (kind == Kind::kWhole) p.containers[0].limits.nvidia_gpus = state.range(3);
    members.push_back(placement::GangMember{.pod = &p, .request = placement::AnalyzePod(p)});
  }
  size_t moves = 0;
  for (auto _ : state) {
    placement::GroupRoomPlan plan = placement::MakeRoomForGroup(members, input, placement::DefragOptions{.max_moves = 64});
    if (!plan.fits) state.SkipWithError(plan.reason.c_str());
    moves = plan.moves.size();
  }
  state.counters["moves"] = static_cast<double>(moves);
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

void BM_ServiceGangMemberFilter(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  inventory::Inventory inv;
  ClusterObjects cluster = MakeCluster(kind, static_cast<int>(state.range(1)));
  std::vector<std::string> names = NodeNames(cluster);
  cluster.pod_groups.push_back(PodGroup{.namespace_name = "bench", .name = "train", .min_count = static_cast<int32_t>(state.range(2))});
  for (int64_t i = 0; i < state.range(2); ++i) {
    Pod& p = cluster.pods.emplace_back(PendingPod(kind));
    p.uid = p.name = "member-" + std::to_string(i);
    p.group = PodGroupRef{.name = "train"};
  }
  inv.ReplaceCluster(std::move(cluster));
  extender::Service service(&inv, extender::ServiceOptions{});
  if (service.SweepGangs() != 1) state.SkipWithError("the gang was not planned");
  testing::PodJson member{.name = "member-0", .namespace_name = "bench", .uid = "member-0", .resource_version = "81240001",
                          .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"};
  member.containers = {kind == Kind::kWhole ? testing::WholeGpus("main", 1) : testing::Mgpu("main", 30, 8192)};
  std::string body = testing::ArgsWithNames(member.ToJson(), names);
  std::string filtered;
  for (auto _ : state) {
    filtered = service.Filter(body);
    benchmark::DoNotOptimize(filtered.data());
  }
  state.counters["kept"] = static_cast<double>(testing::KeptNodes(filtered).size());
  state.counters["reply_bytes"] = static_cast<double>(filtered.size());
}

void BM_ServiceDomainMemberFilter(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  bool first = state.range(3) != 0;
  ClusterObjects cluster = MakeCluster(kind, static_cast<int>(state.range(1)));
  std::vector<std::string> rack;
  for (size_t i = 0; i < cluster.nodes.size(); ++i) {
    cluster.nodes[i].labels["rack"] = "r" + std::to_string(i / 64);
    if (i < 64) rack.push_back(cluster.nodes[i].name);
  }
  cluster.pod_groups.push_back(PodGroup{.namespace_name = "bench", .name = "train", .min_count = static_cast<int32_t>(state.range(2)),
                                        .topology_key = "rack"});
  for (int64_t i = 0; i < state.range(2); ++i) {
    Pod& p = cluster.pods.emplace_back(PendingPod(kind));
    p.uid = p.name = "member-" + std::to_string(i);
    p.group = PodGroupRef{.name = "train"};
  }
  inventory::Inventory inv;
  inv.ReplaceCluster(std::move(cluster));
  testing::PodJson member{.name = "member-0", .namespace_name = "bench", .uid = "member-0", .resource_version = "81240001",
                          .spec_extra = R"("schedulingGroup":{"podGroupName":"train"})"};
  member.containers = {kind == Kind::kWhole ? testing::WholeGpus("main", 1) : testing::Mgpu("main", 30, 8192)};
  std::string body = testing::ArgsWithNames(member.ToJson(), rack);
  std::unique_ptr<extender::Service> service = std::make_unique<extender::Service>(&inv, extender::ServiceOptions{});
  std::string filtered;
  for (auto _ : state) {
    if (first) {  // a new service: no plan kept
      state.PauseTiming();
      service = std::make_unique<extender::Service>(&inv, extender::ServiceOptions{});
      state.ResumeTiming();
    }
    filtered = service->Filter(body);
    benchmark::DoNotOptimize(filtered.data());
  }
  state.counters["kept"] = static_cast<double>(testing::KeptNodes(filtered).size());
}

// Filters `pod_json` over `nodes` nodes of `kind` labelled with NVLink cliques of 18 nodes, with
// topology.steer as `steer`, for as long as `state` runs.
void FilterInCliques(benchmark::State& state, Kind kind, int nodes, bool steer, const std::string& pod_json) {
  ClusterObjects cluster = MakeCluster(kind, nodes);
  for (size_t i = 0; i < cluster.nodes.size(); ++i) cluster.nodes[i].labels["nvidia.com/gpu.clique"] = "c." + std::to_string(i / 18);
  std::vector<std::string> names = NodeNames(cluster);
  inventory::Inventory inv;
  inv.ReplaceCluster(std::move(cluster));
  extender::ServiceOptions options;
  options.topology_steer = steer;
  extender::Service service(&inv, options);
  std::string body = testing::ArgsWithNames(pod_json, names);
  std::string filtered;
  for (auto _ : state) {
    filtered = service.Filter(body);
    benchmark::DoNotOptimize(filtered.data());
  }
  state.counters["kept"] = static_cast<double>(testing::KeptNodes(filtered).size());
}

// Filter for a GPU pod outside groups on nodes labelled with NVLink cliques of 18 nodes
// (extender/domain_steering.h): steer=1 keeps it beside CPU-bound GPUs or in the fullest clique
// in use; steer=0 is the same filter with topology.steer off.
void BM_ServiceSteeredFilter(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  FilterInCliques(state, kind, static_cast<int>(state.range(1)), state.range(2) != 0, PendingPodJson(kind, "pending"));
}

// Filter for a pod of two whole GPUs on nodes whose agent published NVLink pairs (0-1, 2-3, ...)
// and which GPUs the kubelet gave each bound pod (placement/whole_gpu_sets.h): every fitting
// node's free GPUs are read from that, and nodes without a free pair are refused.
void BM_ServiceLinkedWholeGpuFilter(benchmark::State& state) {
  ClusterObjects cluster = MakeCluster(Kind::kWhole, static_cast<int>(state.range(0)));
  std::map<std::string, std::vector<std::pair<std::string, int64_t>>> bound;  // node -> pods and GPUs
  for (const Pod& p : cluster.pods) {
    int64_t gpus = 0;
    for (const Container& c : p.containers) gpus += c.limits.nvidia_gpus.value_or(0);
    if (p.bound() && gpus > 0) bound[p.node_name].push_back({p.namespace_name + "/" + p.name, gpus});
  }
  for (Node& n : cluster.nodes) {
    std::vector<GpuDevice> devices;
    for (int i = 0; i < n.allocatable.nvidia_gpus; ++i) {
      devices.push_back(GpuDevice{.index = i, .uuid = fmt::format("GPU-{}-{}", n.name, i), .nvlink_peers = {i ^ 1}});
      devices.back().pods = std::vector<std::string>{};
    }
    size_t next = 0;
    for (const auto& [pod, gpus] : bound[n.name]) {
      for (int64_t g = 0; g < gpus && next < devices.size(); ++g) devices[next++].pods->push_back(pod);
    }
    if (state.range(1)) n.published_gpus = std::move(devices);
  }
  std::vector<std::string> names = NodeNames(cluster);
  inventory::Inventory inv;
  inv.ReplaceCluster(std::move(cluster));
  extender::Service service(&inv, extender::ServiceOptions{});
  testing::PodJson pod{.name = "pair", .namespace_name = "bench", .uid = "pair", .resource_version = "81240001"};
  pod.containers = {testing::WholeGpus("main", 2)};
  std::string body = testing::ArgsWithNames(pod.ToJson(), names);
  std::string filtered;
  for (auto _ : state) {
    filtered = service.Filter(body);
    benchmark::DoNotOptimize(filtered.data());
  }
  state.counters["kept"] = static_cast<double>(testing::KeptNodes(filtered).size());
}

// Computes the domains of two snapshot versions of 5,000 nodes in NVLink cliques of 18, one pod
// bind apart, taken in turn, for as long as `state` runs: incrementally, or each from nothing;
// with `waiting_gang`, a gang of 16 pending members waits, and a domain is kept for it.
void DomainIndexTurns(benchmark::State& state, bool incremental, bool waiting_gang) {
  ClusterObjects cluster = MakeCluster(Kind::kWhole, static_cast<int>(state.range(0)));
  for (size_t i = 0; i < cluster.nodes.size(); ++i) cluster.nodes[i].labels["nvidia.com/gpu.clique"] = "c." + std::to_string(i / 18);
  if (waiting_gang) {
    cluster.pod_groups.push_back(PodGroup{.namespace_name = "bench", .name = "train", .min_count = 16});
    for (int i = 0; i < 16; ++i) {
      Pod& p = cluster.pods.emplace_back(PendingPod(Kind::kWhole));
      p.uid = p.name = "member-" + std::to_string(i);
      p.group = PodGroupRef{.name = "train"};
    }
  }
  std::string node = cluster.nodes[7].name;
  inventory::Inventory inv;
  inv.ReplaceCluster(std::move(cluster));
  std::shared_ptr<const inventory::InventorySnapshot> versions[2] = {inv.Snapshot(), nullptr};
  Pod bound = PendingPod(Kind::kWhole);
  bound.uid = bound.name = "bound";
  bound.node_name = node;
  bound.phase = PodPhase::kRunning;
  inv.UpsertPod(std::move(bound));
  versions[1] = inv.Snapshot();
  extender::ServiceOptions options;
  options.topology_reserve = waiting_gang;  // the kept domain is chosen only where it is used
  extender::DomainFullness fullness(options);
  size_t turn = 0;
  bool kept = false;
  for (auto _ : state) {
    extender::DomainFullness fresh(options);
    std::shared_ptr<const extender::DomainIndex> index = (incremental ? fullness : fresh).Of(*versions[turn++ % 2], "nvidia.com/gpu.clique");
    kept = index->reserved.has_value();
    benchmark::DoNotOptimize(index.get());
  }
  state.counters["kept"] = kept ? 1 : 0;
}

// Whether gang `late` (`members` pending pods, created after `train`) stays off the clique kept
// for gang `train` (16 members waiting), on 5,000 nodes in cliques of 18: the one judgement the
// gang planner, group defrag, explain and the Kueue check ask of the pods they plan.
void BM_KeptOffJudgement(benchmark::State& state) {
  ClusterObjects cluster = MakeCluster(Kind::kWhole, static_cast<int>(state.range(0)));
  for (size_t i = 0; i < cluster.nodes.size(); ++i) cluster.nodes[i].labels["nvidia.com/gpu.clique"] = "c." + std::to_string(i / 18);
  std::vector<Pod> late;
  for (const auto& [name, count, created] : {std::tuple<std::string, int64_t, int64_t>{"train", 16, 1}, {"late", state.range(1), 2}}) {
    cluster.pod_groups.push_back(PodGroup{.namespace_name = "bench", .name = name, .min_count = static_cast<int32_t>(count)});
    for (int64_t i = 0; i < count; ++i) {
      Pod& p = cluster.pods.emplace_back(PendingPod(Kind::kWhole));
      p.uid = p.name = name + "-" + std::to_string(i);
      p.group = PodGroupRef{.name = name};
      p.created_ms = created;
      if (name == "late") late.push_back(p);
    }
  }
  inventory::Inventory inv;
  inv.ReplaceCluster(std::move(cluster));
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inv.Snapshot();
  extender::ServiceOptions options;
  std::optional<extender::DomainReservation> kept = extender::DomainFullness(options).Of(*snapshot, "nvidia.com/gpu.clique")->reserved;
  if (!kept || kept->gang != "bench/train") {
    state.SkipWithError("no clique kept for bench/train");
    return;
  }
  std::string off;
  for (auto _ : state) {
    off = extender::KeptOffFor(late, &*kept, *snapshot, options);
    benchmark::DoNotOptimize(off.data());
  }
  state.counters["kept_off"] = off.empty() ? 0 : 1;
}

// The domains of a snapshot one pod bind newer than the last one seen (extender/domain_steering.h):
// 5,000 nodes in NVLink cliques of 18, two snapshot versions taken in turn. incremental=0 builds
// each from nothing.
void BM_DomainIndexUpdate(benchmark::State& state) { DomainIndexTurns(state, state.range(1) != 0, false); }

// The same, incremental, while a gang of 16 members waits: the domain kept for it
// (extender/gang_reservation.h) is chosen again for each version.
void BM_DomainIndexWithWaitingGang(benchmark::State& state) { DomainIndexTurns(state, true, true); }

// What the cluster's gangs ask (extender/domain_steering.h's GangDemands), read again for each
// snapshot version whose groups or members changed: `gangs` gangs of 16 pending 1-GPU members.
void BM_GangDemands(benchmark::State& state) {
  ClusterObjects cluster = MakeCluster(Kind::kWhole, 100);
  for (int64_t g = 0; g < state.range(0); ++g) {
    std::string name = "gang-" + std::to_string(g);
    cluster.pod_groups.push_back(PodGroup{.namespace_name = "bench", .name = name, .min_count = 16});
    for (int i = 0; i < 16; ++i) {
      Pod& p = cluster.pods.emplace_back(PendingPod(Kind::kWhole));
      p.uid = p.name = name + "-" + std::to_string(i);
      p.group = PodGroupRef{.name = name};
    }
  }
  inventory::Inventory inv;
  inv.ReplaceCluster(std::move(cluster));
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inv.Snapshot();
  std::vector<int64_t> demands;
  for (auto _ : state) {
    demands = extender::GangDemands(*snapshot);
    benchmark::DoNotOptimize(demands.data());
  }
  state.counters["demands"] = static_cast<double>(demands.size());
}

// A pod without GPUs, as every pod of the GPU scheduler reaches gpusched (no managedResources):
// filter keeps every node, prioritize answers [].
void BM_ServicePassThrough(benchmark::State& state) {
  inventory::Inventory inv;
  ClusterObjects cluster = MakeCluster(Kind::kMgpu, static_cast<int>(state.range(0)));
  std::vector<std::string> names = NodeNames(cluster);
  inv.ReplaceCluster(std::move(cluster));
  extender::Service service(&inv, extender::ServiceOptions{});
  testing::PodJson pod{.name = "web", .namespace_name = "bench", .uid = "web", .resource_version = "81240002",
                       .containers = {testing::ContainerJson{.name = "c", .requests = {{"cpu", "500m"}}}}};
  std::string body = testing::ArgsWithNames(pod.ToJson(), names);
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
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

// Filter for a pod without GPUs that names gpusched's scheduler, on nodes in NVLink cliques of 18
// (extender/domain_steering.h): steer=1 keeps it to the fullest clique in use; steer=0 passes it
// through, as on a cluster without clique labels.
void BM_ServiceSteeredPassThrough(benchmark::State& state) {
  testing::PodJson pod{.name = "etl", .namespace_name = "bench", .uid = "etl", .resource_version = "81240003",
                       .containers = {testing::ContainerJson{.name = "c", .requests = {{"cpu", "120"}}}}};
  FilterInCliques(state, Kind::kWhole, static_cast<int>(state.range(0)), state.range(1) != 0, pod.ToJson());
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int kind : {0, 1}) {
    for (int nodes : {500, 5000}) b->Args({kind, nodes});
  }
  b->ArgNames({"mgpu", "nodes"})->Unit(benchmark::kMicrosecond);
}

void BM_PreemptChooseVictims(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  inventory::Inventory inv;
  inv.ReplaceCluster(MakeCluster(kind, static_cast<int>(state.range(1)), /*fill=*/1.0));
  auto snapshot = inv.Snapshot();
  Pod preemptor = PendingPod(kind);
  preemptor.priority = 1000;
  if (kind == Kind::kMgpu) {
    preemptor.containers[0].limits.mgpu_core_percent = 90;
    preemptor.containers[0].limits.mgpu_memory_mib = 40960;
  }
  placement::PodRequest request = placement::AnalyzePod(preemptor);
  placement::VictimFinder finder(placement::PlacementOptions{});
  size_t helped = 0, victims = 0, pods = 0;
  for (auto _ : state) {
    helped = victims = pods = 0;
    for (const inventory::NodeStatePtr& node : snapshot->nodes()) {
      placement::VictimChoice c = finder.Choose(request, *node, {.priority = preemptor.priority});
      helped += c.helps;
      victims += c.victims.size();
      pods += node->allocations.size();
      benchmark::DoNotOptimize(c);
    }
  }
  state.counters["nodes_helped"] = static_cast<double>(helped);
  state.counters["victims"] = static_cast<double>(victims);
  state.counters["pods_per_node"] = static_cast<double>(pods) / static_cast<double>(snapshot->nodes().size());
}

// The preempt verb through its handler: JSON in (NodeNameToMetaVictims, nodeCacheCapable: true,
// kube-scheduler's 10 victims per candidate), victims chosen on every full node, JSON out.
void BM_ServicePreempt(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  inventory::Inventory inv;
  // As the API server writes them: nodes list cpu, memory and pods; every pod asks cpu and memory.
  ClusterObjects cluster = MakeCluster(kind, static_cast<int>(state.range(1)), /*fill=*/1.0);
  for (Node& n : cluster.nodes) {
    n.other_allocatable.Add("cpu", 128000);
    n.other_allocatable.Add("memory", int64_t{1} << 40);
    n.other_allocatable.Add("pods", 110);
  }
  for (Pod& p : cluster.pods) {
    p.containers[0].other_requests.Add("cpu", 2000);
    p.containers[0].other_requests.Add("memory", int64_t{8} << 30);
  }
  inv.ReplaceCluster(std::move(cluster));
  std::map<std::string, std::vector<std::string>> offered;
  for (const inventory::NodeStatePtr& node : inv.Snapshot()->nodes()) {
    std::vector<std::string>& uids = offered[node->node.name];
    for (const Allocation& a : node->allocations) {
      if (uids.size() < 10) uids.push_back(a.pod_uid);
    }
  }
  testing::PodJson preemptor{.name = "urgent", .namespace_name = "bench", .uid = "urgent", .resource_version = "81240002",
                             .containers = {kind == Kind::kMgpu ? testing::Mgpu("c", 90, 40960) : testing::WholeGpus("c", 1)},
                             .priority = 1000};
  preemptor.containers[0].requests["cpu"] = "4";
  preemptor.containers[0].requests["memory"] = "16Gi";
  std::string body = testing::PreemptMetaJson(preemptor.ToJson(), offered);
  extender::Service service(&inv, extender::ServiceOptions{});
  size_t reply_bytes = 0;
  for (auto _ : state) {
    StatusOr<std::string> answer = service.Preempt(body);
    if (!answer.ok()) state.SkipWithError(answer.status().message().c_str());
    reply_bytes = answer.ok() ? answer->size() : 0;
    benchmark::DoNotOptimize(answer);
  }
  state.counters["request_bytes"] = static_cast<double>(body.size());
  state.counters["reply_bytes"] = static_cast<double>(reply_bytes);
}

// /explain of one pod over every node (JSON out): at 60% fill where it fits on many nodes, and on
// full nodes where each node's cheapest eviction is worked out.
void BM_ServiceExplain(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  bool full = state.range(2) != 0;
  inventory::Inventory inv;
  inv.ReplaceCluster(MakeCluster(kind, static_cast<int>(state.range(1)), full ? 1.0 : 0.6));
  testing::PodJson pod{.name = "why", .namespace_name = "bench", .uid = "why", .resource_version = "81240002",
                       .containers = {kind == Kind::kMgpu ? testing::Mgpu("c", 90, 40960) : testing::WholeGpus("c", 1)},
                       .priority = 1000};
  std::string body = pod.ToJson();
  extender::Service service(&inv, extender::ServiceOptions{});
  size_t reply_bytes = 0;
  for (auto _ : state) {
    StatusOr<extender::Explanation> e = service.Explain(body);
    if (!e.ok()) state.SkipWithError(e.status().message().c_str());
    std::string answer = e.ok() ? extender::ExplanationJson(*e, service.helper()) : "";
    reply_bytes = answer.size();
    benchmark::DoNotOptimize(answer);
  }
  state.counters["reply_bytes"] = static_cast<double>(reply_bytes);
}

// /debug/defrag's plan for one pod that fits nowhere (8 whole GPUs, or a whole mGPU card) on a
// cluster filled to 85%: victims on every node, then their landing places, as JSON. With arg
// target=1, the consolidation instead: one move that lowers the fragmentation most.
void BM_ServiceDefrag(benchmark::State& state) {
  Kind kind = static_cast<Kind>(state.range(0));
  bool consolidate = state.range(2) != 0;
  inventory::Inventory inv;
  inv.ReplaceCluster(MakeCluster(kind, static_cast<int>(state.range(1)), /*fill=*/0.85));
  testing::PodJson pod{.name = "big", .namespace_name = "bench", .uid = "big", .resource_version = "81240002",
                       .containers = {kind == Kind::kMgpu ? testing::Mgpu("c", 100, std::nullopt) : testing::WholeGpus("c", 8)}};
  std::string body = consolidate ? "" : pod.ToJson();
  extender::Service service(&inv, extender::ServiceOptions{});
  size_t moves = 0;
  for (auto _ : state) {
    StatusOr<extender::DefragResult> plan = service.Defrag(body, 0, consolidate ? 1 : 8);
    if (!plan.ok()) state.SkipWithError(plan.status().message().c_str());
    std::string answer = plan.ok() ? extender::DefragJson(*plan) : "";
    moves = plan.ok() ? static_cast<size_t>(std::count(answer.begin(), answer.end(), '{')) - 2 : 0;
    benchmark::DoNotOptimize(answer);
  }
  state.counters["moves"] = static_cast<double>(moves);
}

// The growth table: cost per pod against cluster size, up to 20,000 nodes.
void Growth(benchmark::internal::Benchmark* b) {
  Sizes(b);
  for (int kind : {0, 1}) b->Args({kind, 20000});
}

BENCHMARK(BM_PlannerFilterPrioritize)->Apply(Growth);
BENCHMARK(BM_PlannerFilterPrioritizeFgd)->Apply(Sizes);
BENCHMARK(BM_PlannerFilterPrioritizeSoftmix)->Apply(Sizes);
BENCHMARK(BM_PlannerFilterPrioritizeUncached)->Apply(Sizes);
BENCHMARK(BM_PlannerFilterPrioritizeFgdUncached)->Apply(Sizes);
BENCHMARK(BM_PlannerFilterPrioritizeSoftmixUncached)->Apply(Sizes);
BENCHMARK(BM_ServiceFilterPrioritize)->Apply(Growth);
BENCHMARK(BM_ServiceLinkedWholeGpuFilter)->ArgNames({"nodes", "linked"})->Args({5000, 0})->Args({5000, 1})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GangPlan)->ArgNames({"mgpu", "nodes", "members"})->Args({0, 5000, 64})->Args({1, 5000, 64})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_KueueJudgeWorkload)->ArgNames({"mgpu", "nodes", "pods"})->Args({0, 5000, 16})->Args({1, 5000, 16})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_GroupDefrag)
    ->ArgNames({"mgpu", "nodes", "members", "gpus"})
    ->Args({0, 5000, 64, 1})
    ->Args({0, 5000, 16, 8})
    ->Args({1, 5000, 64, 0})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ServiceDomainMemberFilter)
    ->ArgNames({"mgpu", "nodes", "members", "first"})
    ->Args({0, 5000, 64, 0})
    ->Args({1, 5000, 64, 0})
    ->Args({1, 5000, 64, 1})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ServiceGangMemberFilter)
    ->ArgNames({"mgpu", "nodes", "members"})
    ->Args({0, 5000, 64})
    ->Args({1, 5000, 64})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ServiceSteeredFilter)->ArgNames({"mgpu", "nodes", "steer"})->ArgsProduct({{0, 1}, {5000}, {0, 1}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DomainIndexUpdate)->ArgNames({"nodes", "incremental"})->ArgsProduct({{5000}, {0, 1}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DomainIndexWithWaitingGang)->ArgName("nodes")->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GangDemands)->ArgName("gangs")->Arg(1000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_KeptOffJudgement)->ArgNames({"nodes", "members"})->Args({5000, 64})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ServicePassThrough)->ArgName("nodes")->Arg(500)->Arg(5000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ServiceSteeredPassThrough)->ArgNames({"nodes", "steer"})->ArgsProduct({{5000}, {0, 1}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PreemptChooseVictims)->ArgNames({"mgpu", "nodes"})->Args({0, 500})->Args({1, 500})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ServicePreempt)->ArgNames({"mgpu", "nodes"})->Args({0, 500})->Args({1, 500})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ServiceDefrag)
    ->ArgNames({"mgpu", "nodes", "target"})
    ->Args({0, 500, 0})
    ->Args({1, 500, 0})
    ->Args({0, 5000, 0})
    ->Args({1, 5000, 0})
    ->Args({1, 500, 1})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ServiceExplain)
    ->ArgNames({"mgpu", "nodes", "full"})
    ->Args({0, 5000, 0})
    ->Args({1, 5000, 0})
    ->Args({0, 5000, 1})
    ->Args({1, 5000, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
