// File: openb_replay.h
//
// The FGD paper's experiment on the openb trace (shared/specs/fgd-replay.md §6), one run per
// (trace, policy, seed):
//
//   1. pods sorted by name, then shuffled with the seed;
//   2. inflated to tune_ratio x the cluster's GPU capacity by appending clones drawn with
//      replacement (or thinned by random deletions when the trace asks for more);
//   3. a fixed random node order drawn with the seed breaks score ties (the artifact's prefixed
//      node names);
//   4. pods arrive one at a time; CPU, memory, model and GPUs are checked; the policy scores every
//      feasible node and picks the GPUs; a pod that fits nowhere is dropped.
//
// After every pod an event records arrived and allocated GPU milli and the cluster's FGD
// fragmentation F(M); events are averaged per integer percent of arrived workload as the artifact's
// analysis scripts do.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/replay/openb_trace.h"
#include "gpusched/scoring/node_view.h"
#include "gpusched/scoring/scorer.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::replay {

// A trace ready to replay: nodes as scoring views, pods as shapes (sorted by name), M.
struct PreparedTrace {
  scoring::ModelTable models;
  std::vector<std::string> node_names;
  std::vector<scoring::NodeView> nodes;  // empty cluster
  std::vector<scoring::PodShape> pods;   // sorted by pod name
  scoring::TargetWorkload workload;      // M and gap values, from the untuned trace
  int64_t capacity_milli = 0;            // 1000 x GPUs
};

// Returns the prepared trace. Errors: InvalidArgument for a node with more GPUs than a view holds.
StatusOr<PreparedTrace> PrepareTrace(const std::vector<TraceNode>& nodes, std::vector<TracePod> pods);

// How the node is picked among the scored candidates.
enum class Selection {
  kPolicy,          // highest score, ties by the fixed node order (the artifact)
  kExtenderRank,    // through gpusched's rank mapping to 0-10, then kube-scheduler's max
  kExtenderLinear,  // through linear 0-10 scores, kube-scheduler breaking ties at random per pod
};

struct ReplayOptions {
  uint64_t seed = 42;
  double tune_ratio = 1.3;  // Default: 1.3 (130% of GPU capacity arrives).
  Selection selection = Selection::kPolicy;
};

// Averages over the events of one integer percent of arrived workload.
struct CurvePoint {
  int arrived_pct = 0;
  double allocated_pct = 0;   // allocated GPU milli / capacity
  double frag_pct = 0;        // F(M) / capacity
  double frag_ratio_pct = 0;  // F(M) / idle GPU milli
};

struct ReplayResult {
  std::string policy;
  uint64_t seed = 0;
  int pods = 0;         // after tuning
  int failed_pods = 0;  // fitted nowhere
  std::vector<CurvePoint> curve;  // one point per integer arrived percent present
  double unallocated_pct_at_100 = 0;
  double frag_pct_at_100 = 0;
  double wall_s = 0;
};

// Runs one replay. `scorer` must have been made for trace.workload.
ReplayResult RunReplay(const PreparedTrace& trace, const scoring::Scorer& scorer, const ReplayOptions& options);

}  // namespace gpusched::replay
