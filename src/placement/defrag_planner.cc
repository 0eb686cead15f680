// File: defrag_planner.cc
//
// The device-plugin defrag planner: an overlay of the cluster as the plan's moves leave it, the
// move rules with the plan's budget use, making room (victims per node, each landed on the fullest
// node that takes it), and consolidation one best move at a time.
#include "gpusched/placement/defrag_planner.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "gpusched/model/units.h"
#include "gpusched/placement/move_rules.h"
#include "gpusched/placement/node_fit.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/victims.h"
#include "gpusched/placement/what_if.h"
#include "gpusched/scoring/fragmentation.h"

namespace gpusched::placement {
namespace {

bool ServesPods(const NodeState& n) { return n.ready() && HasDevicePlugin(n.mode); }

// The cluster as the plan's moves leave it: nodes changed so far are rebuilt with their new
// allocations (the node object, its holds and its pods' other uses kept); the others are the input's.
class Overlay {
 public:
  explicit Overlay(const DefragInput& input) : input_(input) {}

  size_t size() const { return input_.nodes.size(); }
  const NodeState& node(size_t i) const {
    auto it = changed_.find(i);
    return it == changed_.end() ? *input_.nodes[i] : it->second;
  }
  // The state of node i with the pod `uid` gone, or with `added` booked too (what_if.h).
  NodeState Without(size_t i, std::string_view uid) const { return std::move(WhatIf(node(i)).Without(uid)).Take(); }
  NodeState With(size_t i, const Allocation& added) const { return std::move(WhatIf(node(i)).With(added)).Take(); }
  // The state of node i with pod `pod`'s `added` booked, in place of the holds kept for it.
  NodeState Booked(size_t i, const Allocation& added, const Viewer& pod) const {
    return std::move(WhatIf(node(i)).With(added).Consumed(pod)).Take();
  }
  void Set(size_t i, NodeState state) { changed_.insert_or_assign(i, std::move(state)); }
  // Records pod `uid` (of `source`, the inventory's node i) moving to node j: its use of the
  // nodes' other resources goes along.
  void Moved(size_t i, size_t j, std::string_view uid) {
    const NodeState& source = *input_.nodes[i];
    moved_.Move(source.node.name, input_.nodes[j]->node.name, source.uses != nullptr ? source.uses->Find(uid) : nullptr);
  }
  // Records the pending pod's `use` arriving on node j.
  void Arrived(size_t j, const PodUse* use) { moved_.Move("", input_.nodes[j]->node.name, use); }
  // Why a pod with `labels` asking `requests` may not land on node j as the moves leave it, or ""
  // (move_rules.h).
  std::string LandingProblem(size_t j, const PodLabels* labels, const ResourceList& requests, std::string_view uid,
                             int32_t priority) const {
    return moved_.LandingProblem(*input_.nodes[j], labels, requests, uid, priority);
  }
  // LandingProblem for pod `uid` of node i (its labels and requests as the inventory has them).
  std::string LandingProblemOf(size_t i, std::string_view uid, int32_t priority, size_t j) const {
    const NodeState& source = *input_.nodes[i];
    const PodUse* use = source.uses != nullptr ? source.uses->Find(uid) : nullptr;
    static const ResourceList kNothing;
    return LandingProblem(j, source.LabelsOf(uid), use != nullptr ? use->requests : kNothing, uid, priority);
  }

 private:
  const DefragInput& input_;
  std::map<size_t, NodeState> changed_;
  MovedUses moved_;
};

// Which pods a plan may still move: the rules of the file comment, with the plan's own evictions
// counted against the PodDisruptionBudgets.
class MoveRules {
 public:
  explicit MoveRules(const DefragInput& input) : budgets_(input.budgets), counter_(input.budgets, BudgetReading::kEviction) {}

  const PodLabels* LabelsOf(const NodeState& node, const Allocation& a) const { return node.LabelsOf(a.pod_uid); }
  // True if `a` may move, after the moves counted in `counter` (default: the plan's).
  bool Movable(const NodeState& node, const Allocation& a, DisruptionCounter* counter = nullptr) const {
    if (moved_.contains(a.pod_uid)) return false;
    if (!HasDevicePlugin(a.placement.kind)) return false;
    if (std::string why = WhyNotMovable(node, a, budgets_.get()); !why.empty()) {
      refused_.Add(why, a.pod_uid);
      return false;
    }
    DisruptionCounter trial = counter != nullptr ? *counter : counter_;
    bool violates = trial.Evict(a.pod_name, LabelsOf(node, a));
    if (counter != nullptr) *counter = trial;
    return !violates;
  }
  bool UsesBudget(const NodeState& node, const Allocation& a) const { return counter_.Covers(a.pod_name, LabelsOf(node, a)); }
  // Records the move of `a` (checked Movable): it uses its budgets and never moves again.
  void Moved(const NodeState& node, const Allocation& a) {
    counter_.Evict(a.pod_name, LabelsOf(node, a));
    moved_.insert(a.pod_uid);
  }
  const DisruptionCounter& counter() const { return counter_; }
  // The pods that were never movable, by reason ("; not moved: 2 pods: no controller would
  // recreate it"), or "".
  std::string Refused() const { return refused_.Text(); }

