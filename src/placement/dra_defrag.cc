// File: dra_defrag.cc
//
// Making room for a claim pod: per ready nvidia-dra node the pods that must leave, a cheap count of
// free devices before any what-if, then the pending pod allocated with the victims' claims
// deallocated and each replacement landed where the DRA planner ranks best.
#include "gpusched/placement/dra_defrag.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "gpusched/dra/allocator/pools.h"
#include "gpusched/dra/extended_resources.h"
#include "gpusched/placement/dra_victims.h"
#include "gpusched/placement/move_rules.h"
#include "gpusched/placement/node_fit.h"
#include "gpusched/placement/victims.h"

namespace gpusched::placement {
namespace {

bool ServesClaims(const NodeState& n) { return n.ready() && n.mode == ClaimsMode(); }

// The allocated claims each pod reserves, by pod UID: one pass over the cluster's claims.
using ClaimsByPod = std::unordered_map<std::string, std::vector<const dra::ResourceClaim*>>;
ClaimsByPod IndexClaims(const dra::ClusterState& state) {
  ClaimsByPod out;
  for (const auto& [key, claim] : state.claims()) {
    if (!claim.allocation) continue;
    for (const dra::ConsumerRef& r : claim.reserved_for) out[r.uid].push_back(&claim);
  }
  return out;
}

// The allocated claims reserved by `uid`. *movable: every one was generated for the pod (from a
// template: deleted with it, and made anew for its replacement) and is reserved by it alone. A
// named claim outlives its pod: it stays allocated until the pod object is gone, and the
// replacement, naming the same claim, would be sent back to the same node.
std::vector<const dra::ResourceClaim*> ClaimsOf(const ClaimsByPod& index, const std::string& uid, bool* movable) {
  auto it = index.find(uid);
  std::vector<const dra::ResourceClaim*> out = it == index.end() ? std::vector<const dra::ResourceClaim*>{} : it->second;
  *movable = std::all_of(out.begin(), out.end(), [&](const dra::ResourceClaim* c) {
    return c->reserved_for.size() == 1 && c->owner_pod_uid == uid;
  });
  return out;
}

// The devices ("driver/pool/device") of a verdict's choice: ranked where there is one.
Placement DevicesOf(const DraVerdict& v) {
  Placement p{.kind = ClaimsKind()};
  for (const dra::AllocationResult& r : v.ranked.empty() ? v.compat : v.ranked) {
    for (const dra::DeviceResult& d : r.results) p.devices.push_back(dra::DeviceName(d.id));
  }
  return p;
}

void Hold(const DraVerdict& v, dra::AllocatedDevices* held) {
  for (const dra::AllocationResult& r : v.ranked.empty() ? v.compat : v.ranked) held->Add(r);
}

// A lower bound of the devices `claims` need on one node: each request's count (ExactCount), one
// for "All", none for adminAccess; a prioritized list its least.
int64_t LeastDevices(const std::vector<const dra::ResourceClaim*>& claims) {
  auto least = [](const dra::ExactRequest& r) -> int64_t {
    if (r.admin_access.value_or(false)) return 0;
    return r.allocation_mode == "ExactCount" ? r.count : 1;
  };
  int64_t out = 0;
  for (const dra::ResourceClaim* c : claims) {
    for (const dra::DeviceRequest& r : c->requests) {
      if (r.exactly) {
        out += least(*r.exactly);
      } else if (!r.first_available.empty()) {
        int64_t fewest = INT64_MAX;
        for (const dra::ExactRequest& sub : r.first_available) fewest = std::min(fewest, least(sub));
        out += fewest;
      }
    }
  }
  return out;
}

// An upper bound of the devices `node` can still give: those it sees that no claim holds
// exclusively (shared and partitionable devices counted as free); unbounded when one of them
// allows several allocations (it may serve any number of claims).
constexpr int64_t kUnbounded = INT64_MAX / 4;
int64_t FreeDevices(const dra::ClusterState& state, const NodeState& node) {
  dra::NodePoolsPtr pools = state.PoolsFor(dra::NodeInfo{.name = node.node.name, .labels = &node.node.labels});
  int64_t free = 0;
  for (const dra::Candidate& c : pools->candidates) {
    if (c.device->allow_multiple_allocations) return kUnbounded;
    free += state.allocated().exclusive.contains(c.id) ? 0 : 1;
  }
  return free;
}

// One node where evictions make room, and what orders it among the others.
struct DraCandidate {
  const NodeState* node = nullptr;
  std::vector<AllocationPtr> victims;
  int64_t budget_uses = 0;
  int32_t top_priority = INT32_MIN;

