// File: group_defrag.cc
//
// Room for a pod group: one loop over the members, largest first, on one overlay of the cluster;
// each member booked where it fits, else given room by moves (defrag_room.h's RoomFor, the move
// rules shared by the whole plan) or by evictions (preempt's victims on the cheapest node).
#include "gpusched/placement/group_defrag.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>

#include "defrag_room.h"
#include "group_dra_room.h"
#include "gpusched/placement/node_fit.h"
#include "gpusched/placement/pod_relations.h"
#include "gpusched/placement/dra_victims.h"
#include "gpusched/placement/victims.h"

namespace gpusched::placement {
namespace {

using defrag::Accepts;
using defrag::MoveRules;
using defrag::Overlay;
using defrag::PctOf;
using defrag::Pending;
using defrag::Room;
using defrag::ServesPods;
using defrag::BookWhereItFits;
using defrag::BookingOf;
using defrag::Land;
using defrag::RoomFor;

using Uids = std::set<std::string, std::less<>>;

// How one member gets room on *cluster: fills *room (its node, placement and the moves made for
// it) and returns true, or returns false with room->reason. `left` bounds its moves.
// `moves`: the plan's so far.
using MemberRoom = std::function<bool(const GangMember&, const Pending&, const DefragOptions& left,
                                      const std::vector<DefragMove>& moves, Overlay*, Room*)>;

// Why `m` is not planned here, or "". `claims`: members with ResourceClaims are.
std::string NotPlanned(const GangMember& m, bool claims) {
  const Pod& pod = *m.pod;
  if (!m.request.schedulable()) return fmt::format("{}/{}: {}", pod.namespace_name, pod.name, m.request.RefusalReason());
  if (m.request.asks_gpu() && !m.request.device_plugin() && !(claims && m.request.claims_only())) {
    return fmt::format("{}/{} gets its GPUs through ResourceClaims, and no DRA objects were given to weigh them", pod.namespace_name,
                       pod.name);
  }
  return "";
}

// The node for member `pending` without GPUs: the first of `used` (the plan's nodes), then of
// the cluster, where it lands; nullopt if none.
std::optional<size_t> LandingFor(const Pending& pending, const Overlay& cluster, const std::set<size_t>& used) {
  const Pod& pod = *pending.pod;
  auto lands = [&](size_t j) {
    return cluster.node(j).ready() && pending.MayGo(cluster.node(j)) &&
           cluster.LandingProblem(j, &pending.labels, pending.use.requests, pod.uid, pod.priority).empty();
  };
  for (size_t j : used) {
    if (lands(j)) return j;
  }
  for (size_t j = 0; j < cluster.size(); ++j) {
    if (lands(j)) return j;
  }
  return std::nullopt;
}

// The members' order: largest GPU demand first (gang_planner.h; a claim member's counts the
// devices its claims ask, with `dra`), members without GPUs last.
std::vector<size_t> DemandOrder(std::span<const GangMember> members, const GroupDra& dra) {
  GangDra gang{.state = dra.state, .programs = dra.programs, .options = dra.options};
  std::vector<int64_t> demand;
  for (const GangMember& m : members) demand.push_back(GangDemand(m, gang));
  std::vector<size_t> order(members.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return demand[a] > demand[b]; });
  return order;
}

// The plan the loop of the file comment makes, each member given room by `room_for`.
GroupRoomPlan PlanGroup(std::span<const GangMember> members, const DefragInput& input, const DefragOptions& options,
                        const MemberRoom& room_for, const NodeNames* allowed, const GroupDra& dra) {
  bool claims = dra.state != nullptr;
  Overlay cluster(input);
  GroupRoomPlan plan;
  plan.frag_before_pct = plan.frag_after_pct = PctOf(cluster, input.workload);
  for (const GangMember& m : members) {
    if (std::string why = NotPlanned(m, claims); !why.empty()) {
      plan.reason = std::move(why);
      return plan;
    }
  }
  std::vector<Pending> pendings;
  std::set<std::string> unjudged;
  for (const GangMember& m : members) {
    pendings.push_back(Pending::Of(*m.pod));
    pendings.back().allowed = allowed;
    if (std::string u = UnjudgedBesidesHostPorts(m.pod->constraints); !u.empty()) unjudged.insert(u);
  }
  plan.not_judged = fmt::format("{}", fmt::join(unjudged, "; "));
  std::vector<GangSlot> slots(members.size());
  std::set<size_t> used;
  size_t placed = 0;
  for (size_t i : DemandOrder(members, dra)) {
    const Pod& pod = *members[i].pod;
    Room room;
    bool ok = false;
    if (!members[i].request.asks_gpu()) {
      std::optional<size_t> j = LandingFor(pendings[i], cluster, used);
      if (j) cluster.Arrived(*j, &pendings[i].use);
      ok = j.has_value();
      room = Room{.node = j.value_or(0), .reason = ok ? "" : "fits on no node besides GPUs"};
    } else {
      DefragOptions left = options;
      left.max_moves = options.max_moves - static_cast<int>(plan.moves.size());
      ok = room_for(members[i], pendings[i], left, plan.moves, &cluster, &room);
    }
    if (!ok) {
      plan.reason = fmt::format("{} of {} members have room; {}/{}: {}", placed, members.size(), pod.namespace_name, pod.name, room.reason);
      plan.moves.clear();
      return plan;
    }
    plan.moves.insert(plan.moves.end(), room.moves.begin(), room.moves.end());
    slots[i] = GangSlot{.pod_uid = pod.uid, .node = cluster.node(room.node).node.name, .placement = std::move(room.placement)};
    used.insert(room.node);
    ++placed;
  }
  plan.fits = true;
  plan.slots = std::move(slots);
  plan.nodes = used.size();
  plan.frag_after_pct = PctOf(cluster, input.workload);
  return plan;
}

// One node where evictions make room for a member, ordered as kube-scheduler orders preemption
// candidates.
struct EvictionCandidate {
  size_t node = 0;
  std::vector<const Allocation*> victims;
  std::vector<AllocationPtr> owned;  // victims made for the choice (dra_victims.h), kept alive with it
  int64_t violations = 0;
  int32_t top_priority = INT32_MIN;
  int64_t total_priority = 0;