 private:
  std::shared_ptr<const std::vector<DisruptionBudget>> budgets_;
  DisruptionCounter counter_;
  std::set<std::string, std::less<>> moved_;
  mutable RefusedPods refused_;
};

// How full a node's GPUs are, 0..1: the tie-break that packs moved pods.
double Fullness(const NodeState& n) {
  if (HasPayload(n.mode, Payload::kShares)) return n.capacity_milli > 0 ? static_cast<double>(n.used_milli) / n.capacity_milli : 1;
  return n.whole_total > 0 ? static_cast<double>(n.whole_used) / n.whole_total : 1;
}

// The compute `a` holds, to move the largest pods first.
int64_t Size(const Allocation& a) {
  if (HasPayload(a.placement.kind, Payload::kCount)) return a.placement.whole_gpus * kMilliPerGpu;
  int64_t milli = 0;
  for (const ContainerAssignment& c : a.placement.containers) milli += c.milli_per_gpu * static_cast<int64_t>(c.gpu_indices.size());
  return milli;
}

// Node `n` as `viewer` sees it, or as it is where null (every hold counts).
WhatIf ViewOf(const NodeState& n, const Viewer* viewer) {
  WhatIf view(n);
  if (viewer != nullptr) view.SeenBy(*viewer);
  return view;
}

// Whether the pod may land on node j besides its GPUs (Overlay::LandingProblem).
using Accepts = std::function<bool(size_t j)>;

// The node that takes `request` and is fullest (then first), or nullopt. Each node is judged as
// `viewer` sees it (what_if.h); null: every hold counts (a moved pod's replacement, for which
// nothing is held there).
std::optional<size_t> Fullest(Planner& planner, const PodRequest& request, const Overlay& cluster, const Accepts& accepts,
                              const Viewer* viewer = nullptr) {
  std::optional<size_t> best;
  for (size_t j = 0; j < cluster.size(); ++j) {
    const NodeState& n = cluster.node(j);
    if (!ServesPods(n) || !planner.Fits(request, ViewOf(n, viewer).state()) || !accepts(j)) continue;
    if (!best || Fullness(n) > Fullness(cluster.node(*best))) best = j;
  }
  return best;
}

// `a` as it would be booked on node `n` with what Evaluate gives `request` there, or nullopt.
std::optional<Allocation> Placed(Planner& planner, const PodRequest& request, Allocation a, const NodeState& n) {
  NodeVerdict v = planner.Evaluate(request, n, /*want_placement=*/true);
  if (!v.fits()) return std::nullopt;
  a.node_name = n.node.name;
  a.mode = n.mode;
  a.placement = std::move(v.placement);
  a.origin = AllocationOrigin::kCommitted;
  return a;
}

// Books `a` on node j of `cluster` (Placed), judged as `viewer` sees the node (Fullest). Returns
// the booked allocation, or nullopt. The holds kept for the viewer give way to its booking, as at
// bind; every other hold stays.
std::optional<Allocation> Land(Planner& planner, const PodRequest& request, Allocation a, size_t j, Overlay* cluster,
                               const Viewer* viewer = nullptr) {
  std::optional<Allocation> placed = Placed(planner, request, std::move(a), ViewOf(cluster->node(j), viewer).state());
  if (placed) cluster->Set(j, viewer != nullptr ? cluster->Booked(j, *placed, *viewer) : cluster->With(j, *placed));
  return placed;
}

// The move of `was` (on its node `source`) to where it is `now`.
DefragMove MoveOf(const NodeState& source, const Allocation& was, const Allocation& now, const MoveRules& rules) {
  const PodLabels* labels = rules.LabelsOf(source, was);
  return DefragMove{.pod = was.pod_namespace + "/" + was.pod_name, .uid = was.pod_uid, .priority = was.priority,
                    .from = was.node_name, .to = now.node_name, .placement = now.placement,
                    .uses_budget = rules.UsesBudget(source, was), .controller_uid = labels != nullptr ? labels->controller_uid : ""};
}

double NodeFrag(const NodeState& n, const scoring::TargetWorkload* workload) {
  if (workload == nullptr || workload->classes.empty() || !ServesPods(n)) return 0;
  return scoring::FgdFragmentation(n.view, *workload);
}

std::vector<const NodeState*> States(const Overlay& cluster) {
  std::vector<const NodeState*> out;
  for (size_t i = 0; i < cluster.size(); ++i) out.push_back(&cluster.node(i));
  return out;
}

double PctOf(const Overlay& cluster, const scoring::TargetWorkload* workload) {
  return workload != nullptr ? FragmentedPct(States(cluster), *workload) : 0;
}

// One node where evictions make room: its victims and what orders it among the others.
struct Candidate {
  size_t node = 0;
  std::vector<const Allocation*> victims;
  int64_t budget_uses = 0;
  int32_t top_priority = INT32_MIN;
  int64_t same_workload = 0;  // victims beyond the first of each namespace and label set