  auto Key() const { return std::make_tuple(victims.size(), budget_uses, top_priority, node->node.name); }
};

// The pods preempt would evict on `node` for `planner`'s pod, every priority a candidate, if they
// may all move (at most max_moves); nullopt otherwise.
std::optional<DraCandidate> CandidateOn(const NodeState& node, const DraPlanner& planner, const Pod& pod, const ClaimsByPod& claims,
                                     const DraDefragInput& in, const DefragOptions& options, RefusedPods* refused) {
  DisruptionCounter counter(in.cluster.budgets, BudgetReading::kEviction);
  auto movable = [&](const Allocation& a) {
    bool generated = false;
    ClaimsOf(claims, a.pod_uid, &generated);
    std::string why = generated ? WhyNotMovable(node, a, in.cluster.budgets.get()) : "a claim not generated for it alone";
    if (!why.empty()) refused->Add(why, a.pod_uid);
    return why.empty();
  };
  VictimRules rules{.priority = INT32_MAX, .viewer = Viewer::Of(pod), .known_only = true,
                    .violates_pdb = [&](const Allocation& a) { return !movable(a) || counter.Evict(a.pod_name, node.LabelsOf(a.pod_uid)); }};
  VictimChoice choice = ChooseDraVictims(planner, *in.state, node, rules);
  if (!choice.helps || choice.pdb_violations > 0 || choice.victims.empty() ||
      choice.victims.size() > static_cast<size_t>(options.max_moves)) {
    return std::nullopt;
  }
  DraCandidate c{.node = &node};
  DisruptionCounter budgets(in.cluster.budgets, BudgetReading::kEviction);
  for (const Allocation* v : choice.victims) {
    c.victims.push_back(std::make_shared<const Allocation>(*v));
    c.budget_uses += budgets.Covers(v->pod_name, node.LabelsOf(v->pod_uid)) ? 1 : 0;
    c.top_priority = std::max(c.top_priority, v->priority);
  }
  return c;
}

// The cluster's DRA objects with the claims `gone` deallocated and reserved by nobody.
dra::ClusterState Deallocated(const dra::ClusterState& state, const std::set<const dra::ResourceClaim*>& gone) {
  std::vector<dra::SlicePtr> slices;
  for (const auto& s : state.slices().all()) slices.push_back(s->shared());
  std::vector<dra::DeviceClass> classes;
  for (const auto& [name, c] : state.classes()) classes.push_back(c);
  std::vector<dra::ResourceClaim> claims;
  for (const auto& [key, claim] : state.claims()) {
    claims.push_back(claim);
    if (gone.contains(&claim)) {
      claims.back().allocation.reset();
      claims.back().reserved_for.clear();
    }
  }
  return dra::ClusterState(std::move(slices), std::move(classes), std::move(claims), {}, nullptr, state.admin_namespaces());
}

// The replacement of `victim`: a pod of its name, UID, priority and controller that asks for
// `claims` (deallocated in the what-if state) by name.
Pod Replacement(const Allocation& victim, const std::vector<const dra::ResourceClaim*>& claims, const PodLabels* labels) {
  Pod p;
  p.uid = victim.pod_uid;
  p.namespace_name = victim.pod_namespace;
  p.name = victim.pod_name;
  p.priority = victim.priority;
  if (labels != nullptr) p.controller_uid = labels->controller_uid;
  for (size_t i = 0; i < claims.size(); ++i) {
    p.resource_claims.push_back(PodClaimRef{.name = fmt::format("claim-{}", i), .claim_name = claims[i]->name});
  }
  return p;
}

// The ready nvidia-dra node other than `from` that the planner ranks best for its pod with `held`
// taken, and the verdict there; nullopt if none takes it.
std::optional<std::pair<const NodeState*, DraVerdict>> BestLanding(const DraPlanner& planner, const NodeState* from,
                                                                   const dra::AllocatedDevices& held, const DefragInput& cluster,
                                                                   const std::function<bool(const NodeState&)>& accepts) {
  std::optional<std::pair<const NodeState*, DraVerdict>> best;
  for (const NodeState* n : cluster.nodes) {
    if (n == from || !ServesClaims(*n) || !accepts(*n)) continue;
    DraVerdict v = planner.Evaluate(WhatIf(*n).HoldingDevices(held), /*rank=*/true);
    if (v.fits() && (!best || v.score > best->second.score)) best.emplace(n, std::move(v));
  }
  return best;
}

// What a DRA plan weighs before building a what-if state: the devices free on each ready
// nvidia-dra node (FreeDevices), and which node each pool is pinned to.
struct FreeMap {
  std::map<const NodeState*, int64_t> by_node;
  std::map<std::pair<std::string, std::string>, std::string> pinned;  // (driver, pool) -> node
};

// True unless the devices free on the nodes other than `at` cannot take the claims of the
// victims: a cheap test before the what-if state is built. The devices the victims free outside
// pools pinned to `at` count as free everywhere (other nodes may see those pools).
bool MayLand(const std::vector<std::vector<const dra::ResourceClaim*>>& claims_of, const NodeState* at, const FreeMap& free) {
  int64_t freed = 0;
  for (const auto& claims : claims_of) {
    for (const dra::ResourceClaim* c : claims) {
      for (const dra::DeviceResult& r : c->allocation->results) {
        auto pin = free.pinned.find({r.id.driver, r.id.pool});
        freed += pin != free.pinned.end() && pin->second == at->node.name ? 0 : 1;
      }
    }
  }
  int64_t elsewhere = freed, most = freed;
  for (const auto& [node, n] : free.by_node) {
    if (node == at) continue;
    elsewhere = std::min(kUnbounded, elsewhere + n);
    most = std::max(most, std::min(kUnbounded, n + freed));
  }
  int64_t need = 0;
  for (const auto& claims : claims_of) {
    int64_t one = LeastDevices(claims);
    if (one > most) return false;
    need += one;
  }
  return need <= elsewhere;
}

// Tries candidate `c`: the pending pod's claims on its node once its victims' claims are
// deallocated, then each victim's replacement (most devices first) on the best other node. Fills
// *plan and returns true if all land. `free`: FreeDevices of every ready nvidia-dra node.
bool TryCandidate(const DraCandidate& c, const Pod& pod, const DraDefragInput& in, const ClaimsByPod& claims, const FreeMap& free,
                  DefragPlan* plan) {
  std::set<const dra::ResourceClaim*> gone;
  std::vector<std::vector<const dra::ResourceClaim*>> claims_of;
  for (const AllocationPtr& v : c.victims) {
    bool movable = false;
    claims_of.push_back(ClaimsOf(claims, v->pod_uid, &movable));
    gone.insert(claims_of.back().begin(), claims_of.back().end());
  }
  if (!MayLand(claims_of, c.node, free)) return false;
  dra::ClusterState whatif = Deallocated(*in.state, gone);
  dra::AllocatedDevices held = whatif.allocated();
  DraPlanner pending(whatif, pod, in.programs, in.dra, in.special);
  DraVerdict here = pending.Evaluate(WhatIf(*c.node).HoldingDevices(held), /*rank=*/true);
  if (!here.fits()) return false;
  Hold(here, &held);
  std::vector<size_t> order(c.victims.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return c.victims[a]->placement.devices.size() > c.victims[b]->placement.devices.size();
  });
  std::vector<DefragMove> moves;
  DisruptionCounter budgets(in.cluster.budgets, BudgetReading::kEviction);
  MovedUses moved;
  for (size_t i : order) {
    const Allocation& v = *c.victims[i];
    const PodLabels* labels = c.node->LabelsOf(v.pod_uid);
    const PodUse* use = c.node->uses != nullptr ? c.node->uses->Find(v.pod_uid) : nullptr;
    Pod replacement = Replacement(v, claims_of[i], labels);
    DraPlanner planner(whatif, replacement, in.programs, in.dra);
    static const ResourceList kNothing;
    auto accepts = [&](const NodeState& n) {
      return !in.cluster.ClosedToMoves(n, v.priority) && moved.LandingProblem(n, labels, use != nullptr ? use->requests : kNothing, v.pod_uid, v.priority).empty();
    };
    auto landing = BestLanding(planner, c.node, held, in.cluster, accepts);
    if (!landing) return false;
    moved.Move(c.node->node.name, landing->first->node.name, use);
    Hold(landing->second, &held);
    moves.push_back(DefragMove{.pod = v.pod_namespace + "/" + v.pod_name, .uid = v.pod_uid, .priority = v.priority,
                               .from = c.node->node.name, .to = landing->first->node.name,
                               .placement = DevicesOf(landing->second), .uses_budget = budgets.Covers(v.pod_name, labels),
                               .controller_uid = labels != nullptr ? labels->controller_uid : ""});
  }
  PodLabels mine = LabelsOf(pod);
  if (!moved.LandingProblem(*c.node, &mine, EffectiveRequests(pod), pod.uid, pod.priority).empty()) return false;
  plan->fits = true;
  plan->node = c.node->node.name;
  plan->placement = DevicesOf(here);
  plan->moves = std::move(moves);
  return true;
}

}  // namespace

