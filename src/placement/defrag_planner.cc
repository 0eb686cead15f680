#include "gpusched/placement/defrag_planner.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "gpusched/model/units.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/victims.h"
#include "gpusched/scoring/fragmentation.h"

namespace gpusched::placement {
namespace {

bool ServesPods(const NodeState& n) { return n.ready() && (n.mode == NodeMode::kNvidia || n.mode == NodeMode::kMgpu); }

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
  // The state of node i with the pod `uid` gone, or with `added` booked too.
  NodeState Without(size_t i, std::string_view uid) const {
    std::vector<Allocation> rest;
    for (const Allocation& a : node(i).allocations) {
      if (a.pod_uid != uid) rest.push_back(a);
    }
    return Rebuilt(i, std::move(rest));
  }
  NodeState With(size_t i, const Allocation& added) const {
    std::vector<Allocation> all(node(i).allocations.begin(), node(i).allocations.end());
    all.push_back(added);
    return Rebuilt(i, std::move(all));
  }
  void Set(size_t i, NodeState state) { changed_.insert_or_assign(i, std::move(state)); }

 private:
  NodeState Rebuilt(size_t i, std::vector<Allocation> allocations) const {
    const NodeState& base = *input_.nodes[i];
    NodeState s = BuildNodeState(base.node, std::move(allocations));
    for (const Allocation& hold : base.holds) AddHold(hold, &s);
    s.uses = base.uses;
    return s;
  }

  const DefragInput& input_;
  std::map<size_t, NodeState> changed_;
};

// Which pods a plan may still move: the rules of the file comment, with the plan's own evictions
// counted against the PodDisruptionBudgets.
class MoveRules {
 public:
  explicit MoveRules(const DefragInput& input) : counter_(input.budgets) {}