  auto Key(const std::string& name) const {
    return std::make_tuple(victims.size(), budget_uses, top_priority, same_workload, name);
  }
};

// The candidate on node i with `victims` (all movable, counted in order against the budgets), or
// nullopt if there are more than max_moves or one may not move after the others.
std::optional<Candidate> CandidateOf(size_t i, const NodeState& node, std::vector<const Allocation*> victims,
                                     const MoveRules& rules, const DefragOptions& options) {
  if (victims.empty() || victims.size() > static_cast<size_t>(options.max_moves)) return std::nullopt;
  DisruptionCounter counter = rules.counter();
  Candidate c{.node = i, .victims = std::move(victims)};
  std::set<const PodLabels*> workloads;
  for (const Allocation* v : c.victims) {
    if (!rules.Movable(node, *v, &counter)) return std::nullopt;
    c.budget_uses += rules.UsesBudget(node, *v) ? 1 : 0;
    c.top_priority = std::max(c.top_priority, v->priority);
    const PodLabels* labels = rules.LabelsOf(node, *v);
    if (labels != nullptr && !workloads.insert(labels).second) ++c.same_workload;
  }
  return c;
}

// Preempt's victims (victims.h) with every pod a candidate: those that may not move are given
// back first, so one still a victim is needed whatever else goes (the node cannot help).
std::optional<Candidate> PreemptOrder(size_t i, const NodeState& node, const PodRequest& request, const Viewer& viewer,
                                      const MoveRules& rules, const DefragOptions& options, VictimFinder* finder) {
  DisruptionCounter counter = rules.counter();
  VictimRules victim_rules{.priority = INT32_MAX, .viewer = viewer, .known_only = true,
                           .violates_pdb = [&](const Allocation& a) { return !rules.Movable(node, a, &counter); }};
  VictimChoice choice = finder->Choose(request, node, victim_rules);
  if (!choice.helps || choice.pdb_violations > 0) return std::nullopt;
  return CandidateOf(i, node, std::move(choice.victims), rules, options);
}

// The same reprieve with the largest pods given back first, so that the small ones, which land
// more easily elsewhere, are those that move. Judged on the node's use (node_state.h's what-ifs).
std::optional<Candidate> LargestKept(size_t i, const NodeState& node, const PodRequest& request, const Viewer& viewer,
                                     const MoveRules& rules, const DefragOptions& options, Planner& planner) {
  NodeState kept = EmptyUsage(node);
  for (const Allocation& h : node.holds) {
    if (HoldBinds(h, viewer)) AddUse(h, &kept);
  }
  std::vector<const Allocation*> movable;
  for (const Allocation& a : node.allocations) {
    if (rules.Movable(node, a)) {
      movable.push_back(&a);
    } else {
      AddUse(a, &kept);
    }
  }
  if (!planner.Fits(request, kept)) return std::nullopt;
  std::stable_sort(movable.begin(), movable.end(), [](const Allocation* a, const Allocation* b) {
    return std::make_tuple(Size(*b), b->priority, a->pod_uid) < std::make_tuple(Size(*a), a->priority, b->pod_uid);
  });
  std::vector<const Allocation*> victims;
  for (const Allocation* a : movable) {
    NodeState trial = kept;
    AddUse(*a, &trial);
    if (planner.Fits(request, trial)) {
      kept = std::move(trial);
    } else {
      victims.push_back(a);
    }
  }
  return CandidateOf(i, node, std::move(victims), rules, options);
}

// The pending pod as the landing rules see it (move_rules.h).
struct Pending {
  const Pod& pod;
  PodLabels labels;
  PodUse use;  // its requests besides GPUs, counted on its node once booked
};

// Tries candidate `c`: evicts its victims, books the pod there, lands each victim (largest first)
// on the fullest node that takes it. Fills *plan and returns true if every victim lands and the
// pending pod then fits its node besides GPUs.
bool TryCandidate(const Candidate& c, const PodRequest& request, const Pending& pending, const Overlay& cluster,
                  const MoveRules& rules, Planner& planner, const scoring::TargetWorkload* workload, DefragPlan* plan) {
  Overlay trial = cluster;
  const NodeState& source = cluster.node(c.node);
  for (const Allocation* v : c.victims) {
    trial.Set(c.node, trial.Without(c.node, v->pod_uid));
  }
  Allocation booking{.pod_uid = pending.pod.uid, .node_name = source.node.name};
  Viewer viewer = Viewer::Of(pending.pod);
  std::optional<Allocation> booked = Land(planner, request, booking, c.node, &trial, &viewer);
  if (!booked) return false;
  std::vector<const Allocation*> order = c.victims;
  std::stable_sort(order.begin(), order.end(), [](const Allocation* a, const Allocation* b) { return Size(*a) > Size(*b); });
  std::vector<DefragMove> moves;
  for (const Allocation* v : order) {
    PodRequest moved = RequestHeldBy(*v, source.compute_policy);
    Accepts accepts = [&](size_t j) { return trial.LandingProblemOf(c.node, v->pod_uid, v->priority, j).empty(); };
    std::optional<size_t> to = Fullest(planner, moved, trial, accepts);
    std::optional<Allocation> landed = to ? Land(planner, moved, *v, *to, &trial) : std::nullopt;
    if (!landed) return false;
    trial.Moved(c.node, *to, v->pod_uid);
    moves.push_back(MoveOf(source, *v, *landed, rules));
  }
  if (!trial.LandingProblem(c.node, &pending.labels, pending.use.requests, pending.pod.uid, pending.pod.priority).empty()) {
    return false;
  }
  plan->fits = true;
  plan->node = source.node.name;
  plan->placement = booked->placement;
  plan->moves = std::move(moves);
  plan->frag_after_pct = PctOf(trial, workload);
  return true;
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
  Planner planner(options.placement);
  DefragPlan plan;
  plan.frag_before_pct = plan.frag_after_pct = PctOf(cluster, input.workload);
  plan.not_judged = UnjudgedBesidesHostPorts(pod.constraints);
  Pending pending{.pod = pod, .labels = LabelsOf(pod), .use = PodUse{.uid = pod.uid, .requests = EffectiveRequests(pod)}};
  Accepts fits_now = [&](size_t j) {
    return cluster.LandingProblem(j, &pending.labels, pending.use.requests, pod.uid, pod.priority).empty();
  };
  Viewer viewer = Viewer::Of(pod);  // its own hold, its controller's and those of lower priority are room for it
  if (std::optional<size_t> now = Fullest(planner, request, cluster, fits_now, &viewer)) {
    Overlay trial = cluster;
    std::optional<Allocation> booked = Land(planner, request, Allocation{.pod_uid = pod.uid}, *now, &trial, &viewer);
    plan.fits = true;
    plan.node = cluster.node(*now).node.name;
    plan.placement = booked->placement;
    return plan;
  }
  VictimFinder finder(options.placement);
  std::vector<Candidate> candidates;
  size_t refused_nodes = 0;
  for (size_t i = 0; i < cluster.size(); ++i) {
    if (!ServesPods(cluster.node(i))) continue;
    const NodeState& node = cluster.node(i);
    if (node.node.schedulability.ready == false || !NodeSelectionProblem(pod.constraints, node.node).empty()) {
      ++refused_nodes;  // no eviction makes kube-scheduler take the pod there
      continue;
    }
    std::optional<Candidate> first = PreemptOrder(i, node, request, viewer, rules, options, &finder);
    std::optional<Candidate> second = LargestKept(i, node, request, viewer, rules, options, planner);
    if (first) candidates.push_back(*first);
    if (second && (!first || second->victims != first->victims)) candidates.push_back(std::move(*second));
  }
  std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
    return a.Key(cluster.node(a.node).node.name) < b.Key(cluster.node(b.node).node.name);
  });
  for (size_t k = 0; k < candidates.size() && k < options.max_tries; ++k) {
    if (TryCandidate(candidates[k], request, pending, cluster, rules, planner, input.workload, &plan)) return plan;
  }
  plan.reason = candidates.empty()
                    ? fmt::format("no node makes room with at most {} moves of pods that may move", options.max_moves)
                    : fmt::format("{} node{} make room, but their pods find no other node, or the pod does not fit there besides GPUs",
                                  candidates.size(), candidates.size() == 1 ? "" : "s");
  if (refused_nodes > 0) {
    plan.reason += fmt::format("; {} node{} refuse the pod whatever moves (not Ready, cordoned, taints, node selection)",
                               refused_nodes, refused_nodes == 1 ? "" : "s");
  }
  plan.reason += rules.Refused();
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
