// File: gang_planner.cc
//
// The gang's greedy search: members by decreasing GPU demand, each on the view of the cluster
// the earlier members left (edited nodes copied once per member placed there), preferring the
// plan's nodes, then a node that holds every member left, then the policy's best score; members
// whose devices come from DRA by the DRA planner's verdicts and scores.
#include "gpusched/placement/gang_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <list>
#include <map>
#include <numeric>
#include <optional>
#include <set>

#include "gpusched/placement/extended_planners.h"
#include "gpusched/placement/node_fit.h"
#include "gpusched/placement/node_ranking.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/score_cache.h"
#include "gpusched/placement/what_if.h"

namespace gpusched::placement {
namespace {

// What is free of a node's GPUs, in the same unit: idle whole GPUs and free mGPU compute.
int64_t FreeMilli(const NodeState& n) {
  return std::max<int64_t>(n.whole_total - n.whole_used, 0) * 1000 + std::max<int64_t>(n.capacity_milli - n.used_milli, 0);
}

// The DRA planners that judge a member: its claims' on every node (claims only), or its special
// claim's where DRA serves its extended resources (KEP 5004); none for other members.
class MemberDra {
 public:
  MemberDra(const GangMember& m, const GangDra& dra) {
    if (dra.state == nullptr) return;
    if (m.request.claims_only()) {
      claims_ = std::make_unique<DraPlanner>(*dra.state, *m.pod, dra.programs, dra.options);
      return;
    }
    if (!m.request.device_plugin()) return;
    extended_ = std::make_unique<ExtendedPlanners>(*dra.state, *m.pod, dra.programs, dra.options, dra.extended_resources);
    if (!extended_->any()) extended_.reset();
  }

  bool any() const { return claims_ != nullptr || extended_ != nullptr; }
  // Why the member's claims cannot be judged now (one missing or not generated), or "".
  std::string problem() const { return claims_ != nullptr ? claims_->problem() : ""; }
  // The planner for `node`, or null where the device plugin serves the member.
  const DraPlanner* For(const NodeState& node) const { return claims_ != nullptr ? claims_.get() : extended_ ? extended_->For(node) : nullptr; }

 private:
  std::unique_ptr<DraPlanner> claims_;
  std::unique_ptr<ExtendedPlanners> extended_;
};

// Why a member cannot be planned at all, or "".
std::string Unplannable(const GangMember& m, const GangDra& dra) {
  const Pod& pod = *m.pod;
  if (!m.request.schedulable()) return fmt::format("{}/{}: {}", pod.namespace_name, pod.name, m.request.RefusalReason());
  if (!m.request.claims_only()) return "";
  if (dra.state == nullptr) return fmt::format("{}/{} has ResourceClaims, and no DRA state is known", pod.namespace_name, pod.name);
  std::string problem = MemberDra(m, dra).problem();
  return problem.empty() ? "" : fmt::format("{}/{}: {}", pod.namespace_name, pod.name, problem);
}

// The devices of a DRA verdict's ranked choice that a hold can keep: not those taken with
// adminAccess (which holds nothing) nor shares of a shareable device (a hold would keep it whole).
Placement RankedDevices(const DraVerdict& v) {
  Placement devices{.kind = ClaimsKind()};
  for (const dra::AllocationResult& r : v.ranked) {
    for (const dra::DeviceResult& d : r.results) {
      if (!d.admin_access && d.share_id.empty()) devices.devices.push_back(dra::DeviceName(d.id));
    }
  }
  return devices;
}

// The devices a set of claims asks: each request's count (1 for one of allocation mode All, or a
// firstAvailable list: its first choice's).
int64_t ClaimDevices(const std::vector<dra::ResourceClaim>& claims) {
  int64_t n = 0;
  for (const dra::ResourceClaim& c : claims) {
    for (const dra::DeviceRequest& r : c.requests) {
      const dra::ExactRequest* e = r.exactly ? &*r.exactly : r.first_available.empty() ? nullptr : &r.first_available[0];
      n += e != nullptr && e->allocation_mode == "ExactCount" ? e->count : 1;
    }
  }
  return n;
}

// What decides a member's devices besides the node, for members that share FittingRest: its
// request's shape and every resource each of its containers asks (which a KEP 5004 special claim
// is built from).
std::string ContainersKey(const GangMember& m) {
  std::string key = ShapeKey(m.request);
  for (const std::vector<Container>* list : {&m.pod->init_containers, &m.pod->containers}) {
    for (const Container& c : *list) {
      key += fmt::format("|{}{} gpu={}/{}", c.name, c.sidecar ? "+" : "", c.requests.nvidia_gpus.value_or(-1),
                         c.limits.nvidia_gpus.value_or(-1));
      for (const auto& [name, amount] : c.other_requests.items()) key += fmt::format(",{}={}", name, amount);
    }
  }
  return key;
}

class GangSearch {
 public:
  GangSearch(std::span<const NodeState* const> nodes, const PlacementOptions& options, const scoring::Scorer& scorer,
             const GangDra& dra)
      : dra_(dra),
        view_(nodes.begin(), nodes.end()),
        in_plan_(nodes.size(), false),
        order_(nodes.size()),
        generations_(nodes.size()),
        planner_(options),
        scorer_(scorer) {
    std::iota(order_.begin(), order_.end(), 0);
    for (size_t i = 0; i < nodes.size(); ++i) generations_[i] = nodes[i] != nullptr ? nodes[i]->generation : 0;
  }

