// File: gang_reservation.cc
//
// gang_reservation.h: the first waiting gang of a snapshot, and the domain kept for it.
#include "gpusched/extender/gang_reservation.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "gpusched/dra/extended_resources.h"
#include "gpusched/extender/domain_steering.h"
#include "gpusched/inventory/group_table.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/names.h"
#include "gpusched/placement/gang_planner.h"
#include "gpusched/placement/node_fit.h"
#include "gpusched/placement/pod_relations.h"

namespace gpusched::extender {
namespace {

using Uids = std::set<std::string, std::less<>>;

// A gang that waits, as its pending members show it.
struct Waiting {
  std::string key;              // GroupTable::MemberKey
  std::string name;             // "namespace/name"
  int32_t priority = 0;         // its highest pending member's
  int64_t created_ms = 0;       // its oldest pending member's; 0 when none says
  size_t needed = 0;            // the GPU members it must place (minCount less its launchers)
  int64_t least_milli = 0;      // what `needed` of them ask, the smallest first
  const Pod* first = nullptr;   // the pending GPU member asking most GPU: its node selection stands for all
  int64_t first_milli = 0;      // what `first` asks
  ResourceList most;            // the most any GPU member requests of each resource but GPUs
  std::set<std::string, std::less<>> mapped;  // those of `most` a device class maps (KEP 5004)
  bool one_per_node = false;    // a member has a host port or required anti-affinity per node
};

constexpr std::string_view kHostname = "kubernetes.io/hostname";

// True if resource `name` is one of the GPU resources (counted by GPUs, not by allocatable).
bool GpuResource(std::string_view name) {
  return name == names::kNvidiaGpu || name == names::kMgpuCore || name == names::kMgpuMemory;
}

// How `p`'s required anti-affinity keeps the gang's members apart: kNone, kNodes (two never
// share a node), or kAboveNodes (a term of another topology key picks a member: the count of
// members a domain holds cannot judge it). A term picks a member when it selects the member
// (placement::Selects).
enum class Apart { kNone, kNodes, kAboveNodes };
Apart KeptApart(const Pod& p, const inventory::GroupTable::Members& members) {
  Apart out = Apart::kNone;
  for (const PodTerm& t : p.constraints.anti_affinity) {
    bool picks = std::any_of(members.pending.begin(), members.pending.end(), [&](const std::shared_ptr<const Pod>& m) {
      return placement::Selects(t, p.namespace_name, m->namespace_name, m->labels);
    });
    if (!picks) continue;
    if (t.topology_key != kHostname) return Apart::kAboveNodes;
    out = Apart::kNodes;
  }
  return out;
}

// What `p` requests of the resources a node's allocatable answers for: all but the GPU
// resources (those DRA serves on a node are told apart per node: MembersOn).
ResourceList CountedRequests(const Pod& p) {
  ResourceList out;
  ResourceList all = EffectiveRequests(p);
  for (const auto& [name, amount] : all.items()) {
    if (!GpuResource(name)) out.Add(name, amount);
  }
  return out;
}

// The UIDs holding a hold gpusched made (a gang's slot, a defrag hold) or one of a nomination.
Uids HoldersIn(const inventory::InventorySnapshot& snapshot) {
  Uids out;
  for (const std::string& name : snapshot.held_nodes()) {
    const placement::NodeState* node = snapshot.FindNode(name);
    if (node == nullptr) continue;
    for (const Allocation& h : node->holds) out.insert(h.pod_uid);
  }
  return out;
}

// True if `pod` names a scheduler other than `scheduler` (one that names none is counted as ours:
// snapshot files written by hand).
bool OtherScheduler(const Pod& pod, const std::string& scheduler) {
  return !pod.scheduler_name.empty() && pod.scheduler_name != scheduler;
}

// `members` as a gang waiting for a domain of `key`, or none (see gang_reservation.h). `holders`:
// HoldersIn(snapshot).
std::optional<Waiting> WaitingGang(const std::string& member_key, const inventory::GroupTable::Members& members,
                                   const inventory::InventorySnapshot& snapshot, const std::string& key,
                                   const std::string& scheduler, const Uids& holders) {
  if (members.pending.empty() || members.bound > 0) return std::nullopt;
  const Pod& any = *members.pending.front();
  if (!any.group) return std::nullopt;
  auto group = snapshot.groups().find(GroupKey(any.group->api, any.namespace_name, any.group->name));
  if (group == snapshot.groups().end() || !group->second.gang()) return std::nullopt;
  std::string level = ConfinedLevel(&group->second);
  if (!level.empty() && level != key) return std::nullopt;  // confined to another level: never kept one of `key`
  if (members.pending.size() < static_cast<size_t>(group->second.min_count)) return std::nullopt;  // members missing
  Waiting w{.key = member_key, .name = any.namespace_name + "/" + any.group->name};
  std::vector<int64_t> demands;
  size_t launchers = 0;
  w.priority = INT32_MIN;  // every pending member's counts, launchers' too, as FactsOf counts another gang's
  for (const std::shared_ptr<const Pod>& p : members.pending) {
    // Planned, nominated or being placed: it waits for nothing. Gated (Kueue's admission gate) or
    // another scheduler's: not in gpusched's queue.
    if (holders.contains(p->uid) || !p->nominated_node.empty() || p->gated || OtherScheduler(*p, scheduler)) return std::nullopt;
    Apart apart = KeptApart(*p, members);
    if (apart == Apart::kAboveNodes) return std::nullopt;  // not judged: no domain is kept for it
    w.priority = std::max(w.priority, p->priority);
    int64_t demand = placement::GangDemand(placement::AnalyzePod(*p));
    if (demand <= 0) {  // a launcher without GPUs, or GPUs through claims (not known here)
      ++launchers;
      continue;
    }
    demands.push_back(demand);
    w.most.RaiseTo(CountedRequests(*p));
    for (std::string& r : dra::MappedResources(*p, snapshot.dra().classes())) w.mapped.insert(std::move(r));
    // Two members never share a node with a host port (members share their template's ports), or
    // with anti-affinity per node that picks members.
    w.one_per_node = w.one_per_node || !p->constraints.host_ports.empty() || apart == Apart::kNodes;
    if (p->created_ms > 0 && (w.created_ms == 0 || p->created_ms < w.created_ms)) w.created_ms = p->created_ms;
    if (w.first == nullptr || demand > w.first_milli) {  // members counted as the largest: never too many
      w.first = p.get();
      w.first_milli = demand;
    }
  }
  if (demands.empty()) return std::nullopt;
  GangNeed need = NeedOf(std::move(demands), launchers, group->second.min_count);
  w.needed = need.needed;
  w.least_milli = need.least_milli;
  return w;
}

// True if `a` comes off kube-scheduler's queue before `b`: higher priority, then older.
bool PoppedFirst(const Waiting& a, const Waiting& b) {
  auto order = [](const Waiting& w) { return std::make_tuple(-int64_t{w.priority}, w.created_ms == 0, w.created_ms, w.key); };
  return order(a) < order(b);
}

// What the pods on `node` that stay when it empties (DaemonSets', static pods') request of `resource`.
int64_t StayingRequests(const placement::NodeState& node, std::string_view resource) {
  int64_t sum = 0;
  if (node.uses == nullptr) return sum;
  for (const PodUse& p : node.uses->pods()) {
    if (p.labels != nullptr && RecreatedOnItsNode(*p.labels)) sum += p.requests.Get(resource);
  }
  return sum;
}

// How many members the node takes once every pod but those that stay (StayingRequests) has left,
// each counted as the largest of them in each resource: by GPUs, then every other resource they
// request (CountedRequests) as NodeResourcesFit counts it: a resource the node does not list, it
// has none of, unless a device class maps it (KEP 5004: DRA serves it on the nodes that do not
// list it, dra::ServedOn); a node whose allocatable is not known (it lists nothing besides GPUs)
// is not counted against, nor is CPU or memory it does not list (nodes written by hand). One at
// most when members keep apart.
int64_t MembersOn(const placement::NodeState& node, const Waiting& w) {
  int64_t most = int64_t{1000} * node.view.gpu_count / w.first_milli;
  const ResourceList& allocatable = node.node.other_allocatable;
  for (const auto& [resource, asks] : w.most.items()) {
    int64_t has = allocatable.Get(resource);
    bool unlisted_ok = resource == "cpu" || resource == "memory" || w.mapped.contains(resource);
    if (asks <= 0 || allocatable.empty() || (has <= 0 && unlisted_ok)) continue;
    most = std::min(most, std::max<int64_t>(0, has - StayingRequests(node, resource)) / asks);
  }
  return w.one_per_node ? std::min<int64_t>(most, 1) : most;
}

// How many of the gang's members domain `id` holds when empty, on its nodes that take GPU pods
// and that its members may run on.
size_t MembersIn(int32_t id, const Waiting& w, const inventory::InventorySnapshot& snapshot, const DomainIndex& index) {
  int64_t members = 0;
  for (size_t i = 0; i < index.facts.size(); ++i) {
    if (index.facts[i].domain != id || !index.facts[i].takes_gpu_pods) continue;
    const placement::NodeState& node = *snapshot.nodes()[i];
    if (placement::NodeSelectionProblem(w.first->constraints, node.node).empty()) members += MembersOn(node, w);
  }
  return static_cast<size_t>(std::max<int64_t>(members, 0));
}

}  // namespace

GangNeed NeedOf(std::vector<int64_t> gpu_demands, size_t launchers, int32_t min_count) {
  if (gpu_demands.empty()) return {};
  size_t count = static_cast<size_t>(std::max(min_count, 1));
  GangNeed need{.needed = std::clamp<size_t>(count > launchers ? count - launchers : 1, 1, gpu_demands.size())};
  std::partial_sort(gpu_demands.begin(), gpu_demands.begin() + static_cast<std::ptrdiff_t>(need.needed), gpu_demands.end());
  for (size_t i = 0; i < need.needed; ++i) need.least_milli += gpu_demands[i];
  return need;
}

std::optional<DomainReservation> ReservedDomain(const inventory::InventorySnapshot& snapshot, const std::string& key,
                                                const DomainIndex& index, const std::string& scheduler) {
  if (snapshot.group_members().empty()) return std::nullopt;
  Uids holders = HoldersIn(snapshot);
  std::optional<Waiting> first;
  for (const auto& [member_key, members] : snapshot.group_members()) {
    std::optional<Waiting> w = WaitingGang(member_key, members, snapshot, key, scheduler, holders);
    if (w && (!first || PoppedFirst(*w, *first))) first = std::move(w);
  }
  if (!first) return std::nullopt;
  // The domains by whole nodes, then free GPU (most first), then name: the first that could hold
  // the gang when empty, on the nodes its members may run on, is kept. Only the candidates'
  // nodes are judged, best first.
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
    if (MembersIn(id, *first, snapshot, index) < first->needed) continue;
    DomainReservation r{.domain = index.names[id], .gang = first->name, .member_key = first->key, .priority = first->priority,
                        .whole_nodes = uses[id]->whole_nodes, .needs_milli = first->least_milli,
                        .drains = uses[id]->other_scheduler_nodes == 0, .level = key};
    for (size_t i = 0; i < index.facts.size(); ++i) {
      if (index.facts[i].domain == id) r.nodes.push_back(static_cast<uint32_t>(i));
    }
    return r;
  }
  return std::nullopt;
}

