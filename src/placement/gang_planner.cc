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

// The devices of a DRA verdict's ranked choice, as a hold keeps them.
Placement RankedDevices(const DraVerdict& v) {
  Placement devices{.kind = ClaimsKind()};
  for (const dra::AllocationResult& r : v.ranked) {
    for (const dra::DeviceResult& d : r.results) devices.devices.push_back(dra::DeviceName(d.id));
  }
  return devices;
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
    std::optional<size_t> pos;
    Placement placement;
    if (dra.any()) {
      std::optional<Candidate> c = ChooseByDevices(m, requests, dra);
      if (c) {
        pos = c->pos;
        placement = std::move(c->placement);
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

  // A node a DRA member fits on, and what it takes there.
  struct Candidate {
    size_t pos = 0;
    double score = 0;
    Placement placement;
  };

  // The plan's nodes where the member's devices fit, best scored first, then the others so; the
  // first where the rest fits too.
  std::optional<Candidate> ChooseByDevices(const GangMember& m, const ResourceList& requests, const MemberDra& dra) {
    std::vector<Candidate> plan, rest;
    for (size_t pos = 0; pos < view_.size(); ++pos) {
      if (view_[pos] == nullptr) continue;
      if (std::optional<Candidate> c = JudgeDevices(m, dra, pos)) (in_plan_[pos] ? plan : rest).push_back(std::move(*c));
    }
    auto by_score = [](const Candidate& a, const Candidate& b) { return a.score != b.score ? a.score > b.score : a.pos < b.pos; };
    for (std::vector<Candidate>* list : {&plan, &rest}) {
      std::sort(list->begin(), list->end(), by_score);
      for (Candidate& c : *list) {
        if (FitsBesides(m, requests, c.pos)) return std::move(c);
      }
    }
    return std::nullopt;
  }

  // The member on the view's node at `pos`: the DRA planner's ranked choice where DRA serves it
  // (its verdicts shared by members of one claim shape while the node is unedited), else the
  // device plugin's placement, unscored.
  std::optional<Candidate> JudgeDevices(const GangMember& m, const MemberDra& dra, size_t pos) {
    const NodeState& node = *view_[pos];
    if (const DraPlanner* planner = dra.For(node)) {
      DraVerdictCache* cache = planner->cacheable() ? &DraCache(planner->shape()) : nullptr;
      std::shared_ptr<const DraVerdict> v = planner->Evaluate(node, static_cast<uint32_t>(pos), /*rank=*/true, cache);
      if (!v->fits()) return std::nullopt;
      return Candidate{.pos = pos, .score = v->score, .placement = RankedDevices(*v)};
    }
    if (m.request.claims_only()) return std::nullopt;
    NodeVerdict v = planner_.Evaluate(m.request, node, /*want_placement=*/true);
    if (!v.fits()) return std::nullopt;
    return Candidate{.pos = pos, .placement = std::move(v.placement)};
  }

  DraVerdictCache& DraCache(const std::vector<dra::ResourceClaim>& shape) {
    for (auto& [s, cache] : dra_caches_) {
      if (s == shape) return cache;
    }
    return dra_caches_.emplace_back(shape, DraVerdictCache{}).second;
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
  std::vector<std::pair<std::vector<dra::ResourceClaim>, DraVerdictCache>> dra_caches_;  // by DraPlanner::shape()
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
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return GangDemand(members[a].request) > GangDemand(members[b].request); });
  GangSearch search(nodes, options, scorer, dra);
  std::vector<std::optional<GangSlot>> slots(members.size());
  int64_t remaining = 0;
  for (const GangMember& m : members) remaining += GangDemand(m.request);
  for (size_t i : order) {
    slots[i] = search.Place(members[i], remaining);
    remaining -= GangDemand(members[i].request);
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