  // Places `m` on the view, `remaining` the GPU demand of the members not placed yet, its own
  // included; returns its slot, or nullopt if it fits on no node.
  std::optional<GangSlot> Place(const GangMember& m, int64_t remaining) {
    ResourceList requests = EffectiveRequests(*m.pod);
    MemberDra dra(m, dra_);
    cache_of_ = nullptr;  // a new member's planner may reuse the last one's address
    std::optional<size_t> pos;
    Placement placement;
    if (dra.any()) {
      std::optional<Candidate> c = ChooseByDevices(m, requests, dra);
      if (c) {
        pos = c->pos;
        placement = c->verdict ? RankedDevices(*c->verdict) : planner_.Evaluate(m.request, *view_[*pos], /*want_placement=*/true).placement;
      }
    } else if (m.request.asks_gpu()) {
      pos = ChooseForGpus(m, requests, remaining);
      if (pos) placement = planner_.Evaluate(m.request, *view_[*pos], /*want_placement=*/true).placement;
    } else {
      pos = ChooseWithoutGpus(m, requests);
    }
    if (!pos) return std::nullopt;
    GangSlot slot{.pod_uid = m.pod->uid, .node = view_[*pos]->node.name, .placement = placement};
    Book(*pos, m, std::move(placement), std::move(requests));
    return slot;
  }

  size_t nodes_used() const { return static_cast<size_t>(std::count(in_plan_.begin(), in_plan_.end(), true)); }

 private:
  bool FitsBesides(const GangMember& m, const ResourceList& requests, size_t pos) const {
    return JudgeNodeFit(*m.pod, requests, *view_[pos]).outcome == Outcome::kFits;
  }

  // The plan's nodes where the GPUs fit, best score first; else, for the fewest nodes, one whose
  // free GPUs hold every member left (the best scored of those), or the one with most free.
  std::optional<size_t> ChooseForGpus(const GangMember& m, const ResourceList& requests, int64_t remaining) {
    // Members of one shape share their verdicts: only the nodes the plan edited are judged again.
    CachedScores cached{.cache = &caches_[ShapeKey(m.request)], .generations = generations_};
    std::vector<RankedNode> fits =
        FilterAndRank(planner_, scorer_, m.request, view_, order_, /*seed=*/0, [](size_t, NodeVerdict&&) {}, cached);
    auto by_score = [](const RankedNode& a, const RankedNode& b) { return a.score != b.score ? a.score > b.score : a.pos < b.pos; };
    std::vector<RankedNode> plan, rest;
    for (const RankedNode& f : fits) (in_plan_[f.pos] ? plan : rest).push_back(f);
    std::sort(plan.begin(), plan.end(), by_score);
    for (const RankedNode& f : plan) {
      if (FitsBesides(m, requests, f.pos)) return f.pos;
    }
    auto better = [&](const RankedNode& a, const RankedNode& b) {
      int64_t fa = FreeMilli(*view_[a.pos]), fb = FreeMilli(*view_[b.pos]);
      bool ha = fa >= remaining, hb = fb >= remaining;
      if (ha != hb) return ha;
      if (!ha && fa != fb) return fa > fb;
      return by_score(a, b);
    };
    while (!rest.empty()) {  // the best first; usually the first fits beside the others too
      auto best = std::min_element(rest.begin(), rest.end(), better);
      if (FitsBesides(m, requests, best->pos)) return best->pos;
      *best = rest.back();
      rest.pop_back();
    }
    return std::nullopt;
  }

  // A node a DRA member fits on, and the verdict there (null for the device plugin's).
  struct Candidate {
    size_t pos = 0;
    double score = 0;
    std::shared_ptr<const DraVerdict> verdict;
  };

  static bool ByScore(const Candidate& a, const Candidate& b) { return a.score != b.score ? a.score > b.score : a.pos < b.pos; }

