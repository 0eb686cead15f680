// File: group_dra_room.cc
//
// A claim member's room inside a group's plan: dra_defrag.h's plan on the claims and nodes as
// the plan left them, then its devices and moves booked on the claims.
#include "group_dra_room.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpusched/dra/object_set.h"
#include "gpusched/placement/dra_defrag.h"

namespace gpusched::placement::defrag {

std::optional<size_t> IndexOf(const Overlay& cluster, const std::string& name) {
  for (size_t i = 0; i < cluster.size(); ++i) {
    if (cluster.node(i).node.name == name) return i;
  }
  return std::nullopt;
}

std::shared_ptr<const std::vector<DisruptionBudget>> DraBook::BudgetsAfter(const std::vector<DefragMove>& moves,
                                                                          const Overlay& cluster) const {
  if (input_->budgets == nullptr || moves.empty()) return input_->budgets;
  auto left = std::make_shared<std::vector<DisruptionBudget>>(*input_->budgets);
  for (const DefragMove& m : moves) {
    std::optional<size_t> from = IndexOf(cluster, m.from);
    const PodLabels* labels = from ? cluster.node(*from).LabelsOf(m.uid) : nullptr;
    if (labels == nullptr) continue;
    for (DisruptionBudget& b : *left) {
      if (Covers(b, *labels, BudgetReading::kEviction)) --b.disruptions_allowed;
    }
  }
  return left;
}

std::vector<const NodeState*> DraBook::NodesWithArrivals(const Overlay& cluster, const Pending& pending) {
  views_.clear();
  std::vector<const NodeState*> out;
  for (size_t i = 0; i < cluster.size(); ++i) {
    if (!pending.MayGo(cluster.node(i))) continue;
    auto arrived = arrived_.find(i);
    if (arrived == arrived_.end()) {
      out.push_back(&cluster.node(i));
      continue;
    }
    NodeState view = cluster.node(i);
    auto uses = view.uses != nullptr ? std::make_shared<NodeUses>(*view.uses) : std::make_shared<NodeUses>();
    for (const PodUse& u : arrived->second) uses->Put(u);
    view.uses = std::move(uses);
    views_.push_back(std::move(view));
    out.push_back(&views_.back());
  }
  return out;
}

void DraBook::Allocate(const std::string& ns, const std::string& uid, const std::vector<std::string>& devices) {
  dra::ResourceClaim claim{.namespace_name = ns, .name = "gpusched-group-room-" + uid, .uid = "gpusched-group-room-" + uid};
  dra::AllocationResult result;
  for (const std::string& d : devices) {
    if (std::optional<dra::DeviceId> id = dra::ParseDeviceName(d)) result.results.push_back(dra::DeviceResult{.request = "room", .id = *id});
  }
  claim.allocation = std::move(result);
  owned_ = dra::WithClaim(*state_, std::move(claim));
  state_ = owned_.get();
}

void DraBook::Deallocate(const std::string& uid) {
  std::vector<dra::ResourceClaim> held;
  for (const auto& [key, c] : state_->claims()) {
    bool reserved = std::any_of(c.reserved_for.begin(), c.reserved_for.end(), [&](const dra::ConsumerRef& r) { return r.uid == uid; });
    if (c.allocation && (reserved || c.owner_pod_uid == uid)) held.push_back(c);
  }
  for (dra::ResourceClaim& c : held) {
    std::erase_if(c.reserved_for, [&](const dra::ConsumerRef& r) { return r.uid == uid; });
    if (c.reserved_for.empty() || c.owner_pod_uid == uid) {  // nothing keeps it, or deleted with its pod
      c.allocation.reset();
      c.reserved_for.clear();
    }
    owned_ = dra::WithClaim(*state_, std::move(c));
    state_ = owned_.get();
  }
}

std::vector<std::string> RankedDeviceNames(const DraVerdict& v) {
  std::vector<std::string> out;
  for (const dra::AllocationResult& r : v.ranked) {
    for (const dra::DeviceResult& d : r.results) out.push_back(dra::DeviceName(d.id));
  }
  return out;
}

std::optional<std::pair<size_t, std::vector<std::string>>> DraBook::BestNode(const DraPlanner& planner, const Pending& pending,
                                                                             const Overlay& cluster) const {
  std::optional<std::pair<size_t, std::vector<std::string>>> best;
  double best_score = 0;
  const Pod& pod = *pending.pod;
  for (size_t i = 0; i < cluster.size(); ++i) {
    const NodeState& n = cluster.node(i);
    if (!n.ready() || n.mode != ClaimsMode() || !pending.MayGo(n)) continue;
    if (!cluster.LandingProblem(i, &pending.labels, pending.use.requests, pod.uid, pod.priority).empty()) continue;
    DraVerdict v = planner.Evaluate(n, /*rank=*/true);
    if (!v.fits() || (best && v.score <= best_score)) continue;
    best = std::make_pair(i, RankedDeviceNames(v));
    best_score = v.score;
  }
  return best;
}

void DraBook::Book(const Pending& pending, size_t node, const std::vector<std::string>& devices, Overlay* cluster) {
  Allocate(pending.pod->namespace_name, pending.pod->uid, devices);
  arrived_[node].push_back(pending.use);
  cluster->Arrived(node, &pending.use);
}

bool DraBook::RoomFor(const GangMember& m, const Pending& pending, const DefragOptions& left, const std::vector<DefragMove>& moves,
                      Overlay* cluster, Room* room) {
  DraDefragInput in{.cluster = DefragInput{.nodes = NodesWithArrivals(*cluster, pending), .budgets = BudgetsAfter(moves, *cluster),
                                           .no_landing = input_->no_landing, .no_landing_priority = input_->no_landing_priority},
                    .state = state_, .programs = dra_->programs, .dra = dra_->options};
  DefragPlan plan = MakeRoomForClaims(*m.pod, in, left);
  std::optional<size_t> node = plan.fits ? IndexOf(*cluster, plan.node) : std::nullopt;
  if (!node) {
    room->reason = plan.reason;
    return false;
  }
  Allocate(m.pod->namespace_name, m.pod->uid, plan.placement.devices);
  for (const DefragMove& mv : plan.moves) {
    Deallocate(mv.uid);
    Allocate(m.pod->namespace_name, mv.uid, mv.placement.devices);
    std::optional<size_t> from = IndexOf(*cluster, mv.from), to = IndexOf(*cluster, mv.to);
    if (!from || !to) continue;  // the plan's nodes are the cluster's
    const NodeState& source = cluster->node(*from);
    const PodUse* use = source.uses != nullptr ? source.uses->Find(mv.uid) : nullptr;
    if (use != nullptr) arrived_[*to].push_back(*use);
    cluster->Moved(*from, *to, mv.uid);
  }
  arrived_[*node].push_back(pending.use);
  cluster->Arrived(*node, &pending.use);
  *room = Room{.node = *node, .placement = std::move(plan.placement), .moves = std::move(plan.moves)};
  return true;
}

}  // namespace gpusched::placement::defrag