  auto Key(const std::string& name) const { return std::make_tuple(violations, top_priority, total_priority, victims.size(), name); }
};

// A victim's term of the sum of priorities, as kube-scheduler's pickOneNodeForPreemption adds it:
// 2^31 more than its priority, so that every term is positive.
int64_t PriorityTerm(int32_t priority) { return int64_t{priority} + (int64_t{1} << 31); }

// The candidate of node i whose victims `choice` chose (the victims it made kept with it).
EvictionCandidate CandidateOf(size_t i, VictimChoice&& choice) {
  EvictionCandidate c{.node = i, .victims = std::move(choice.victims), .owned = std::move(choice.owned),
                      .violations = choice.pdb_violations};
  for (const Allocation* v : c.victims) {
    c.top_priority = std::max(c.top_priority, v->priority);
    c.total_priority += PriorityTerm(v->priority);
  }
  return c;
}

// Sorts `candidates` cheapest first (EvictionCandidate::Key, the node's name last).
void SortCheapest(const Overlay& cluster, std::vector<EvictionCandidate>* candidates) {
  std::sort(candidates->begin(), candidates->end(), [&](const EvictionCandidate& a, const EvictionCandidate& b) {
    return a.Key(cluster.node(a.node).node.name) < b.Key(cluster.node(b.node).node.name);
  });
}

// True if a pod with `labels` is a member of `pod`'s group (the same instance of it).
bool Sibling(const Pod& pod, const PodLabels& labels) {
  return pod.group && labels.group && labels.namespace_name == pod.namespace_name && *labels.group == *pod.group;
}

// Preempt's victim rules for member `pod` on `node`: lower priority, known to kube-scheduler,
// never a member of the group (`members`, pending and booked here, or bound) nor a pod its
// required affinity selects; violations counted through `counter`.
VictimRules EvictionRules(const Pod& pod, const NodeState& node, const Uids& members, DisruptionCounter* counter) {
  return VictimRules{
      .priority = pod.priority, .viewer = Viewer::Of(pod), .known_only = true,
      .violates_pdb = [&node, counter](const Allocation& a) { return counter->Evict(a.pod_name, node.LabelsOf(a.pod_uid)); },
      .keeps = [&pod, &node, &members](std::string_view uid) {
        const PodLabels* labels = node.LabelsOf(uid);
        return members.contains(uid) || (labels != nullptr && (Sibling(pod, *labels) || RequiredNeighbour(pod, *labels)));
      }};
}

// The nodes where evicting lower-priority pods makes room for the member, cheapest first.
std::vector<EvictionCandidate> EvictionCandidates(const GangMember& m, const Pending& pending, const Overlay& cluster, const Uids& members,
                                                  const DisruptionCounter& counter, const DefragOptions& options) {
  VictimFinder finder(options.placement);
  std::vector<EvictionCandidate> out;
  for (size_t i = 0; i < cluster.size(); ++i) {
    const NodeState& node = cluster.node(i);
    if (!ServesPods(node) || !pending.MayGo(node) || !NodeSelectionProblem(m.pod->constraints, node.node).empty()) continue;
    DisruptionCounter trial = counter;
    VictimChoice choice = finder.Choose(m.request, node, EvictionRules(*m.pod, node, members, &trial));
    if (!choice.helps || choice.victims.empty() || choice.victims.size() > static_cast<size_t>(options.max_moves)) continue;
    out.push_back(CandidateOf(i, std::move(choice)));
  }
  SortCheapest(cluster, &out);
  return out;
}

// Evicts candidate `c`'s victims on a copy of *cluster and books the member there; keeps the
// copy, counts the evictions and fills *room if the member then fits its node besides GPUs.
bool TryEvictions(const EvictionCandidate& c, const GangMember& m, const Pending& pending, const DefragOptions& options,
                  Overlay* cluster, DisruptionCounter* counter, int64_t* violations, Room* room) {
  Overlay trial = *cluster;
  const NodeState& source = cluster->node(c.node);
  std::vector<DefragMove> evictions;
  DisruptionCounter used = *counter;
  int64_t violated = 0;
  for (const Allocation* v : c.victims) {
    trial.Set(c.node, trial.Without(c.node, v->pod_uid));
    trial.Moved(c.node, std::nullopt, v->pod_uid);
    violated += used.Evict(v->pod_name, source.LabelsOf(v->pod_uid)) ? 1 : 0;
    evictions.push_back(DefragMove{.pod = v->pod_namespace + "/" + v->pod_name, .uid = v->pod_uid, .priority = v->priority,
                                   .from = v->node_name, .placement = v->placement});
  }
  Planner planner(options.placement);
  Viewer viewer = Viewer::Of(*m.pod);
  std::optional<Allocation> landed = Land(planner, m.request, BookingOf(*m.pod, source.node.name), c.node, &trial, &viewer);
  const Pod& pod = *m.pod;
  if (!landed || !trial.LandingProblem(c.node, &pending.labels, pending.use.requests, pod.uid, pod.priority).empty()) return false;
  trial.Arrived(c.node, &pending.use);
  *cluster = std::move(trial);
  *counter = std::move(used);
  *violations += violated;
  *room = Room{.node = c.node, .placement = landed->placement, .moves = std::move(evictions)};
  return true;
}

// The ready nvidia-dra nodes (allowed for `pending`) where evicting pods of lower priority frees
// devices for claim member `m` (dra_victims.h), cheapest first.
std::vector<EvictionCandidate> DraEvictionCandidates(const GangMember& m, const Pending& pending, const DraPlanner& planner,
                                                     const defrag::DraBook& book, const Overlay& cluster, const Uids& members,
                                                     const DisruptionCounter& counter, const DefragOptions& left) {
  std::vector<EvictionCandidate> out;
  for (size_t i = 0; i < cluster.size(); ++i) {
    const NodeState& node = cluster.node(i);
    if (!node.ready() || node.mode != ClaimsMode() || !pending.MayGo(node) || !NodeSelectionProblem(m.pod->constraints, node.node).empty()) continue;
    DisruptionCounter trial = counter;
    VictimChoice choice = ChooseDraVictims(planner, book.state(), node, EvictionRules(*m.pod, node, members, &trial));
    if (!choice.helps || choice.victims.empty() || choice.victims.size() > static_cast<size_t>(left.max_moves)) continue;
    out.push_back(CandidateOf(i, std::move(choice)));
  }
  SortCheapest(cluster, &out);
  return out;
}

// Evicts candidate `c`'s victims on copies of *book and *cluster and books claim member `m` on its
// node: kept, with the evictions counted and *room filled, if its claims then get devices there
// and it fits besides GPUs.
bool TryDraEvictions(const EvictionCandidate& c, const GangMember& m, const Pending& pending, defrag::DraBook* book,
                     Overlay* cluster, DisruptionCounter* counter, int64_t* violations, Room* room) {
  defrag::DraBook book_after = *book;
  Overlay after = *cluster;
  DisruptionCounter used = *counter;
  int64_t violated = 0;
  const NodeState& source = cluster->node(c.node);
  std::vector<DefragMove> evictions;
  for (const Allocation* v : c.victims) {
    violated += used.Evict(v->pod_name, source.LabelsOf(v->pod_uid)) ? 1 : 0;
    evictions.push_back(DefragMove{.pod = v->pod_namespace + "/" + v->pod_name, .uid = v->pod_uid, .priority = v->priority,
                                   .from = source.node.name});
    book_after.Free(v->pod_uid);
    after.Moved(c.node, std::nullopt, v->pod_uid);
  }
  const Pod& pod = *m.pod;
  DraPlanner planner(book_after.state(), pod, book_after.programs(), book_after.options());
  DraVerdict v = planner.Evaluate(after.node(c.node), /*rank=*/true);
  if (!v.fits() || !after.LandingProblem(c.node, &pending.labels, pending.use.requests, pod.uid, pod.priority).empty()) return false;
  std::vector<std::string> devices = defrag::RankedDeviceNames(v);
  book_after.Book(pending, c.node, devices, &after);
  *book = std::move(book_after);
  *cluster = std::move(after);
  *counter = std::move(used);
  *violations += violated;
  *room = Room{.node = c.node, .placement = Placement{.kind = ClaimsKind(), .devices = std::move(devices)}, .moves = std::move(evictions)};
  return true;
}

// Evictions for claim member `m`: where its claims get devices on the claims as the plan left
// them, else on the first of the cheapest nodes (at most left.max_tries) where evicting pods of
// lower priority frees enough and it then fits. Fills *room and returns true, or returns false
// with room->reason.
bool DraEvictions(const GangMember& m, const Pending& pending, const DefragOptions& left, const Uids& members,
                  defrag::DraBook* book, DisruptionCounter* counter, int64_t* violations, Overlay* cluster, Room* room) {
  DraPlanner planner(book->state(), *m.pod, book->programs(), book->options());
  if (!planner.problem().empty()) {
    room->reason = planner.problem();
    return false;
  }
  if (auto now = book->BestNode(planner, pending, *cluster)) {
    book->Book(pending, now->first, now->second, cluster);
    *room = Room{.node = now->first, .placement = Placement{.kind = ClaimsKind(), .devices = now->second}};
    return true;
  }
  std::vector<EvictionCandidate> candidates = DraEvictionCandidates(m, pending, planner, *book, *cluster, members, *counter, left);
  for (size_t k = 0; k < candidates.size() && k < left.max_tries; ++k) {
    if (TryDraEvictions(candidates[k], m, pending, book, cluster, counter, violations, room)) return true;
  }
  room->reason = candidates.empty() ? "evicting pods of lower priority frees its devices on no nvidia-dra node"
                                    : "the nodes made free do not take it besides GPUs";
  return false;
}

Uids UidsOf(std::span<const GangMember> members) {
  Uids out;
  for (const GangMember& m : members) out.insert(m.pod->uid);
  return out;
}

}  // namespace