DefragPlan MakeRoomForClaims(const Pod& pod, const DraDefragInput& in, const DefragOptions& options) {
  DefragPlan plan;
  plan.frag_before_pct = plan.frag_after_pct = in.cluster.workload != nullptr ? FragmentedPct(in.cluster.nodes, *in.cluster.workload) : 0;
  DraPlanner planner(*in.state, pod, in.programs, in.dra, in.special);
  if (!planner.problem().empty()) {
    plan.reason = planner.problem();
    return plan;
  }
  if (!planner.allocated().empty()) {
    plan.reason = fmt::format("pod {}/{} has claims allocated already: they decide its node", pod.namespace_name, pod.name);
    return plan;
  }
  plan.not_judged = UnjudgedBesidesHostPorts(pod.constraints);
  PodLabels mine = LabelsOf(pod);
  ResourceList requests = EffectiveRequests(pod);
  auto fits_now = [&](const NodeState& n) { return MovedUses().LandingProblem(n, &mine, requests, pod.uid, pod.priority).empty(); };
  if (auto now = BestLanding(planner, nullptr, in.state->allocated(), in.cluster, fits_now)) {
    plan.fits = true;
    plan.node = now->first->node.name;
    plan.placement = DevicesOf(now->second);
    return plan;
  }
  std::vector<DraCandidate> candidates;
  ClaimsByPod claims = IndexClaims(*in.state);
  FreeMap free;
  for (const auto& slice : in.state->slices().all()) {
    if (!slice->slice().node_name.empty()) free.pinned[{slice->slice().driver, slice->slice().pool}] = slice->slice().node_name;
  }
  RefusedPods refused;
  size_t refused_nodes = 0;
  std::vector<std::string> mapped = in.special != nullptr ? dra::MappedResources(pod, in.state->classes()) : std::vector<std::string>{};
  for (const NodeState* n : in.cluster.nodes) {
    if (!ServesClaims(*n)) continue;
    free.by_node[n] = FreeDevices(*in.state, *n);
    if (in.special != nullptr && dra::ServedOn(n->node, mapped).size() != mapped.size()) continue;  // its device plugin's
    if (n->node.schedulability.ready == false || !NodeSelectionProblem(pod.constraints, n->node).empty()) {
      ++refused_nodes;  // no eviction makes kube-scheduler take the pod there
      continue;
    }
    if (std::optional<DraCandidate> c = CandidateOn(*n, planner, pod, claims, in, options, &refused)) candidates.push_back(std::move(*c));
  }
  std::sort(candidates.begin(), candidates.end(), [](const DraCandidate& a, const DraCandidate& b) { return a.Key() < b.Key(); });
  for (size_t k = 0; k < candidates.size() && k < options.max_tries; ++k) {
    if (TryCandidate(candidates[k], pod, in, claims, free, &plan)) return plan;
  }
  plan.reason = candidates.empty()
                    ? fmt::format("no nvidia-dra node makes room with at most {} moves of pods that may move", options.max_moves)
                    : fmt::format("{} node{} make room, but their pods' claims find no other node, or the pod does not fit "
                                  "there besides GPUs", candidates.size(), candidates.size() == 1 ? "" : "s");
  if (refused_nodes > 0) {
    plan.reason += fmt::format("; {} node{} refuse the pod whatever moves (not Ready, cordoned, taints, node selection)",
                               refused_nodes, refused_nodes == 1 ? "" : "s");
  }
  plan.reason += refused.Text();
  return plan;
}

}  // namespace gpusched::placement
