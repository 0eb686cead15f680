// File: timeline_replay.h
//
// The churn replay: an openb trace in time order, pods arriving at their creation_time and
// leaving after their own duration (deletion_time - creation_time; a pod without a deletion time
// leaves at the trace's end), through the same scoring views and policies as openb_replay.h.
//
// - Arrivals are compressed: arrival times (from the first) are divided by `time_compress`, each
//   pod keeping its duration. By default the factor is the one at which the offered load
//   (OfferedLoad: GPU time asked over GPU time available while pods arrive) is 100%: with the
//   trace's own times the cluster never fills.
// - A pod that fits nowhere waits. Whenever a pod leaves, the waiting pods are tried again in
//   arrival order, each on its own (no head-of-line blocking, as kube-scheduler's queue). Only a
//   pod that fits the node just freed can have become placeable, so others are not re-scored.
// - At a time, departures come before arrivals.
//
// Reported: the GPU allocation rate sampled every simulated minute while pods arrive (the same
// window for every policy; mean, p10); pending times of placed
// pods (p50, p99, max; p99 per class: sharing, one GPU, several); pods never placed (still
// waiting when the last pod has left); FGD fragmentation (the same samples); pods moved by the
// defragmentation (TimelineOptions).
//
// Pure: the same inputs give the same result.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/replay/openb_replay.h"
#include "gpusched/replay/openb_trace.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::replay {

// A pod of the timeline: trace.pods[index], with its times in seconds.
struct TimelinePod {
  size_t index = 0;
  int64_t created_s = 0;
  int64_t duration_s = 0;
};

// The pods of `trace` (prepared from `pods`) with their times, sorted as trace.pods is (by name).
// Errors: InvalidArgument when the trace has no creation_time or deletion_time column.
StatusOr<std::vector<TimelinePod>> TimelinePods(std::vector<TracePod> pods);

// The offered load at compression `compress`: the GPU time all pods ask (GPUs x duration) over
// the GPU time the cluster has while they arrive (capacity x the compressed arrival span).
// Heavy-tailed durations put much of what is asked after the last arrival: the cluster's measured
// allocation (TimelineResult) can stay far below it.
double OfferedLoad(const PreparedTrace& trace, const std::vector<TimelinePod>& pods, double compress);
// The pods with `copies` - 1 more of each (the FGD paper's inflation, in time): a copy arrives
// after its original by a random part of the trace's mean gap between arrivals (drawn with
// `seed`), with the same shape and duration. The trace asks for less than the cluster holds even
// all at once (default: 98% of its GPUs), so compression alone never keeps the cluster loaded.
std::vector<TimelinePod> Inflate(const std::vector<TimelinePod>& pods, int copies, uint64_t seed);
// The compression at which the offered load is 100% (at least 1).
double DefaultTimeCompress(const PreparedTrace& trace, const std::vector<TimelinePod>& pods);

// Synthetic gang jobs mixed into a timeline (`--gangs members=16,gpus=4,share=0.3`): each job
// asks `members` pods of `gpus` whole GPUs (and cpu_milli, memory_mib each) all at once; together
// they ask `share` of the GPU time offered (the trace's and theirs). Arrivals are spread evenly
// at random over the trace's arrival window; durations are drawn from the trace's pods'.
struct GangSpec {
  int members = 0;  // 0: no gangs
  int gpus = 0;
  double share = 0;
  int64_t cpu_milli = 0;   // per member; 0: 16 CPUs per GPU
  int64_t memory_mib = 0;  // per member; 0: 64 GiB per GPU
  bool operator==(const GangSpec&) const = default;
};
// Parses "members=16,gpus=4,share=0.3[,cpu=64000,memory=262144]". Errors name the field.
StatusOr<GangSpec> ParseGangSpec(std::string_view text);

