#include "gpusched/replay/openb_replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "gpusched/common/random.h"
#include "gpusched/placement/score_mapping.h"
#include "gpusched/scoring/fragmentation.h"

namespace gpusched::replay {
namespace {

using scoring::Candidate;
using scoring::Choice;
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

// Picks the candidate kube-scheduler would bind when gpusched maps the scores to 0-10.
size_t PickThroughExtender(std::span<const Candidate> candidates, std::span<const Choice> choices,
                           const std::vector<std::string>& ordered_names, placement::ScoreMapping mapping, Rng& rng) {
  std::vector<placement::ScoredNode> scored(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) scored[i] = {ordered_names[candidates[i].order], choices[i].score};
  std::vector<int64_t> mapped = placement::MapScores(scored, mapping);
  int64_t top = *std::max_element(mapped.begin(), mapped.end());
  std::vector<size_t> tied;
  for (size_t i = 0; i < mapped.size(); ++i) {
    if (mapped[i] == top) tied.push_back(i);
  }
  return tied.size() == 1 ? tied[0] : tied[rng.Below(tied.size())];
}

}  // namespace

StatusOr<PreparedTrace> PrepareTrace(const std::vector<TraceNode>& nodes, std::vector<TracePod> pods) {
  PreparedTrace t;
  for (const TraceNode& n : nodes) {
    if (n.gpus > scoring::kMaxGpus) {
      return InvalidArgumentError(fmt::format("node {}: {} GPUs, at most {}", n.name, n.gpus, scoring::kMaxGpus));
    }
    NodeView v{.model = t.models.Intern(n.model), .cpu_free = n.cpu_milli, .mem_free = n.memory_mib, .gpu_count = n.gpus};
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
  return t;
}

namespace {

// One replay's cluster as it fills: the nodes, each node's FGD fragmentation and the scorer's
// potential, kept current as pods are placed.
class ReplayCluster {
 public:
  ReplayCluster(const PreparedTrace& trace, const scoring::Scorer& scorer, Rng& rng)
      : trace_(trace), scorer_(scorer), nodes_(trace.nodes), idle_total_(trace.capacity_milli) {
    size_t n = nodes_.size();
    // The order kube-scheduler would list the nodes in, and their names sorting in that order.
    order_.resize(n);
    std::iota(order_.begin(), order_.end(), 0u);
    for (size_t i = n; i > 1; --i) std::swap(order_[i - 1], order_[rng.Below(i)]);
    ordered_names_.resize(n);
    for (size_t i = 0; i < n; ++i) ordered_names_[order_[i]] = fmt::format("{:05}-{}", order_[i], trace.node_names[i]);
    frag_.resize(n);
    potential_.assign(n, std::numeric_limits<double>::quiet_NaN());
    for (size_t i = 0; i < n; ++i) {
      frag_[i] = scoring::FgdFragmentation(nodes_[i], trace.workload);
      frag_total_ += frag_[i];
      if (scorer.HasPotential()) potential_[i] = scorer.Potential(nodes_[i]);
    }
  }

  // Places `pod` where the scorer (through `selection`) picks; returns false if no node fits.
  bool Place(const PodShape& pod, Selection selection, Rng& rng) {
    candidates_.clear();
    candidate_node_.clear();
    size_t n = nodes_.size();
    for (size_t i = 0; i < n; ++i) {
      if (!scoring::Fits(pod, nodes_[i])) continue;
      candidates_.push_back(Candidate{.node = &nodes_[i],
                                      .order = order_[i],
                                      .rank = static_cast<double>(order_[i]) / static_cast<double>(n),
                                      .potential = potential_[i]});
      candidate_node_.push_back(i);
    }
    if (candidates_.empty()) return false;
    choices_.assign(candidates_.size(), Choice{});
    scorer_.Score(pod, candidates_, choices_, rng);
    size_t pick = Pick(selection, rng);
    size_t i = candidate_node_[pick];
    int gpu = choices_[pick].gpu;
    if (pod.sharing() && gpu < 0) gpu = scoring::BestFitGpu(pod, nodes_[i]);
    scoring::Place(pod, gpu, &nodes_[i]);
    idle_total_ -= pod.gpu_milli();
    frag_total_ -= frag_[i];
    frag_[i] = scoring::FgdFragmentation(nodes_[i], trace_.workload);
    frag_total_ += frag_[i];
    if (scorer_.HasPotential()) potential_[i] = scorer_.Potential(nodes_[i]);
    return true;
  }

  double frag_total() const { return frag_total_; }
  int64_t idle_total() const { return idle_total_; }

 private:
  size_t Pick(Selection selection, Rng& rng) {
    switch (selection) {
      case Selection::kPolicy: return scoring::Best(candidates_, choices_);
      case Selection::kExtenderRank:
        return PickThroughExtender(candidates_, choices_, ordered_names_, placement::ScoreMapping::kRank, rng);
      case Selection::kExtenderLinear:
        return PickThroughExtender(candidates_, choices_, ordered_names_, placement::ScoreMapping::kLinear, rng);
    }
    return 0;
  }

  const PreparedTrace& trace_;
  const scoring::Scorer& scorer_;
  std::vector<NodeView> nodes_;
  std::vector<uint32_t> order_;
  std::vector<std::string> ordered_names_;
  std::vector<double> frag_;
  std::vector<double> potential_;
  double frag_total_ = 0;
  int64_t idle_total_;
  std::vector<Candidate> candidates_;
  std::vector<size_t> candidate_node_;
  std::vector<Choice> choices_;
};

}  // namespace

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
