// File: gang_reservation.cc
//
// gang_reservation.h: the first waiting gang of a snapshot, and the domain kept for it.
#include "gpusched/extender/gang_reservation.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <tuple>
#include <vector>

#include "gpusched/extender/domain_steering.h"
#include "gpusched/extender/gang_holds.h"
#include "gpusched/placement/gang_planner.h"
#include "gpusched/placement/node_fit.h"

namespace gpusched::extender {
namespace {

// A gang that waits, as its pending members show it.
struct Waiting {
  std::string name;        // "namespace/name"
  int32_t priority = 0;    // its highest pending member's
  int64_t created_ms = 0;  // its oldest pending member's; 0 when none says
  int64_t least_milli = 0;  // what the members needed for minCount ask, the smallest first
  const Pod* first = nullptr;  // a pending member: its node selection stands for the gang's
};

// `members` as a gang waiting for a domain of `key`, or none (see gang_reservation.h).
std::optional<Waiting> WaitingGang(const inventory::GroupTable::Members& members, const inventory::InventorySnapshot& snapshot,
                                   const std::string& key) {
  if (members.pending.empty() || members.bound > 0) return std::nullopt;
  const Pod& any = *members.pending.front();
  GangStanding standing = StandingOf(any, snapshot, /*gangs=*/true);
  if (standing.kind == GangStanding::Kind::kAlone) return std::nullopt;
  auto group = snapshot.groups().find(GroupKey(any.group->api, any.namespace_name, any.group->name));
  if (group == snapshot.groups().end() || members.pending.size() < static_cast<size_t>(group->second.min_count)) return std::nullopt;
  if (!group->second.required_topology.empty() && group->second.required_topology != key) return std::nullopt;  // another level's
  Waiting w{.name = standing.group};
  std::vector<int64_t> demands;
  for (const std::shared_ptr<const Pod>& p : members.pending) {
    if (SlotOf(p->uid, snapshot) != nullptr) return std::nullopt;  // planned: it waits for nothing
    if (p->gated) return std::nullopt;  // not in kube-scheduler's queue: it waits for its gates, not for room
    int64_t demand = placement::GangDemand(placement::AnalyzePod(*p));
    if (demand <= 0) continue;  // a launcher without GPUs, or GPUs through claims (not known here)
    demands.push_back(demand);
    w.priority = std::max(w.priority, p->priority);
    if (p->created_ms > 0 && (w.created_ms == 0 || p->created_ms < w.created_ms)) w.created_ms = p->created_ms;
    if (w.first == nullptr) w.first = p.get();
  }
  if (demands.empty()) return std::nullopt;
  std::sort(demands.begin(), demands.end());
  size_t needed = std::clamp<size_t>(static_cast<size_t>(std::max(group->second.min_count, 1)), 1, demands.size());
  for (size_t i = 0; i < needed; ++i) w.least_milli += demands[i];
  return w;
}

// True if `a` comes off kube-scheduler's queue before `b`: higher priority, then older.
bool PoppedFirst(const Waiting& a, const Waiting& b) {
  auto order = [](const Waiting& w) { return std::make_tuple(-w.priority, w.created_ms == 0, w.created_ms, w.name); };
  return order(a) < order(b);
}

// The GPU capacity of domain `id`'s nodes that take GPU pods and that `pod` may run on.
int64_t CapacityFor(const Pod& pod, int32_t id, const inventory::InventorySnapshot& snapshot, const DomainIndex& index) {
  int64_t capacity = 0;
  for (size_t i = 0; i < index.facts.size(); ++i) {
    const DomainIndex::NodeFacts& f = index.facts[i];
    if (f.domain != id || !f.takes_gpu_pods) continue;
    if (placement::NodeSelectionProblem(pod.constraints, snapshot.nodes()[i]->node).empty()) capacity += f.free_milli + f.used_milli;
  }
  return capacity;
}

}  // namespace

std::optional<DomainReservation> ReservedDomain(const inventory::InventorySnapshot& snapshot, const std::string& key,
                                                const DomainIndex& index) {
  std::optional<Waiting> first;
  for (const auto& [member_key, members] : snapshot.group_members()) {
    std::optional<Waiting> w = WaitingGang(members, snapshot, key);
    if (w && (!first || PoppedFirst(*w, *first))) first = std::move(w);
  }
  if (!first) return std::nullopt;
  // The domains by whole nodes, then free GPU (most first), then name: the first that could hold
  // the gang when empty, on the nodes its members may run on, is kept. Only the candidates'
  // nodes are judged, in that order.
  std::vector<const DomainUse*> uses(index.names.size(), nullptr);
  std::vector<int32_t> ids;
  for (int32_t id = 0; id < static_cast<int32_t>(index.names.size()); ++id) {
    auto d = index.domains.find(index.names[id]);
    if (d == index.domains.end() || d->second.capacity_milli < first->least_milli) continue;
    uses[id] = &d->second;
    ids.push_back(id);
  }
  auto before = [&](int32_t a, int32_t b) {
    return std::make_tuple(-uses[a]->whole_nodes, -uses[a]->free_milli, std::string_view(index.names[a])) <
           std::make_tuple(-uses[b]->whole_nodes, -uses[b]->free_milli, std::string_view(index.names[b]));
  };
  while (!ids.empty()) {  // the best first; usually it can hold the gang, and no sort is needed
    auto best = std::min_element(ids.begin(), ids.end(), before);
    int32_t id = *best;
    ids.erase(best);
    if (CapacityFor(*first->first, id, snapshot, index) < first->least_milli) continue;
    return DomainReservation{.domain = index.names[id], .gang = first->name, .priority = first->priority,
                             .whole_nodes = uses[id]->whole_nodes, .needs_milli = first->least_milli};
  }
  return std::nullopt;
}

std::string ReservationReason(const std::string& key, const DomainReservation& r) {
  return fmt::format("domain {}={} is kept for gang {}, which waits for room (it asks {:g} GPUs); pods outside gangs "
                     "of its priority or lower stay off it until it is placed",
                     key, r.domain, r.gang, static_cast<double>(r.needs_milli) / 1000);
}

}  // namespace gpusched::extender
