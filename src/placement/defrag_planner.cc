// File: defrag_planner.cc
//
// The device-plugin defrag planner: making room for one pending pod (defrag_room.h's RoomFor on
// the cluster as it is), and consolidation one best move at a time.
#include "gpusched/placement/defrag_planner.h"

#include <algorithm>
#include <functional>
#include <utility>

#include <fmt/format.h>

#include "defrag_room.h"
#include "gpusched/placement/node_fit.h"
#include "gpusched/scoring/fragmentation.h"

namespace gpusched::placement {
namespace {

using defrag::Accepts;
using defrag::Fullness;
using defrag::MoveOf;
using defrag::MoveRules;
using defrag::Overlay;
using defrag::PctOf;
using defrag::Pending;
using defrag::Placed;
using defrag::Room;
using defrag::ServesPods;


double NodeFrag(const NodeState& n, const scoring::TargetWorkload* workload) {
  if (workload == nullptr || workload->classes.empty() || !ServesPods(n)) return 0;
  return scoring::FgdFragmentation(n.view, *workload);
}

// A single move and the states of the two nodes it leaves; delta: its change of the cluster's
// fragmentation in milli-GPU (negative: lower).
struct Step {
  double delta = 0;
  size_t from = 0;
  size_t to = 0;
  Allocation was;
  Allocation landed;
  NodeState from_state;
  NodeState to_state;
};

// The destinations to weigh for `request`, off node `from`: the fullest that take it.
std::vector<size_t> Destinations(const PodRequest& request, size_t from, const Overlay& cluster, Planner& planner,
                                 size_t limit, const Accepts& accepts) {
  std::vector<size_t> out;
  for (size_t j = 0; j < cluster.size(); ++j) {
    if (j != from && ServesPods(cluster.node(j)) && planner.Fits(request, cluster.node(j)) && accepts(j)) out.push_back(j);
  }
  auto fuller = [&](size_t a, size_t b) { return Fullness(cluster.node(a)) > Fullness(cluster.node(b)); };
  std::stable_sort(out.begin(), out.end(), fuller);
  if (out.size() > limit) out.resize(limit);
  return out;
}

// The move of one pod out of the most fragmented nodes that lowers the fragmentation most, or
// nullopt if none lowers it.
std::optional<Step> BestStep(const Overlay& cluster, const MoveRules& rules, Planner& planner,
                             const scoring::TargetWorkload& workload, const DefragOptions& options) {
  std::vector<double> frag(cluster.size());
  std::vector<size_t> sources;
  for (size_t i = 0; i < cluster.size(); ++i) {
    frag[i] = NodeFrag(cluster.node(i), &workload);
    if (frag[i] > 0) sources.push_back(i);
  }
  std::stable_sort(sources.begin(), sources.end(), [&](size_t a, size_t b) { return frag[a] > frag[b]; });
  if (sources.size() > options.source_nodes) sources.resize(options.source_nodes);
  std::optional<Step> best;
  for (size_t s : sources) {
    const NodeState& src = cluster.node(s);
    for (const Allocation& a : src.allocations) {
      if (!rules.Movable(src, a)) continue;
      PodRequest request = RequestHeldBy(a, src.compute_policy);
      NodeState without = cluster.Without(s, a.pod_uid);
      double from_delta = NodeFrag(without, &workload) - frag[s];
      Accepts accepts = [&](size_t j) { return cluster.LandingProblemOf(s, a.pod_uid, a.priority, j).empty(); };
      for (size_t j : Destinations(request, s, cluster, planner, 4 * options.source_nodes, accepts)) {
        std::optional<Allocation> landed = Placed(planner, request, a, cluster.node(j));
        if (!landed) continue;
        NodeState with = cluster.With(j, *landed);
        double delta = from_delta + NodeFrag(with, &workload) - frag[j];
        if (delta >= (best ? best->delta : -1e-6)) continue;
        best = Step{.delta = delta, .from = s, .to = j, .was = a, .landed = *landed, .from_state = without,
                    .to_state = std::move(with)};
      }
    }
  }
  return best;
}

}  // namespace

double FragmentedPct(const std::vector<const NodeState*>& nodes, const scoring::TargetWorkload& workload) {
  double fragmented = 0;
  int64_t gpus = 0;
  for (const NodeState* n : nodes) {
    if (!ServesPods(*n)) continue;
    gpus += n->view.gpu_count;
    fragmented += NodeFrag(*n, &workload);
  }
  return gpus > 0 ? 100.0 * fragmented / (static_cast<double>(gpus) * kMilliPerGpu) : 0;
}

DefragPlan MakeRoom(const PodRequest& request, const Pod& pod, const DefragInput& input, const DefragOptions& options) {
  Overlay cluster(input);
  MoveRules rules(input);
  DefragPlan plan;
  plan.frag_before_pct = plan.frag_after_pct = PctOf(cluster, input.workload);
  plan.not_judged = UnjudgedBesidesHostPorts(pod.constraints);
  Pending pending = Pending::Of(pod);
  Room room;
  if (!defrag::RoomFor(request, pending, options, &cluster, &rules, &room)) {
    plan.reason = room.reason + rules.Refused();
    return plan;
  }
  plan.fits = true;
  plan.node = cluster.node(room.node).node.name;
  plan.placement = std::move(room.placement);
  if (!room.moves.empty()) plan.frag_after_pct = PctOf(cluster, input.workload);
  plan.moves = std::move(room.moves);
  return plan;
}

DefragPlan Consolidate(double target_pct, const DefragInput& input, const DefragOptions& options) {
  Overlay cluster(input);
  MoveRules rules(input);
  Planner planner(options.placement);
  DefragPlan plan;
  double pct = plan.frag_before_pct = PctOf(cluster, input.workload);
  bool measured = input.workload != nullptr && !input.workload->classes.empty();
  while (measured && pct > target_pct && plan.moves.size() < static_cast<size_t>(options.max_moves)) {
    std::optional<Step> step = BestStep(cluster, rules, planner, *input.workload, options);
    if (!step) {
      plan.reason = fmt::format("no single move of a pod that may move lowers the fragmentation below {:.2f}%", pct);
      break;
    }
    plan.moves.push_back(MoveOf(cluster.node(step->from), step->was, step->landed, rules));
    rules.Moved(cluster.node(step->from), step->was);
    cluster.Moved(step->from, step->to, step->was.pod_uid);
    cluster.Set(step->from, std::move(step->from_state));
    cluster.Set(step->to, std::move(step->to_state));
    pct = PctOf(cluster, input.workload);
  }
  plan.frag_after_pct = pct;
  plan.fits = pct <= target_pct;
  if (!measured) plan.reason = "no GPU pods run: no workload to measure fragmentation for";
  if (!plan.fits && plan.reason.empty()) {
    plan.reason = fmt::format("{} moves (the most allowed) leave {:.2f}% fragmented", plan.moves.size(), pct);
  }
  if (!plan.fits) plan.reason += rules.Refused();
  return plan;
}

}  // namespace gpusched::placement