  // The plan's nodes where the member's devices fit, best scored first (ranked verdicts: they are
  // few), then the other nodes where they fit, in the snapshot's order (a first fit: ranking
  // every node took four times as long as judging it); the first where the rest fits too.
  std::optional<Candidate> ChooseByDevices(const GangMember& m, const ResourceList& requests, const MemberDra& dra) {
    std::vector<Candidate> plan;
    for (size_t pos : plan_nodes_) {  // ranked where it fits: the plan's nodes fill up
      if (!JudgeDevices(m, dra, pos, /*rank=*/false)) continue;
      if (std::optional<Candidate> c = JudgeDevices(m, dra, pos, /*rank=*/true)) plan.push_back(std::move(*c));
    }
    std::sort(plan.begin(), plan.end(), ByScore);
    for (const Candidate& c : plan) {
      if (FitsBesides(m, requests, c.pos)) return c;
    }
    for (size_t pos : FittingRest(m, dra)) {
      if (in_plan_[pos] || !FitsBesides(m, requests, pos)) continue;  // taken by the plan since
      if (std::optional<Candidate> c = JudgeDevices(m, dra, pos, /*rank=*/true)) return c;
    }
    return std::nullopt;
  }

  // The nodes outside the plan where the member's devices fit, judged once for all members of its
  // judgement (claim shape, or for KEP 5004 its containers' requests, with priority and
  // controller, which decide the holds that bind it): a node outside the plan is as the cluster
  // has it, so its verdict stays; the nodes the plan took since are skipped by the caller.
  const std::vector<size_t>& FittingRest(const GangMember& m, const MemberDra& dra) {
    std::string shape = m.request.claims_only()        ? "claims " + ClaimsShapeKey(m, dra)
                        : m.pod->resource_claims.empty() ? "plugin " + ContainersKey(m)
                                                        : "pod " + m.pod->uid;
    auto [it, fresh] = fitting_rest_.try_emplace(fmt::format("{} {} {}", shape, m.pod->priority, m.pod->controller_uid));
    if (!fresh) return it->second;
    for (size_t pos = 0; pos < view_.size(); ++pos) {
      if (view_[pos] != nullptr && !in_plan_[pos] && JudgeDevices(m, dra, pos, /*rank=*/false)) it->second.push_back(pos);
    }
    return it->second;
  }

  // What identifies the judgement of a member with claims alone: its claims' shape (by the
  // address of that shape's verdict cache) when verdicts can be shared, else the member itself.
  std::string ClaimsShapeKey(const GangMember& m, const MemberDra& dra) {
    for (const NodeState* n : view_) {
      if (n == nullptr) continue;
      const DraPlanner* planner = dra.For(*n);
      if (planner != nullptr && planner->cacheable()) return fmt::format("{}", static_cast<const void*>(DraCache(*planner)));
      break;
    }
    return "pod " + m.pod->uid;
  }

  // The member on the view's node at `pos`: the DRA planner's verdict (with its ranked choice when
  // `rank`) where DRA serves it, shared by members of one claim shape while the node is unedited;
  // else the device plugin's, unscored.
  std::optional<Candidate> JudgeDevices(const GangMember& m, const MemberDra& dra, size_t pos, bool rank) {
    const NodeState& node = *view_[pos];
    if (const DraPlanner* planner = dra.For(node)) {
      DraVerdictCache* cache = planner->cacheable() ? DraCache(*planner) : nullptr;
      std::shared_ptr<const DraVerdict> v = planner->Evaluate(node, static_cast<uint32_t>(pos), rank, cache);
      if (!v->fits()) return std::nullopt;
      return Candidate{.pos = pos, .score = v->score, .verdict = std::move(v)};
    }
    if (m.request.claims_only() || !planner_.Evaluate(m.request, node, /*want_placement=*/false).fits()) return std::nullopt;
    return Candidate{.pos = pos};
  }

  // The verdict cache of `planner`'s claim shape, looked up once per planner.
  DraVerdictCache* DraCache(const DraPlanner& planner) {
    if (&planner == cache_of_) return cache_;
    auto it = std::find_if(dra_caches_.begin(), dra_caches_.end(), [&](const auto& c) { return c.first == planner.shape(); });
    if (it == dra_caches_.end()) it = dra_caches_.insert(dra_caches_.end(), {planner.shape(), DraVerdictCache{}});
    cache_of_ = &planner;
    cache_ = &it->second;
    return cache_;
  }

  // A member without GPUs: the first of the plan's nodes, then of all nodes, where it fits.
  std::optional<size_t> ChooseWithoutGpus(const GangMember& m, const ResourceList& requests) const {
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t pos = 0; pos < view_.size(); ++pos) {
        if (view_[pos] == nullptr || in_plan_[pos] != (pass == 0)) continue;
        if (FitsBesides(m, requests, pos)) return pos;
      }
    }
    return std::nullopt;
  }