GroupRoomPlan MakeRoomForGroup(std::span<const GangMember> members, const DefragInput& input, const DefragOptions& options,
                               const GroupDra& dra, const NodeNames* allowed) {
  MoveRules rules(input);
  for (const GangMember& m : members) rules.Pin(m.pod->uid);
  defrag::DraBook claims(dra, input);
  auto room_for = [&](const GangMember& m, const Pending& p, const DefragOptions& left, const std::vector<DefragMove>& moves,
                      Overlay* cluster, Room* room) {
    if (m.request.claims_only()) {
      if (!claims.RoomFor(m, p, left, moves, cluster, room)) return false;
      for (const DefragMove& mv : room->moves) {  // counted against the budgets, never moved again
        std::optional<size_t> from = defrag::IndexOf(*cluster, mv.from);  // a node's pods' uses stay with it
        rules.Moved(mv.pod.substr(mv.pod.find('/') + 1), from ? cluster->node(*from).LabelsOf(mv.uid) : nullptr, mv.uid);
      }
      return true;
    }
    if (RoomFor(m.request, p, left, cluster, &rules, room)) return true;
    room->reason += rules.Refused();
    return false;
  };
  return PlanGroup(members, input, options, room_for, allowed, dra);
}

GroupRoomPlan EvictForGroup(std::span<const GangMember> members, const DefragInput& input, const DefragOptions& options,
                            const GroupDra& dra, const NodeNames* allowed) {
  Uids uids = UidsOf(members);
  DisruptionCounter counter(input.budgets);
  int64_t violations = 0;
  defrag::DraBook claims(dra, input);
  GroupRoomPlan plan = PlanGroup(members, input, options,
                                 [&](const GangMember& m, const Pending& p, const DefragOptions& left, const std::vector<DefragMove>&,
                                     Overlay* cluster, Room* room) {
                                   if (m.request.claims_only()) {
                                     return DraEvictions(m, p, left, uids, &claims, &counter, &violations, cluster, room);
                                   }
                                   if (BookWhereItFits(m.request, p, left.placement, cluster, room)) return true;
                                   std::vector<EvictionCandidate> candidates = EvictionCandidates(m, p, *cluster, uids, counter, left);
                                   for (size_t k = 0; k < candidates.size() && k < left.max_tries; ++k) {
                                     if (TryEvictions(candidates[k], m, p, left, cluster, &counter, &violations, room)) return true;
                                   }
                                   room->reason = candidates.empty() ? "evicting pods of lower priority makes room on no node"
                                                                     : "the nodes made free do not take it besides GPUs";
                                   return false;
                                 },
                                 allowed, dra);
  plan.pdb_violations = plan.fits ? violations : 0;
  return plan;
}

}  // namespace gpusched::placement
