// File: dra_victims.cc
//
// The DRA victim choice: the claims holding devices the node can use and the pods reserving them,
// the devices still held once some of those pods are gone, and victims.cc's reprieve with each
// what-if a view of the node holding the devices left (what_if.h).
#include "gpusched/placement/dra_victims.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "gpusched/dra/allocator/pools.h"

namespace gpusched::placement {
namespace {

// The allocated claims holding devices `node` can use, each once, in the order found.
std::vector<const dra::ResourceClaim*> ClaimsOn(const dra::ClusterState& state, const NodeState& node) {
  dra::NodeInfo info{.name = node.node.name, .labels = &node.node.labels};
  dra::NodePoolsPtr pools = state.PoolsFor(info);
  std::vector<const dra::ResourceClaim*> out;
  std::set<const dra::ResourceClaim*> seen;
  for (const dra::Candidate& c : pools->candidates) {
    for (const dra::ResourceClaim* claim : state.HoldersOf(c.id)) {
      if (seen.insert(claim).second) out.push_back(claim);
    }
  }
  return out;
}

// The pod `uid` as a victim: its allocation on the node, or one made from the node's pod list;
// null when the pod is not on the node.
AllocationPtr PodOnNode(const NodeState& node, const std::string& uid) {
  for (const AllocationPtr& a : node.allocations.shared()) {
    if (a->pod_uid == uid) return a;
  }
  const PodUse* it = node.uses == nullptr ? nullptr : node.uses->Find(uid);
  if (it == nullptr) return nullptr;
  return std::make_shared<const Allocation>(Allocation{.pod_uid = it->uid,
                                                       .pod_namespace = it->labels ? it->labels->namespace_name : "",
                                                       .pod_name = it->name,
                                                       .node_name = node.node.name,
                                                       .mode = ClaimsMode(),
                                                       .priority = it->priority,
                                                       .terminating = it->terminating});
}

}  // namespace

NodeReservations::NodeReservations(const dra::ClusterState& state, const NodeState& node) : claims_(ClaimsOn(state, node)) {
  std::map<std::string, AllocationPtr> pods;  // every consumer on the node, by UID
  for (const dra::ResourceClaim* claim : claims_) {
    for (const dra::ConsumerRef& ref : claim->reserved_for) {
      if (ref.resource == "pods" && !pods.contains(ref.uid)) pods.emplace(ref.uid, PodOnNode(node, ref.uid));
    }
  }
  for (auto& [uid, pod] : pods) {
    if (pod != nullptr) pods_.push_back(std::move(pod));
  }
}

dra::AllocatedDevices NodeReservations::HeldWithout(const std::set<std::string, std::less<>>& gone) const {
  dra::AllocatedDevices held;
  for (const dra::ResourceClaim* claim : claims_) {
    bool freed = !claim->reserved_for.empty() && std::all_of(claim->reserved_for.begin(), claim->reserved_for.end(),
                                                              [&](const dra::ConsumerRef& r) { return gone.contains(r.uid); });
    if (!freed) held.Add(*claim->allocation);
  }
  return held;
}

VictimChoice ChooseDraVictims(const DraPlanner& planner, const dra::ClusterState& state, const NodeState& node,
                              const VictimRules& rules) {
  VictimChoice out;
  NodeReservations reservations(state, node);
  std::vector<const AllocationPtr*> candidates;
  std::set<std::string, std::less<>> evicted;
  for (const AllocationPtr& a : reservations.pods()) {
    if (rules.leaving && rules.leaving(a->pod_uid) && IsCandidate(*a, rules)) {
      evicted.insert(a->pod_uid);  // gone whatever the choice, never chosen
      continue;
    }
    if (!IsCandidate(*a, rules) || (rules.keeps && rules.keeps(a->pod_uid))) continue;
    candidates.push_back(&a);
    evicted.insert(a->pod_uid);
  }
  // The node with the pods `gone` evicted: the devices their claims held free.
  auto judge_without = [&](const std::set<std::string, std::less<>>& gone) {
    dra::AllocatedDevices held = reservations.HeldWithout(gone);
    return planner.Evaluate(WhatIf(node).HoldingDevices(held), /*rank=*/false);
  };
  DraVerdict all_gone = judge_without(evicted);
  if (!all_gone.fits()) {
    out.reason = all_gone.node.reject == Reject::kInsufficient ? NoRoomReason(candidates.size()) : all_gone.node.reason;
    return out;
  }
  out.helps = true;
  for (const AllocationPtr* a : candidates) out.owned.push_back(*a);  // `reservations` made some of them
  Reprieve(std::move(candidates), rules, [&](const Allocation& a) {
    auto at = evicted.find(a.pod_uid);
    std::string uid = std::move(evicted.extract(at).value());
    if (judge_without(evicted).fits()) return true;
    evicted.insert(std::move(uid));
    return false;
  }, &out);
  return out;
}

}  // namespace gpusched::placement