  // Books the member on a copy of its node, which the view sees from now on: its GPUs as an
  // allocation, its DRA devices as a hold that binds every later member, what else it asks as a
  // pod nominated there that every later member counts.
  void Book(size_t pos, const GangMember& m, Placement placement, ResourceList requests) {
    const NodeState& base = *view_[pos];
    const Pod& pod = *m.pod;
    NodeState next;
    if (placement.empty()) {
      next = base;
    } else if (placement.kind == ClaimsKind()) {
      next = base;
      AddHold(Allocation{.pod_uid = pod.uid, .pod_namespace = pod.namespace_name, .pod_name = pod.name,
                         .node_name = base.node.name, .mode = ClaimsMode(), .placement = std::move(placement),
                         .origin = AllocationOrigin::kHeld, .priority = INT32_MAX},
              &next);
    } else {
      Allocation a{.pod_uid = pod.uid, .pod_namespace = pod.namespace_name, .pod_name = pod.name, .node_name = base.node.name,
                   .mode = ModeServing(m.request.kind), .placement = std::move(placement),
                   .origin = AllocationOrigin::kCommitted, .priority = pod.priority};
      next = std::move(WhatIf(base).With(std::move(a))).Take();
    }
    next.nominated.push_back(PodUse{.uid = pod.uid, .name = pod.name, .priority = INT32_MAX, .requests = std::move(requests),
                                    .labels = std::make_shared<const PodLabels>(LabelsOf(pod))});
    next.generation = generations_[pos] = ++edited_generation_;
    edited_.push_back(std::move(next));
    view_[pos] = &edited_.back();
    if (!in_plan_[pos]) plan_nodes_.push_back(pos);
    in_plan_[pos] = true;
  }

  const GangDra& dra_;
  std::vector<const NodeState*> view_;
  std::vector<bool> in_plan_;
  std::vector<uint32_t> order_;
  // The generation of each node of the view: the inventory's, or a new one for an edited copy.
  std::vector<uint64_t> generations_;
  uint64_t edited_generation_ = uint64_t{1} << 62;  // above any the inventory gives
  std::map<std::string, ScoreCache> caches_;        // by ShapeKey
  // By DraPlanner::shape(): a list (stable addresses), for the few shapes of one gang.
  std::list<std::pair<std::vector<dra::ResourceClaim>, DraVerdictCache>> dra_caches_;
  const DraPlanner* cache_of_ = nullptr;  // the planner whose cache DraCache found last
  std::vector<size_t> plan_nodes_;        // the positions in_plan_ marks, in the order taken
  std::map<std::string, std::vector<size_t>> fitting_rest_;  // FittingRest's, by judgement
  DraVerdictCache* cache_ = nullptr;
  std::deque<NodeState> edited_;  // stable addresses: view_ points into it
  Planner planner_;
  const scoring::Scorer& scorer_;
};

}  // namespace

int64_t GangDemand(const PodRequest& r) {
  int64_t d = r.whole_gpus * 1000;
  for (const MgpuContainerRequest& c : r.containers) d += c.milli_per_card * c.cards;
  return d;
}

int64_t GangDemand(const GangMember& m, const GangDra& dra) {
  if (!m.request.claims_only() || dra.state == nullptr) return GangDemand(m.request);
  DraPlanner planner(*dra.state, *m.pod, dra.programs, dra.options);
  return 1000 * ClaimDevices(planner.shape());
}

GangPlan PlanGang(std::span<const GangMember> members, std::span<const NodeState* const> nodes,
                  const PlacementOptions& options, const scoring::Scorer& scorer, const GangDra& dra) {
  GangPlan plan;
  if (members.empty()) {
    plan.reason = "no members to place";
    return plan;
  }
  for (const GangMember& m : members) {
    if (std::string why = Unplannable(m, dra); !why.empty()) {
      plan.reason = std::move(why);
      plan.unplannable = true;
      return plan;
    }
  }
  std::vector<size_t> order(members.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<int64_t> demand;
  for (const GangMember& m : members) demand.push_back(GangDemand(m, dra));
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return demand[a] > demand[b]; });
  GangSearch search(nodes, options, scorer, dra);
  std::vector<std::optional<GangSlot>> slots(members.size());
  int64_t remaining = std::accumulate(demand.begin(), demand.end(), int64_t{0});
  for (size_t i : order) {
    slots[i] = search.Place(members[i], remaining);
    remaining -= demand[i];
    if (!slots[i]) {
      const Pod& pod = *members[i].pod;
      plan.reason = fmt::format("{} of {} members fit; {}/{} fits on no node beside them", plan.placed, members.size(),
                                pod.namespace_name, pod.name);
      plan.failed = i;
      return plan;
    }
    ++plan.placed;
  }
  plan.fits = true;
  for (std::optional<GangSlot>& s : slots) plan.slots.push_back(std::move(*s));
  plan.nodes = search.nodes_used();
  return plan;
}

}  // namespace gpusched::placement