struct TimelineOptions {
  uint64_t seed = 42;          // the node order that breaks score ties
  double time_compress = 0;    // 0: DefaultTimeCompress
  Selection selection = Selection::kPolicy;
  int inflate = 1;               // copies of each pod (Inflate); 1: the trace as it is
  // Defragmentation: every defrag_every_s simulated seconds (0: never) while pods wait, room is
  // made for waiting pods (those of several GPUs first, which fragmentation blocks; each group
  // oldest first) by moving running pods (at most 4 per waiting pod), as
  // long as the budget lasts: defrag_budget_pct of the running pods per simulated hour, at most
  // an hour's worth saved up. A moved pod keeps its departure time.
  double defrag_every_s = 0;
  double defrag_budget_pct = 1;
  // Topology (docs/topology.md): the nodes split into `domains` domains, contiguous in trace
  // order (0: none), and gang jobs mixed in (GangSpec). A topology-aware run places each gang in
  // the fullest domain that holds it (else across domains) and a GPU pod outside gangs in domains
  // already in use where it fits there, as gpusched's topology levels do; otherwise gangs are
  // placed member by member by the policy, all or nothing, and pods go where the policy picks.
  int domains = 0;
  GangSpec gangs;
  bool topology_aware = false;
  // Topology-aware runs also put CPU-only pods into the fullest domain in use: what gpusched does
  // for CPU-only pods that name its scheduler (docs/topology.md).
  bool steer_cpu_pods = false;
  // Topology-aware runs: while a gang waits, the domain with the most whole nodes (then the most
  // free GPU) takes no pod from outside gangs that is steered (GPU pods; CPU-only pods with
  // steer_cpu_pods), as gpusched's topology.reserveForGangs (gang_reservation.h).
  bool reserve_for_gangs = true;
  // Topology-aware runs: a gang that no domain holds waits this long after its arrival for one
  // (where some domain holds it when empty) before it goes across domains, as gpusched's
  // topology.fallbackAfterSeconds (gang_domains.h). It is tried again whenever pods leave.
  double gang_fallback_after_s = 300;
  // ... or this long (when longer) while the domain kept for the waiting gangs runs no pod that
  // gpusched does not steer (CPU-only pods without steer_cpu_pods): gpusched holds its own pods off
  // that domain, so it drains. As gpusched's topology.drainWaitSeconds.
  double gang_drain_wait_s = 14400;
};

struct TimelineResult {
  std::string policy;
  uint64_t seed = 0;
  int pods = 0;
  int never_placed = 0;
  double time_compress = 0;
  double alloc_rate_mean = 0;  // % of GPU capacity allocated, per simulated minute while pods arrive
  double alloc_rate_p10 = 0;
  double frag_pct_mean = 0;    // FGD fragmentation, % of capacity, same samples
  double pending_p50_s = 0;
  double pending_p99_s = 0;
  double pending_max_s = 0;
  double pending_p99_s_sharing = 0;
  double pending_p99_s_onegpu = 0;
  double pending_p99_s_multigpu = 0;
  int moves = 0;               // pods moved by the defrag
  // Gangs (TimelineOptions::gangs): jobs that arrived; their wait from arrival to placement
  // (p50, p99; a gang never placed waits until the end); the share placed inside one domain;
  // and the free GPUs stranded in domains that cannot host one gang, mean over the samples.
  int gangs = 0;
  int gangs_placed = 0;
  double gang_wait_p50_s = 0;
  double gang_wait_p99_s = 0;
  double gangs_one_domain_pct = 0;
  double stranded_gpus_mean = 0;
  std::vector<double> alloc_rate;  // the per-minute samples
  std::vector<double> frag_rate;   // FGD fragmentation, % of capacity, at the same times
  double wall_s = 0;
};

struct TimelineRun {
  std::string trace;
  TimelineResult result;
};

TimelineResult RunTimeline(const PreparedTrace& trace, const std::vector<TimelinePod>& pods, const scoring::Scorer& scorer,
                           const TimelineOptions& options);

}  // namespace gpusched::replay
