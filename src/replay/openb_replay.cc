// File: openb_replay.cc
//
// The FGD paper's experiment: a trace prepared into scoring views and shapes with its workload,
// then pods shuffled and inflated to the tune ratio, placed one by one, and the events averaged per
// integer percent of arrived workload.
#include "gpusched/replay/openb_replay.h"

#include "gpusched/scoring/reservation.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "gpusched/common/random.h"
#include "gpusched/scoring/fragmentation.h"
#include "replay_cluster.h"

namespace gpusched::replay {
namespace {

using scoring::NodeView;
using scoring::PodShape;

double Round2(double x) { return std::nearbyint(x * 100.0) / 100.0; }

// Pods in arrival order: the trace shuffled, then inflated or thinned to `ratio` of capacity.
std::vector<PodShape> ArrivalOrder(const PreparedTrace& trace, double ratio, Rng& rng) {
  std::vector<PodShape> pods = trace.pods;
  for (size_t i = pods.size(); i > 1; --i) std::swap(pods[i - 1], pods[rng.Below(i)]);
  int64_t target = static_cast<int64_t>(ratio * static_cast<double>(trace.capacity_milli));
  int64_t requested = 0;
  for (const PodShape& p : pods) requested += p.gpu_milli();
  if (requested < target && !trace.pods.empty()) {
    // Clones drawn with replacement from the name-sorted trace. The stop test compares the
    // per-GPU share, as the artifact does, so the total may overshoot by less than one pod.
    while (true) {
      const PodShape& p = trace.pods[rng.Below(trace.pods.size())];
      int32_t per_gpu = p.uses_gpu() ? p.milli : 0;
      if (requested + per_gpu > target) break;
      pods.push_back(p);
      requested += p.gpu_milli();
    }
  } else {
    while (requested > target && !pods.empty()) {
      size_t i = rng.Below(pods.size());
      requested -= pods[i].gpu_milli();
      pods.erase(pods.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }
  return pods;
}

struct Event {
  int arrived_pct;
  double allocated_pct;
  double frag_pct;
  double frag_ratio_pct;
};

std::vector<CurvePoint> Curve(const std::vector<Event>& events) {
  std::map<int, std::vector<const Event*>> by_pct;
  int max_pct = 0;
  for (const Event& e : events) {
    by_pct[e.arrived_pct].push_back(&e);
    max_pct = std::max(max_pct, e.arrived_pct);
  }
  std::vector<CurvePoint> curve;
  for (int level = 0; level <= max_pct; ++level) {
    std::vector<const Event*> window;
    if (auto it = by_pct.find(level); it != by_pct.end()) {
      window = it->second;
    } else {
      for (int l = level - 1; l <= level + 1; ++l) {
        if (auto jt = by_pct.find(l); jt != by_pct.end()) window.insert(window.end(), jt->second.begin(), jt->second.end());
      }
    }
    if (window.empty()) continue;
    CurvePoint p{.arrived_pct = level};
    for (const Event* e : window) {
      p.allocated_pct += e->allocated_pct;
      p.frag_pct += e->frag_pct;
      p.frag_ratio_pct += e->frag_ratio_pct;
    }
    double n = static_cast<double>(window.size());
    p.allocated_pct = Round2(p.allocated_pct / n);
    p.frag_pct = Round2(p.frag_pct / n);
    p.frag_ratio_pct = Round2(p.frag_ratio_pct / n);
    curve.push_back(p);
  }
  return curve;
}

}  // namespace

StatusOr<PreparedTrace> PrepareTrace(const std::vector<TraceNode>& nodes, std::vector<TracePod> pods) {
  PreparedTrace t;
  for (const TraceNode& n : nodes) {
    if (n.gpus > scoring::kMaxGpus) {
      return InvalidArgumentError(fmt::format("node {}: {} GPUs, at most {}", n.name, n.gpus, scoring::kMaxGpus));
    }
    NodeView v{.model = t.models.Intern(n.model),
               .cpu_free = n.cpu_milli,
               .mem_free = n.memory_mib,
               .cpu_cap = n.cpu_milli,
               .mem_cap = n.memory_mib,
               .gpu_count = n.gpus};
    for (int i = 0; i < n.gpus; ++i) v.gpu_free[i] = static_cast<int32_t>(kMilliPerGpu);
    t.nodes.push_back(v);
    t.node_names.push_back(n.name);
    t.capacity_milli += static_cast<int64_t>(n.gpus) * kMilliPerGpu;
  }
  std::sort(pods.begin(), pods.end(), [](const TracePod& a, const TracePod& b) { return a.name < b.name; });
  std::vector<scoring::WorkloadSample> samples;
  samples.reserve(pods.size());
  for (const TracePod& p : pods) {
    PodShape s{.cpu = p.cpu_milli, .mem = p.memory_mib, .gpus = p.num_gpu, .milli = p.num_gpu > 0 ? p.gpu_milli : 0};
    if (s.milli == 0) s.gpus = 0;
    if (s.uses_gpu()) {
      for (const std::string& model : SpecModels(p.gpu_spec)) {
        int id = t.models.Find(model);
        // A model no node has can never be satisfied; keep the constraint unsatisfiable.
        if (id < 0) id = t.models.Intern(model);
        if (id >= 0) s.spec |= uint64_t{1} << id;
      }
    }
    t.pods.push_back(s);
    samples.push_back({s, s.uses_gpu() ? p.gpu_spec : ""});
  }
  t.workload = scoring::BuildTargetWorkload(samples);
  scoring::BuildGapValue(samples, 0.05, &t.workload);
  t.workload.picky = scoring::PickyShapes(samples, t.nodes, scoring::kPickyShare);
  return t;
}


ReplayResult RunReplay(const PreparedTrace& trace, const scoring::Scorer& scorer, const ReplayOptions& options) {
  auto start = std::chrono::steady_clock::now();
  Rng rng(options.seed);
  std::vector<PodShape> pods = ArrivalOrder(trace, options.tune_ratio, rng);
  ReplayCluster cluster(trace, scorer, rng);
  ReplayResult result{.policy = std::string(scorer.Name()), .seed = options.seed, .pods = static_cast<int>(pods.size())};
  std::vector<Event> events;
  events.reserve(pods.size());
  int64_t arrived = 0;
  int64_t allocated = 0;
  double cap = static_cast<double>(trace.capacity_milli);
  for (const PodShape& pod : pods) {
    arrived += pod.gpu_milli();
    if (cluster.Place(pod, options.selection, rng)) {
      allocated += pod.gpu_milli();
    } else {
      ++result.failed_pods;
    }
    double idle = static_cast<double>(cluster.idle_total());
    events.push_back(Event{.arrived_pct = static_cast<int>(std::nearbyint(static_cast<double>(arrived) * 100.0 / cap)),
                           .allocated_pct = Round2(static_cast<double>(allocated) * 100.0 / cap),
                           .frag_pct = cluster.frag_total() * 100.0 / cap,
                           .frag_ratio_pct = idle > 0 ? cluster.frag_total() * 100.0 / idle : 0.0});
  }
  result.curve = Curve(events);
  for (const CurvePoint& p : result.curve) {
    if (p.arrived_pct == 100) {
      result.unallocated_pct_at_100 = Round2(100.0 - p.allocated_pct);
      result.frag_pct_at_100 = p.frag_pct;
    }
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace gpusched::replay
