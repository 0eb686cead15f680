// File: replay.cc
//
// `gpusched replay`'s command: flags and usage for each mode (the openb grid, the timeline grid, a
// recorded cluster through the extender, the DRA example written out), traces loaded, runs with a
// progress bar, and results written to --out.
#include "cli/replay.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpusched/common/log.h"
#include "gpusched/config/config.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/kubejson/snapshot_source.h"
#include "gpusched/replay/cluster_replay.h"
#include "gpusched/replay/dra_example.h"
#include "gpusched/replay/grid.h"
#include "gpusched/replay/report.h"
#include "gpusched/replay/timeline_replay.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::cli {
namespace {

constexpr std::string_view kReplayUsage = R"(usage: gpusched replay --nodes NODES.csv --pods PODS.csv [--pods ...] [flags]
       gpusched replay --snapshot CLUSTER.json [--snapshot ...] --place PODS.json [flags]

The first form replays the Alibaba openb trace the way the FGD paper (USENIX ATC'23) does:
seeded shuffle, inflation to 130% of GPU capacity, one pod at a time, failed pods dropped.

The second loads a recorded cluster (Kubernetes List JSON, as gpusched serve --snapshot) and
places the Pods of PODS.json, in order, through the extender's own filter, prioritize and bind
(kube-scheduler's choice: the best score, ties at random); it writes summary.csv and
placements.csv.

  --nodes FILE        openb_node_list_gpu_node.csv
  --pods FILE         a pod list (openb_pod_list_*.csv); repeat for several traces
  --policy LIST       comma list (default: the paper's six). Known: random, dotprod, packing,
                      clustering, bestfit, fgd, binpack, spread, softmix, softfill, softfgd
  --seeds SEEDS       e.g. 42-51 or 42,43 (default 42-51)
  --out DIR           writes summary.csv, curve.csv and report.html (default: replay-out)
  --selection MODE    policy (default): best score, ties by a fixed random node order;
                      rank: through gpusched's 0-10 rank scores; linear: 0-10 linear scores
                      with kube-scheduler's random tie-break
  --tune-ratio R      arrived workload as a multiple of GPU capacity (default 1.3)
  --threads N         parallel runs (default: all hardware threads)
  --timeline          (first form) replay the trace in time order instead: pods arrive at their
                      creation_time and leave after their own duration; a pod that fits nowhere
                      waits and is tried again, in arrival order, whenever a pod leaves. Needs the
                      creation_time and deletion_time columns. Reports the GPU allocation rate
                      per simulated minute (mean, p10), pending times (p50, p99 by class: sharing,
                      1 GPU, multi-GPU), pods never placed; summary.csv rows with mode timeline
  --time-compress F   (with --timeline) divide arrival times by F, keeping durations (default:
                      the F at which GPU time asked equals GPU time available: 100% offered load)
  --inflate K         (with --timeline) replay K copies of each pod, each copy arriving a random
                      part of the mean gap after its original (default 1): the trace asks less
                      than the cluster holds even all at once, so only inflation keeps it loaded
  --defrag-every T    (with --timeline) every T simulated seconds while pods wait, move running
                      pods (at most 4 per waiting pod) to make room for waiting pods, oldest first
  --defrag-budget-pct P  moving at most P% of the running pods per simulated hour (default 1);
                      rows get policy "<policy>+defrag" and the moves column
  --domains N         (with --timeline) split the nodes into N topology domains, contiguous in
                      the node file's order (docs/topology.md)
  --gangs SPEC        (with --timeline) mix in gang jobs: members=M,gpus=G,share=S[,cpu=C,memory=MiB]
                      (M pods of G whole GPUs each, all or nothing; S of the GPU time offered);
                      summary.csv gains gangs, gang_wait_p50_s, gang_wait_p99_s,
                      gangs_one_domain_pct, stranded_gpus_mean
  --topology-policies P  policies run topology-aware with --domains: each gang in the fullest
                      domain that holds it, other GPU pods in domains already in use (default softmix)
  --steer-cpu-pods    (with --domains) topology-aware runs put CPU-only pods in domains in use too,
                      as gpusched does for CPU-only pods that name its scheduler
  --no-reserve-for-gangs  (with --domains) topology-aware runs keep no domain for a waiting gang
                      (gpusched's topology.reserveForGangs: false); by default the domain with the
                      most whole nodes takes no steered pod from outside gangs while one waits
  --topology-fallback-after S  (with --domains) topology-aware runs: a gang no domain holds waits
                      S seconds for one before it spans domains (default 300, as gpusched's
                      topology.fallbackAfterSeconds)
  --topology-drain-wait S  (with --domains) ... or S seconds (when longer) while the domain kept for
                      the waiting gangs runs no pod gpusched does not steer, since it drains then
                      (default 14400, as gpusched's topology.drainWaitSeconds; 0: off)
  --snapshot FILE     (second form) the cluster; repeat to merge files
  --place FILE        (second form) the pods to place, in order
  --score-mapping M   (second form) rank (default) or linear
  --filter-top-k K    (second form) filter keeps the best K nodes (default 0: all)
                      Policies "upstream" and "upstream-packing" (second form): kube-scheduler
                      alone, the baselines: NodeResourcesFit (LeastAllocated, the default; or
                      MostAllocated, its bin-packing setup) and BalancedAllocation pick the node,
                      DRA devices are taken in published order. Columns: on nvidia and mgpu
                      nodes, idle GPUs, FGD's fragmentation for the replayed pods, the most whole
                      GPUs free on one node and the most compute free on one mGPU GPU; after |,
                      for DRA nodes: dra% of their GPUs allocated, frag% (FGD), idle nodes, the
                      largest free block on one node, split = multi-GPU pods across PCIe roots.

       gpusched replay --write-dra-example DIR [--example-nodes N] [--example-demand D] [--seeds S]
writes DIR/cluster.json and DIR/pods.json: N nvidia-dra nodes (default 200) of 8 GPUs under
PCIe roots of four, and pods asking 1, 2, 4 or 8 GPUs (half through ResourceClaims, half as
nvidia.com/gpu served by DRA) until they ask D times the GPUs (default 1.1); the first seed
draws them.
)";

struct ReplayArgs {
  std::string nodes;
  std::vector<std::string> pods;
  std::vector<std::string> snapshots;
  std::string place;
  std::string score_mapping = "rank";
  size_t filter_top_k = 0;
  std::string policy = "random,dotprod,clustering,packing,bestfit,fgd";
  std::string seeds = "42-51";
  std::string out = "replay-out";
  std::string selection = "policy";
  double tune_ratio = 1.3;
  int threads = 0;
  bool timeline = false;
  double time_compress = 0;  // 0: the factor at which the offered load is 100%
  int inflate = 1;
  double defrag_every = 0;   // 0: no defrag
  double defrag_budget_pct = 1;
  int domains = 0;                       // --domains
  replay::GangSpec gangs;                // --gangs
  std::string topology_policies = "softmix";  // --topology-policies
  bool steer_cpu_pods = false;                // --steer-cpu-pods
  bool reserve_for_gangs = true;              // not --no-reserve-for-gangs
  double topology_fallback_after = 300;       // --topology-fallback-after
  double topology_drain_wait = 14400;         // --topology-drain-wait
  std::string write_dra_example;
  int example_nodes = 200;
  double example_demand = 1.1;
};

// Reads `value` of `flag` as a number in [lo, hi] into *out.
Status ReadNumber(const std::string& flag, const std::string& value, double lo, double hi, double* out) {
  char* end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  if (end == value.c_str() || *end != '\0' || !(v >= lo && v <= hi)) {
    return InvalidArgumentError(fmt::format("{} \"{}\": want a number in [{}, {}]", flag, value, lo, hi));
  }
  *out = v;
  return OkStatus();
}

bool IsTopologyFlag(const std::string& flag) {
  return flag == "--domains" || flag == "--gangs" || flag == "--topology-policies" || flag == "--topology-fallback-after" ||
         flag == "--topology-drain-wait";
}

// The IsTopologyFlag flags into *a.
Status ReadTopologyFlag(const std::string& flag, const std::string& value, ReplayArgs* a) {
  if (flag == "--gangs") {
    GPUSCHED_ASSIGN_OR_RETURN(a->gangs, replay::ParseGangSpec(value));
  } else if (flag == "--topology-policies") {
    a->topology_policies = value;
  } else if (flag == "--topology-fallback-after") {
    GPUSCHED_RETURN_IF_ERROR(ReadNumber(flag, value, 0, 1e9, &a->topology_fallback_after));
  } else if (flag == "--topology-drain-wait") {
    GPUSCHED_RETURN_IF_ERROR(ReadNumber(flag, value, 0, 1e9, &a->topology_drain_wait));
  } else {
    double n = 0;
    GPUSCHED_RETURN_IF_ERROR(ReadNumber(flag, value, 1, 100000, &n));
    a->domains = static_cast<int>(n);
  }
  return OkStatus();
}

// The switch a flag without a value sets (--no-X clears it), or null for a flag with a value.
bool* BareFlag(const std::string& flag, ReplayArgs* a) {
  if (flag == "--timeline") return &a->timeline;
  if (flag == "--steer-cpu-pods") return &a->steer_cpu_pods;
  if (flag == "--no-reserve-for-gangs") return &a->reserve_for_gangs;
  return nullptr;
}

StatusOr<ReplayArgs> Parse(int argc, char** argv) {
  ReplayArgs a;
  for (int i = 0; i < argc; ++i) {
    std::string flag = argv[i];
    if (bool* on = BareFlag(flag, &a)) {
      *on = flag != "--no-reserve-for-gangs";
      continue;
    }
    std::string value;
    if (size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else {
      if (i + 1 >= argc) return InvalidArgumentError(fmt::format("flag {} needs a value", flag));
      value = argv[++i];
    }
    if (flag == "--nodes") {
      a.nodes = value;
    } else if (flag == "--pods") {
      a.pods.push_back(value);
    } else if (flag == "--policy") {
      a.policy = value;
    } else if (flag == "--seeds") {
      a.seeds = value;
    } else if (flag == "--out") {
      a.out = value;
    } else if (flag == "--selection") {
      a.selection = value;
    } else if (flag == "--tune-ratio") {
      GPUSCHED_RETURN_IF_ERROR(ReadNumber(flag, value, 0.01, 10, &a.tune_ratio));
    } else if (flag == "--snapshot") {
      a.snapshots.push_back(value);
    } else if (flag == "--place") {
      a.place = value;
    } else if (flag == "--score-mapping") {
      a.score_mapping = value;
    } else if (flag == "--filter-top-k") {
      a.filter_top_k = static_cast<size_t>(std::max(0, std::atoi(value.c_str())));
    } else if (flag == "--write-dra-example") {
      a.write_dra_example = value;
    } else if (flag == "--example-nodes") {
      a.example_nodes = std::atoi(value.c_str());
      if (a.example_nodes < 1 || a.example_nodes > 100000) return InvalidArgumentError(fmt::format("--example-nodes \"{}\": want 1-100000", value));
    } else if (flag == "--time-compress") {
      GPUSCHED_RETURN_IF_ERROR(ReadNumber(flag, value, 1, 1e7, &a.time_compress));
    } else if (flag == "--inflate") {
      double copies = 1;
      GPUSCHED_RETURN_IF_ERROR(ReadNumber(flag, value, 1, 100, &copies));
      a.inflate = static_cast<int>(copies);
    } else if (flag == "--defrag-every") {
      GPUSCHED_RETURN_IF_ERROR(ReadNumber(flag, value, 1, 1e7, &a.defrag_every));
    } else if (flag == "--defrag-budget-pct") {
      GPUSCHED_RETURN_IF_ERROR(ReadNumber(flag, value, 0, 100, &a.defrag_budget_pct));
    } else if (IsTopologyFlag(flag)) {
      GPUSCHED_RETURN_IF_ERROR(ReadTopologyFlag(flag, value, &a));
    } else if (flag == "--example-demand") {
      GPUSCHED_RETURN_IF_ERROR(ReadNumber(flag, value, 0.01, 10, &a.example_demand));
    } else if (flag == "--threads") {
      a.threads = std::atoi(value.c_str());
      if (a.threads < 1 || a.threads > 256) return InvalidArgumentError(fmt::format("--threads \"{}\": want 1-256", value));
    } else {
      return InvalidArgumentError(fmt::format("unknown flag {}", flag));
    }
  }
  if (!a.write_dra_example.empty()) return a;
  bool trace = !a.nodes.empty() || !a.pods.empty();
  bool cluster = !a.snapshots.empty() || !a.place.empty();
  if (trace && cluster) return InvalidArgumentError("give either --nodes/--pods or --snapshot/--place, not both");
  if (a.timeline && cluster) return InvalidArgumentError("--timeline replays a trace (--nodes/--pods), not --snapshot");
  if (!a.timeline && (a.inflate != 1 || a.defrag_every > 0 || a.domains > 0 || a.gangs.members > 0)) {
    return InvalidArgumentError("--inflate, --defrag-every, --domains and --gangs need --timeline");
  }
  if (cluster) {
    if (a.snapshots.empty()) return InvalidArgumentError("--snapshot is required with --place");
    if (a.place.empty()) return InvalidArgumentError("--place is required with --snapshot");
    return a;
  }
  if (a.nodes.empty()) return InvalidArgumentError("--nodes is required");
  if (a.pods.empty()) return InvalidArgumentError("--pods is required");
  return a;
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void ProgressBar(size_t done, size_t total, std::chrono::steady_clock::time_point start) {
  constexpr int kWidth = 40;
  int filled = static_cast<int>(kWidth * done / std::max<size_t>(total, 1));
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r[%s] %zu/%zu runs, %.1f s", bar.c_str(), done, total, secs);
  if (done == total) std::fputc('\n', stderr);
  std::fflush(stderr);
}

// Loads --nodes and each --pods trace (and, with --timeline, the pods' times).
Status LoadTraces(const ReplayArgs& args, std::vector<replay::NamedTrace>* traces, std::vector<std::vector<replay::TimelinePod>>* timelines) {
  GPUSCHED_ASSIGN_OR_RETURN(std::vector<replay::TraceNode> nodes, replay::LoadNodeCsv(args.nodes));
  for (const std::string& file : args.pods) {
    GPUSCHED_ASSIGN_OR_RETURN(std::vector<replay::TracePod> pods, replay::LoadPodCsv(file));
    if (args.timeline) {
      StatusOr<std::vector<replay::TimelinePod>> timeline = replay::TimelinePods(pods);
      if (!timeline.ok()) return InvalidArgumentError(fmt::format("--pods {}: {}", file, timeline.status().message()));
      timelines->push_back(std::move(timeline).value());
    }
    GPUSCHED_ASSIGN_OR_RETURN(replay::PreparedTrace prepared, replay::PrepareTrace(nodes, std::move(pods)));
    traces->push_back(replay::NamedTrace{replay::TraceName(file), std::move(prepared)});
  }
  return OkStatus();
}

// Whether `name` is one of the comma-separated `list`.
bool InList(std::string_view list, std::string_view name) {
  for (size_t at = 0; at <= list.size();) {
    size_t comma = std::min(list.find(',', at), list.size());
    if (list.substr(at, comma - at) == name) return true;
    at = comma + 1;
  }
  return false;
}

int RunTimelineMode(const ReplayArgs& args, const replay::GridOptions& grid, const std::vector<replay::NamedTrace>& traces,
                    const std::vector<std::vector<replay::TimelinePod>>& timelines) {
  struct Job {
    size_t trace;
    std::unique_ptr<scoring::Scorer> scorer;
    uint64_t seed;
  };
  std::vector<Job> jobs;
  for (size_t t = 0; t < traces.size(); ++t) {
    for (const std::string& policy : grid.policies) {
      for (uint64_t seed : grid.seeds) {
        StatusOr<std::unique_ptr<scoring::Scorer>> scorer = scoring::MakeScorer(policy, &traces[t].trace.workload);
        if (!scorer.ok()) {
          log::Error("--policy: {}", scorer.status().message());
          return 2;
        }
        jobs.push_back(Job{t, std::move(scorer).value(), seed});
      }
    }
  }
  std::vector<replay::TimelineRun> runs(jobs.size());
  auto start = std::chrono::steady_clock::now();
  replay::ParallelFor(
      jobs.size(), args.threads,
      [&](size_t j) {
        const Job& job = jobs[j];
        replay::TimelineOptions o{.seed = job.seed, .time_compress = args.time_compress, .selection = grid.selection,
                                  .inflate = args.inflate, .defrag_every_s = args.defrag_every,
                                  .defrag_budget_pct = args.defrag_budget_pct, .domains = args.domains, .gangs = args.gangs,
                                  .topology_aware = args.domains > 0 && InList(args.topology_policies, job.scorer->Name()),
                                  .steer_cpu_pods = args.steer_cpu_pods, .reserve_for_gangs = args.reserve_for_gangs,
                                  .gang_fallback_after_s = args.topology_fallback_after,
                                  .gang_drain_wait_s = args.topology_drain_wait};
        runs[j] = replay::TimelineRun{traces[job.trace].name, replay::RunTimeline(traces[job.trace].trace, timelines[job.trace], *job.scorer, o)};
        if (args.defrag_every > 0) runs[j].result.policy += "+defrag";
      },
      [&](size_t done, size_t total) { ProgressBar(done, total, start); });
  std::error_code ec;
  std::filesystem::create_directories(args.out, ec);
  for (const auto& [name, content] : {std::pair{"summary.csv", replay::TimelineSummaryCsv(runs)},
                                      std::pair{"report.html", replay::TimelineReportHtml(runs)}}) {
    std::ofstream out(args.out + "/" + name, std::ios::binary);
    out << content;
    if (!out) {
      log::Error("{}/{}: write failed", args.out, name);
      return 1;
    }
  }
  std::printf("%-12s %-16s %5s %9s %8s %8s %8s %9s %9s %9s %6s %6s %9s\n", "trace", "policy", "seed", "allocMean", "allocP10",
              "fragMean", "pendP50", "pendP99", "p99multi", "p99share", "never", "moves", "compress");
  for (const replay::TimelineRun& t : runs) {
    const replay::TimelineResult& r = t.result;
    std::printf("%-12s %-16s %5llu %9.2f %8.2f %8.2f %8.0f %9.0f %9.0f %9.0f %6d %6d %9.2f\n", t.trace.c_str(), r.policy.c_str(),
                static_cast<unsigned long long>(r.seed), r.alloc_rate_mean, r.alloc_rate_p10, r.frag_pct_mean, r.pending_p50_s,
                r.pending_p99_s, r.pending_p99_s_multigpu, r.pending_p99_s_sharing, r.never_placed, r.moves, r.time_compress);
  }
  if (args.gangs.members > 0) {
    std::printf("\n%-12s %-16s %5s %6s %7s %9s %9s %9s %9s\n", "trace", "policy", "seed", "gangs", "placed", "waitP50", "waitP99",
                "oneDom%", "stranded");
    for (const replay::TimelineRun& t : runs) {
      const replay::TimelineResult& r = t.result;
      std::printf("%-12s %-16s %5llu %6d %7d %9.0f %9.0f %9.1f %9.1f\n", t.trace.c_str(), r.policy.c_str(),
                  static_cast<unsigned long long>(r.seed), r.gangs, r.gangs_placed, r.gang_wait_p50_s, r.gang_wait_p99_s,
                  r.gangs_one_domain_pct, r.stranded_gpus_mean);
    }
  }
  std::printf("%zu runs in %.1f s; wrote %s/summary.csv, report.html\n", runs.size(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), args.out.c_str());
  return 0;
}

int WriteDraExample(const ReplayArgs& args, uint64_t seed) {
  replay::DraExample example = replay::MakeDraExample(replay::DraExampleOptions{.nodes = args.example_nodes, .demand = args.example_demand, .seed = seed});
  std::error_code ec;
  std::filesystem::create_directories(args.write_dra_example, ec);
  for (const auto& [name, content] : {std::pair{"cluster.json", &example.cluster_json}, std::pair{"pods.json", &example.pods_json}}) {
    std::string path = fmt::format("{}/{}", args.write_dra_example, name);
    std::ofstream out(path, std::ios::binary);
    out << *content;
    if (!out) {
      log::Error("{}: write failed", path);
      return 1;
    }
  }
  std::printf("wrote %s/cluster.json and pods.json\n", args.write_dra_example.c_str());
  return 0;
}

int RunClusterMode(const ReplayArgs& args, const std::vector<std::string>& policies, const std::vector<uint64_t>& seeds) {
  StatusOr<ClusterObjects> cluster = kubejson::LoadSnapshotFiles(args.snapshots);
  if (!cluster.ok()) {
    log::Error("{}", cluster.status().message());
    return 1;
  }
  std::ifstream in(args.place, std::ios::binary);
  if (!in) {
    log::Error("--place {}: cannot open", args.place);
    return 1;
  }
  std::stringstream text;
  text << in.rdbuf();
  StatusOr<std::vector<std::string>> pods = kubejson::ObjectsOfKind(text.str(), "Pod");
  if (!pods.ok()) {
    log::Error("--place {}: {}", args.place, pods.status().message());
    return 1;
  }
  auto mapping = placement::ParseScoreMapping(args.score_mapping);
  if (!mapping) {
    log::Error("--score-mapping \"{}\": want rank or linear", args.score_mapping);
    return 2;
  }
  std::vector<replay::ClusterReplayOptions> runs;
  for (const std::string& policy : policies) {
    for (uint64_t seed : seeds) {
      replay::ClusterReplayOptions o{.seed = seed};
      if (policy == "upstream") o.upstream = replay::FitStrategy::kLeastAllocated;
      if (policy == "upstream-packing") o.upstream = replay::FitStrategy::kMostAllocated;
      if (Status s = o.upstream ? OkStatus() : config::SetNodePolicy(policy, &o.service); !s.ok()) {
        log::Error("--policy: {}", s.message());
        return 2;
      }
      o.service.score_mapping = *mapping;
      o.service.filter_top_k = args.filter_top_k;
      runs.push_back(std::move(o));
    }
  }
  std::vector<replay::ClusterReplayResult> results(runs.size());
  auto start = std::chrono::steady_clock::now();
  replay::ParallelFor(
      runs.size(), args.threads, [&](size_t i) { results[i] = replay::RunClusterReplay(*cluster, *pods, runs[i]); },
      [&](size_t done, size_t total) { ProgressBar(done, total, start); });
  std::error_code ec;
  std::filesystem::create_directories(args.out, ec);
  for (const auto& [name, content] : {std::pair{"summary.csv", replay::ClusterSummaryCsv(results)},
                                      std::pair{"placements.csv", replay::PlacementsCsv(results)}}) {
    std::ofstream out(args.out + "/" + name, std::ios::binary);
    out << content;
    if (!out) {
      log::Error("{}/{}: write failed", args.out, name);
      return 1;
    }
  }
  std::printf("%-16s %5s %6s %6s %7s %9s %9s %7s %6s %7s %8s | %6s %6s %5s %7s %6s\n", "policy", "seed", "placed", "failed", "whole%",
              "mgpuCore%", "mgpuMem%", "idleGPU", "frag%", "wholeFit", "mgpuFit%", "dra%", "frag%", "idle", "largest", "split");
  for (const replay::ClusterReplayResult& r : results) {
    std::printf("%-16s %5llu %6d %6d %7.2f %9.2f %9.2f %7d %6.2f %7d %8d | %6.2f %6.2f %5d %7d %6s\n", r.policy.c_str(),
                static_cast<unsigned long long>(r.seed), r.placed, r.failed, r.whole_gpu_used_pct, r.mgpu_core_used_pct,
                r.mgpu_memory_used_pct, r.idle_gpus, r.gpu_fragmented_pct, r.largest_whole_fit, r.largest_mgpu_core_pct,
                r.dra_gpu_used_pct, r.dra_fragmented_pct, r.dra_idle_nodes, r.largest_free,
                fmt::format("{}/{}", r.split_pods, r.multi_gpu_pods).c_str());
  }
  std::printf("wrote %s/summary.csv, placements.csv\n", args.out.c_str());
  return 0;
}

}  // namespace

int RunReplay(int argc, char** argv) {
  for (int i = 0; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--help" || std::string_view(argv[i]) == "-h") {
      std::fputs(kReplayUsage.data(), stdout);
      return 0;
    }
  }
  StatusOr<ReplayArgs> args = Parse(argc, argv);
  if (!args.ok()) {
    log::Error("{}", args.status().message());
    std::fputs(kReplayUsage.data(), stderr);
    return 2;
  }
  replay::GridOptions grid{.policies = SplitList(args->policy), .tune_ratio = args->tune_ratio, .threads = args->threads};
  StatusOr<std::vector<uint64_t>> seeds = replay::ParseSeeds(args->seeds);
  if (!seeds.ok()) {
    log::Error("{}", seeds.status().message());
    return 2;
  }
  grid.seeds = *seeds;
  if (!args->write_dra_example.empty()) return WriteDraExample(*args, grid.seeds.front());
  if (!args->snapshots.empty()) return RunClusterMode(*args, grid.policies, grid.seeds);
  if (args->selection == "policy") {
    grid.selection = replay::Selection::kPolicy;
  } else if (args->selection == "rank") {
    grid.selection = replay::Selection::kExtenderRank;
  } else if (args->selection == "linear") {
    grid.selection = replay::Selection::kExtenderLinear;
  } else {
    log::Error("--selection \"{}\": want policy, rank or linear", args->selection);
    return 2;
  }

  std::vector<replay::NamedTrace> traces;
  std::vector<std::vector<replay::TimelinePod>> timelines;  // with --timeline, by trace
  if (Status s = LoadTraces(*args, &traces, &timelines); !s.ok()) {
    log::Error("{}", s.message());
    return 1;
  }
  if (args->timeline) return RunTimelineMode(*args, grid, traces, timelines);
  auto start = std::chrono::steady_clock::now();
  bool tty = isatty(STDERR_FILENO) != 0;
  StatusOr<std::vector<replay::GridRun>> runs = replay::RunGrid(traces, grid, [&](size_t done, size_t total) {
    if (tty || done == total || done % std::max<size_t>(1, total / 20) == 0) ProgressBar(done, total, start);
  });
  if (!runs.ok()) {
    log::Error("{}", runs.status().message());
    return 2;
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (Status s = replay::WriteReport(*runs, args->out); !s.ok()) {
    log::Error("{}", s.message());
    return 1;
  }
  std::printf("%-12s %-11s %8s %7s %6s  %s\n", "trace", "policy", "unalloc%", "sd", "paper", "runs");
  for (const replay::NamedTrace& t : traces) {
    for (const std::string& p : grid.policies) {
      replay::MeanSd m = replay::UnallocatedAt100(*runs, t.name, p);
      double paper = replay::PaperUnallocatedAt100(t.name, p);
      std::printf("%-12s %-11s %8.2f %7.2f %6s  %d\n", t.name.c_str(), p.c_str(), m.mean, m.sd,
                  paper < 0 ? "" : fmt::format("{:.2f}", paper).c_str(), m.n);
    }
  }
  std::printf("%zu runs in %.1f s; wrote %s/summary.csv, curve.csv, report.html\n", runs->size(), wall, args->out.c_str());
  return 0;
}

}  // namespace gpusched::cli
