// File: defrag_room.cc
//
// The overlay of a plan's moves, the move rules with the plan's budget use, and making room for
// one pending pod: victims per node (preempt's reprieve, and the largest kept), candidates in
// order of fewest moves then least disruption, each victim landed on the fullest node that takes it.
#include "defrag_room.h"

#include <algorithm>
#include <climits>
#include <tuple>

#include <fmt/format.h>

#include "gpusched/model/units.h"
#include "gpusched/placement/node_fit.h"
#include "gpusched/placement/victims.h"

namespace gpusched::placement::defrag {
namespace {

// Why a moved pod does not land on a node of DefragInput::no_landing.
constexpr const char* kKeptForAGang = "the node is in the domain kept for a waiting gang, which filter keeps moved pods off";

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

// Tries candidate `c` on a copy of *cluster: evicts its victims, books the pod there, lands each
// victim (largest first) on the fullest node that takes it. If every victim lands and the pending
// pod then fits its node besides GPUs, keeps the copy in *cluster, records the moves in *rules and
// fills *room; returns whether it did.
bool TryCandidate(const Candidate& c, const PodRequest& request, const Pending& pending, Overlay* cluster, MoveRules* rules,
                  Planner& planner, Room* room) {
  Overlay trial = *cluster;
  const NodeState& source = cluster->node(c.node);
  for (const Allocation* v : c.victims) {
    trial.Set(c.node, trial.Without(c.node, v->pod_uid));
  }
  Viewer viewer = Viewer::Of(*pending.pod);
  std::optional<Allocation> booked = Land(planner, request, BookingOf(*pending.pod, source.node.name), c.node, &trial, &viewer);
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
    moves.push_back(MoveOf(source, *v, *landed, *rules));
  }
  const Pod& pod = *pending.pod;
  if (!trial.LandingProblem(c.node, &pending.labels, pending.use.requests, pod.uid, pod.priority).empty()) return false;
  for (const Allocation* v : c.victims) rules->Moved(source, *v);
  trial.Arrived(c.node, &pending.use);
  *cluster = std::move(trial);
  *room = Room{.node = c.node, .placement = booked->placement, .moves = std::move(moves)};
  return true;
}

// The nodes where evictions may make room for `pending`, best first, and how many refuse it
// whatever moves (*refused).
std::vector<Candidate> CandidatesFor(const PodRequest& request, const Pending& pending, const DefragOptions& options,
                                     const Overlay& cluster, const MoveRules& rules, size_t* refused) {
  Planner planner(options.placement);
  VictimFinder finder(options.placement);
  Viewer viewer = Viewer::Of(*pending.pod);
  std::vector<Candidate> candidates;
  for (size_t i = 0; i < cluster.size(); ++i) {
    if (!ServesPods(cluster.node(i)) || !pending.MayGo(cluster.node(i))) continue;
    const NodeState& node = cluster.node(i);
    if (node.node.schedulability.ready == false || !NodeSelectionProblem(pending.pod->constraints, node.node).empty()) {
      ++*refused;  // no eviction makes kube-scheduler take the pod there
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
  return candidates;
}

}  // namespace

Allocation BookingOf(const Pod& pod, const std::string& node) {
  return Allocation{.pod_uid = pod.uid, .pod_namespace = pod.namespace_name, .pod_name = pod.name, .node_name = node,
                    .priority = pod.priority};
}

bool ServesPods(const NodeState& n) { return n.ready() && HasDevicePlugin(n.mode); }

void Overlay::Moved(size_t i, std::optional<size_t> j, std::string_view uid) {
  const NodeState& source = *input_->nodes[i];
  moved_.Move(source.node.name, j ? input_->nodes[*j]->node.name : "", source.uses != nullptr ? source.uses->Find(uid) : nullptr);
}

std::string Overlay::LandingProblemOf(size_t i, std::string_view uid, int32_t priority, size_t j) const {
  if (input_->ClosedToMoves(*input_->nodes[j], priority)) return kKeptForAGang;
  const NodeState& source = *input_->nodes[i];
  const PodUse* use = source.uses != nullptr ? source.uses->Find(uid) : nullptr;
  static const ResourceList kNothing;
  return LandingProblem(j, source.LabelsOf(uid), use != nullptr ? use->requests : kNothing, uid, priority);
}

bool MoveRules::Movable(const NodeState& node, const Allocation& a, DisruptionCounter* counter) const {
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

Pending Pending::Of(const Pod& pod) {
  return Pending{.pod = &pod, .labels = LabelsOf(pod), .use = PodUse{.uid = pod.uid, .requests = EffectiveRequests(pod)}};
}

double Fullness(const NodeState& n) {
  if (HasPayload(n.mode, Payload::kShares)) return n.capacity_milli > 0 ? static_cast<double>(n.used_milli) / n.capacity_milli : 1;
  return n.whole_total > 0 ? static_cast<double>(n.whole_used) / n.whole_total : 1;
}

std::optional<Allocation> Placed(Planner& planner, const PodRequest& request, Allocation a, const NodeState& n) {
  NodeVerdict v = planner.Evaluate(request, n, /*want_placement=*/true);
  if (!v.fits()) return std::nullopt;
  a.node_name = n.node.name;
  a.mode = n.mode;
  a.placement = std::move(v.placement);
  a.origin = AllocationOrigin::kCommitted;
  return a;
}

std::optional<Allocation> Land(Planner& planner, const PodRequest& request, Allocation a, size_t j, Overlay* cluster,
                               const Viewer* viewer) {
  std::optional<Allocation> placed = Placed(planner, request, std::move(a), ViewOf(cluster->node(j), viewer).state());
  if (placed) cluster->Set(j, viewer != nullptr ? cluster->Booked(j, *placed, *viewer) : cluster->With(j, *placed));
  return placed;
}

DefragMove MoveOf(const NodeState& source, const Allocation& was, const Allocation& now, const MoveRules& rules) {
  const PodLabels* labels = rules.LabelsOf(source, was);
  return DefragMove{.pod = was.pod_namespace + "/" + was.pod_name, .uid = was.pod_uid, .priority = was.priority,
                    .from = was.node_name, .to = now.node_name, .placement = now.placement,
                    .uses_budget = rules.UsesBudget(source, was), .controller_uid = labels != nullptr ? labels->controller_uid : ""};
}

double PctOf(const Overlay& cluster, const scoring::TargetWorkload* workload) {
  if (workload == nullptr) return 0;
  std::vector<const NodeState*> nodes;
  for (size_t i = 0; i < cluster.size(); ++i) nodes.push_back(&cluster.node(i));
  return FragmentedPct(nodes, *workload);
}

bool BookWhereItFits(const PodRequest& request, const Pending& pending, const PlacementOptions& options, Overlay* cluster,
                     Room* room) {
  const Pod& pod = *pending.pod;
  Planner planner(options);
  Accepts fits_now = [&](size_t j) {
    return pending.MayGo(cluster->node(j)) &&
           cluster->LandingProblem(j, &pending.labels, pending.use.requests, pod.uid, pod.priority).empty();
  };
  Viewer viewer = Viewer::Of(pod);  // its own hold, its controller's and those of lower priority are room for it
  std::optional<size_t> now = Fullest(planner, request, *cluster, fits_now, &viewer);
  if (!now) return false;
  std::optional<Allocation> booked = Land(planner, request, BookingOf(pod, cluster->node(*now).node.name), *now, cluster, &viewer);
  cluster->Arrived(*now, &pending.use);
  *room = Room{.node = *now, .placement = booked->placement};
  return true;
}

bool RoomFor(const PodRequest& request, const Pending& pending, const DefragOptions& options, Overlay* cluster,
             MoveRules* rules, Room* room) {
  if (BookWhereItFits(request, pending, options.placement, cluster, room)) return true;
  Planner planner(options.placement);
  size_t refused = 0;
  std::vector<Candidate> candidates = CandidatesFor(request, pending, options, *cluster, *rules, &refused);
  for (size_t k = 0; k < candidates.size() && k < options.max_tries; ++k) {
    if (TryCandidate(candidates[k], request, pending, cluster, rules, planner, room)) return true;
  }
  room->reason = candidates.empty()
                     ? fmt::format("no node makes room with at most {} moves of pods that may move", options.max_moves)
                     : fmt::format("{} node{} make room, but their pods find no other node, or the pod does not fit there besides GPUs",
                                   candidates.size(), candidates.size() == 1 ? "" : "s");
  if (refused > 0) {
    room->reason += fmt::format("; {} node{} refuse the pod whatever moves (not Ready, cordoned, taints, node selection)", refused,
                                refused == 1 ? "" : "s");
  }
  return false;
}

}  // namespace gpusched::placement::defrag
