// File: nomination.cc
//
// Holds for nominated pods: planned in decreasing priority on the node without its terminating pods
// (the planner's placement, or the DRA planner's ranked devices for claim and KEP 5004 pods); found
// by UID or controller, and left out for pods a hold does not bind.
#include "gpusched/placement/nomination.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gpusched/dra/extended_resources.h"
#include "gpusched/placement/dra_victims.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::placement {

namespace {

// Decreasing priority, then UID: the order in which holds are planned.
std::vector<const Pod*> PlanningOrder(std::span<const Pod* const> nominated) {
  std::vector<const Pod*> order(nominated.begin(), nominated.end());
  std::sort(order.begin(), order.end(),
            [](const Pod* a, const Pod* b) { return std::tie(b->priority, a->uid) < std::tie(a->priority, b->uid); });
  return order;
}

Allocation HoldFor(const Pod& pod, const NodeState& state, RequestKind kind, Placement placement) {
  return Allocation{.pod_uid = pod.uid,
                    .pod_namespace = pod.namespace_name,
                    .pod_name = pod.name,
                    .node_name = state.node.name,
                    .mode = ModeServing(kind),
                    .placement = std::move(placement),
                    .origin = AllocationOrigin::kNominated,
                    .priority = pod.priority};
}

// The special claim of `pod` on `state`'s node (KEP 5004): where it is an nvidia-dra node on which
// DRA serves some extended resources of the pod that a class maps; nullopt elsewhere.
std::optional<dra::SpecialClaim> SpecialClaimOn(const Pod& pod, const dra::ClusterState& dra, const NodeState& state) {
  if (state.mode != ClaimsMode()) return std::nullopt;
  std::vector<std::string> served = dra::ServedOn(state.node, dra::MappedResources(pod, dra.classes()));
  if (served.empty()) return std::nullopt;
  return dra::BuildSpecialClaim(pod, dra.classes(), served);
}

}  // namespace

void HoldNominated(Planner& planner, std::span<const Pod* const> nominated, NodeState* state) {
  std::vector<const Pod*> order = PlanningOrder(nominated);
  // The node once its terminating pods are gone, with the holds planned so far.
  NodeState after = EmptyUsage(*state);
  for (const Allocation& a : state->allocations) {
    if (!a.terminating) AddUse(a, &after);
  }
  for (const Pod* pod : order) {
    PodRequest request = AnalyzePod(*pod);
    if (!request.device_plugin() || !request.schedulable()) continue;
    NodeVerdict v = planner.Evaluate(request, after, /*want_placement=*/true);
    if (!v.fits()) continue;
    Allocation hold = HoldFor(*pod, *state, request.kind, std::move(v.placement));
    AddUse(hold, &after);
    AddHold(std::move(hold), state);
  }
}

void HoldNominatedClaims(const dra::ClusterState& dra, dra::cel::ProgramCache* programs, const DraOptions& options,
                         std::span<const Pod* const> nominated, NodeState* state) {
  std::optional<NodeReservations> reservations;  // built for the first pod with claims
  dra::AllocatedDevices held;                     // the node's devices once its terminating pods are gone
  for (const Pod* pod : PlanningOrder(nominated)) {
    std::optional<dra::SpecialClaim> special;
    if (!AnalyzePod(*pod).claims_only()) {
      special = SpecialClaimOn(*pod, dra, *state);  // extended resources DRA serves here
      if (!special) continue;
    }
    if (!reservations) {
      reservations.emplace(dra, *state);
      std::set<std::string, std::less<>> gone;
      for (const AllocationPtr& a : reservations->pods()) {
        if (a->terminating) gone.insert(a->pod_uid);
      }
      held = reservations->HeldWithout(gone);
    }
    DraPlanner planner(dra, *pod, programs, options, special ? &special->claim : nullptr);
    if (!planner.problem().empty()) continue;
    // The holds planned so far bind it.
    DraVerdict v = planner.Evaluate(WhatIf(*state).HoldingDevices(held), /*rank=*/true);
    if (!v.fits()) continue;
    Placement devices{.kind = ClaimsKind()};
    for (const dra::AllocationResult& r : v.ranked) {
      for (const dra::DeviceResult& d : r.results) devices.devices.push_back(dra::DeviceName(d.id));
    }
    AddHold(HoldFor(*pod, *state, ClaimsKind(), std::move(devices)), state);
  }
}

const Allocation* FindHold(const NodeState& state, std::string_view uid) {
  for (const Allocation& h : state.holds) {
    if (h.pod_uid == uid) return &h;
  }
  return nullptr;
}

void NominationHolds::Add(const dra::ClusterState& dra, std::span<const Pod* const> nominated, NodeState* state) {
  HoldNominated(planner_, nominated, state);
  HoldNominatedClaims(dra, &programs_, dra_, nominated, state);
}

}  // namespace gpusched::placement