std::string ConfinedLevel(const PodGroup* group) {
  if (group == nullptr) return "";
  return !group->topology_key.empty() ? group->topology_key : group->required_topology;
}

bool GangKeptOff(const GangFacts& gang, const DomainReservation& kept) {
  if ((gang.member != nullptr && OfKeptGang(*gang.member, kept)) || gang.priority > kept.priority) return false;
  if (!gang.level.empty() && gang.level != kept.level) return false;
  return !gang.members_there;
}

std::string OffDomain(const GangFacts& gang, const DomainReservation* kept) {
  return kept != nullptr && GangKeptOff(gang, *kept) ? kept->domain : "";
}

GangFacts FactsOf(const Pod& pod, const PodGroup& group, const DomainReservation& kept,
                  const inventory::InventorySnapshot& snapshot) {
  const inventory::GroupTable::Members& members = snapshot.MembersOf(inventory::GroupTable::MemberKey(pod));
  GangFacts facts{.member = &pod, .priority = pod.priority, .level = ConfinedLevel(&group)};
  Uids uids(members.bound_uids.begin(), members.bound_uids.end());
  uids.insert(pod.uid);
  for (const std::shared_ptr<const Pod>& p : members.pending) {
    facts.priority = std::max(facts.priority, p->priority);
    uids.insert(p->uid);
  }
  for (uint32_t pos : kept.nodes) {  // the kept domain's few nodes, not the cluster's
    if (pos >= snapshot.nodes().size()) break;
    const placement::NodeState& node = *snapshot.nodes()[pos];
    bool held = std::any_of(node.holds.begin(), node.holds.end(), [&](const Allocation& h) { return uids.contains(h.pod_uid); });
    bool runs = std::any_of(node.allocations.begin(), node.allocations.end(), [&](const Allocation& a) { return uids.contains(a.pod_uid); });
    if (held || runs) {
      facts.members_there = true;
      break;
    }
  }
  return facts;
}

bool OfKeptGang(const Pod& pod, const DomainReservation& r) {
  return pod.group && inventory::GroupTable::MemberKey(pod) == r.member_key;
}

std::string ReservationReason(const std::string& key, const DomainReservation& r) {
  return fmt::format("domain {}={} is kept for gang {}, which waits for room (it asks {:g} GPUs); other pods and gangs "
                     "of its priority or lower stay off it until it is placed",
                     key, r.domain, r.gang, static_cast<double>(r.needs_milli) / 1000);
}

}  // namespace gpusched::extender