  const PodLabels* LabelsOf(const NodeState& node, const Allocation& a) const { return node.LabelsOf(a.pod_uid); }
  // True if `a` may move, after the moves counted in `counter` (default: the plan's).
  bool Movable(const NodeState& node, const Allocation& a, DisruptionCounter* counter = nullptr) const {
    if (a.terminating || !a.problem.empty() || moved_.contains(a.pod_uid)) return false;
    if (a.origin != AllocationOrigin::kObserved && a.origin != AllocationOrigin::kCommitted) return false;
    if (a.placement.kind != RequestKind::kWholeGpu && a.placement.kind != RequestKind::kMgpu) return false;
    if (const PodLabels* labels = LabelsOf(node, a); labels != nullptr && RecreatedOnItsNode(*labels)) return false;
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

 private:
  DisruptionCounter counter_;
  std::set<std::string, std::less<>> moved_;
};

// How full a node's GPUs are, 0..1: the tie-break that packs moved pods.
double Fullness(const NodeState& n) {
  if (n.mode == NodeMode::kMgpu) return n.capacity_milli > 0 ? static_cast<double>(n.used_milli) / n.capacity_milli : 1;
  return n.whole_total > 0 ? static_cast<double>(n.whole_used) / n.whole_total : 1;
}

// The compute `a` holds, to move the largest pods first.
int64_t Size(const Allocation& a) {
  if (a.placement.kind == RequestKind::kWholeGpu) return a.placement.whole_gpus * kMilliPerGpu;
  int64_t milli = 0;
  for (const ContainerAssignment& c : a.placement.containers) milli += c.milli_per_gpu * static_cast<int64_t>(c.gpu_indices.size());
  return milli;
}

// The node that takes `request` and is fullest (then first), or nullopt.
std::optional<size_t> Fullest(Planner& planner, const PodRequest& request, const Overlay& cluster) {
  std::optional<size_t> best;
  for (size_t j = 0; j < cluster.size(); ++j) {
    const NodeState& n = cluster.node(j);
    if (!ServesPods(n) || !planner.Fits(request, n)) continue;
    if (!best || Fullness(n) > Fullness(cluster.node(*best))) best = j;
  }
  return best;
}

// `a` as it would be booked on node `n` with what Evaluate gives `request` there, or nullopt.
std::optional<Allocation> Placed(Planner& planner, const PodRequest& request, Allocation a, const NodeState& n) {
  NodeVerdict v = planner.Evaluate(request, n, /*want_placement=*/true);
  if (!v.fits) return std::nullopt;
  a.node_name = n.node.name;
  a.mode = n.mode;
  a.placement = std::move(v.placement);
  a.origin = AllocationOrigin::kCommitted;
  return a;
}

// Books `a` on node j of `cluster` (Placed). Returns the booked allocation, or nullopt.
std::optional<Allocation> Land(Planner& planner, const PodRequest& request, Allocation a, size_t j, Overlay* cluster) {
  std::optional<Allocation> placed = Placed(planner, request, std::move(a), cluster->node(j));
  if (placed) cluster->Set(j, cluster->With(j, *placed));
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
std::optional<Candidate> PreemptOrder(size_t i, const NodeState& node, const PodRequest& request, std::string_view pod_uid,
                                      const MoveRules& rules, const DefragOptions& options, VictimFinder* finder) {
  DisruptionCounter counter = rules.counter();
  VictimRules victim_rules{.priority = INT32_MAX, .pod_uid = pod_uid, .known_only = true,
                           .violates_pdb = [&](const Allocation& a) { return !rules.Movable(node, a, &counter); }};
  VictimChoice choice = finder->Choose(request, node, victim_rules);
  if (!choice.helps || choice.pdb_violations > 0) return std::nullopt;
  return CandidateOf(i, node, std::move(choice.victims), rules, options);
}

// The same reprieve with the largest pods given back first, so that the small ones, which land
// more easily elsewhere, are those that move. Judged on the node's use (node_state.h's what-ifs).
std::optional<Candidate> LargestKept(size_t i, const NodeState& node, const PodRequest& request, std::string_view pod_uid,
                                     const MoveRules& rules, const DefragOptions& options, Planner& planner) {
  NodeState kept = EmptyUsage(node);
  for (const Allocation& h : node.holds) {
    if (h.pod_uid != pod_uid) AddUse(h, &kept);
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

// Tries candidate `c`: evicts its victims, books the pod there, lands each victim (largest first)
// on the fullest node that takes it. Fills *plan and returns true if every victim lands.
bool TryCandidate(const Candidate& c, const PodRequest& request, std::string_view pod_uid, const Overlay& cluster,
                  const MoveRules& rules, Planner& planner, const scoring::TargetWorkload* workload, DefragPlan* plan) {
  Overlay trial = cluster;
  const NodeState& source = cluster.node(c.node);
  for (const Allocation* v : c.victims) {
    trial.Set(c.node, trial.Without(c.node, v->pod_uid));
  }
  Allocation pending{.pod_uid = std::string(pod_uid), .node_name = source.node.name};
  std::optional<Allocation> booked = Land(planner, request, pending, c.node, &trial);
  if (!booked) return false;
  std::vector<const Allocation*> order = c.victims;
  std::stable_sort(order.begin(), order.end(), [](const Allocation* a, const Allocation* b) { return Size(*a) > Size(*b); });
  std::vector<DefragMove> moves;
  for (const Allocation* v : order) {
    PodRequest moved = RequestHeldBy(*v, source.compute_policy);
    std::optional<size_t> to = Fullest(planner, moved, trial);
    std::optional<Allocation> landed = to ? Land(planner, moved, *v, *to, &trial) : std::nullopt;
    if (!landed) return false;
    moves.push_back(MoveOf(source, *v, *landed, rules));
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
                                 size_t limit) {
  std::vector<size_t> out;
  for (size_t j = 0; j < cluster.size(); ++j) {
    if (j != from && ServesPods(cluster.node(j)) && planner.Fits(request, cluster.node(j))) out.push_back(j);
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
      for (size_t j : Destinations(request, s, cluster, planner, 4 * options.source_nodes)) {
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

DefragPlan MakeRoom(const PodRequest& request, std::string_view pod_uid, const DefragInput& input,
                    const DefragOptions& options) {
  Overlay cluster(input);
  MoveRules rules(input);
  Planner planner(options.placement);
  DefragPlan plan;
  plan.frag_before_pct = plan.frag_after_pct = PctOf(cluster, input.workload);
  if (std::optional<size_t> now = Fullest(planner, request, cluster)) {
    Overlay trial = cluster;
    std::optional<Allocation> booked = Land(planner, request, Allocation{.pod_uid = std::string(pod_uid)}, *now, &trial);
    plan.fits = true;
    plan.node = cluster.node(*now).node.name;
    plan.placement = booked->placement;
    return plan;
  }
  VictimFinder finder(options.placement);
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < cluster.size(); ++i) {
    if (!ServesPods(cluster.node(i))) continue;
    const NodeState& node = cluster.node(i);
    std::optional<Candidate> first = PreemptOrder(i, node, request, pod_uid, rules, options, &finder);
    std::optional<Candidate> second = LargestKept(i, node, request, pod_uid, rules, options, planner);
    if (first) candidates.push_back(*first);
    if (second && (!first || second->victims != first->victims)) candidates.push_back(std::move(*second));
  }
  std::sort(candidates.begin(), candidates.end(), [&](const Candidate& a, const Candidate& b) {
    return a.Key(cluster.node(a.node).node.name) < b.Key(cluster.node(b.node).node.name);
  });
  for (size_t k = 0; k < candidates.size() && k < options.max_tries; ++k) {
    if (TryCandidate(candidates[k], request, pod_uid, cluster, rules, planner, input.workload, &plan)) return plan;
  }
  plan.reason = candidates.empty()
                    ? fmt::format("no node makes room with at most {} moves of pods that may move", options.max_moves)
                    : fmt::format("{} node{} make room, but their pods find no other node", candidates.size(),
                                  candidates.size() == 1 ? "" : "s");
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
  return plan;
}

}  // namespace gpusched::placement
