// File: group_explain.cc
//
// A pod group explained: found by name in any of the three APIs (or by the pods naming it),
// its pending members planned together, encoded as JSON or a table.
#include "gpusched/extender/group_explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <deque>
#include <set>
#include <optional>

#include "gpusched/extender/defrag.h"
#include "gpusched/extender/domain_steering.h"
#include "gpusched/extender/gang_domains.h"
#include "gpusched/extender/gang_holds.h"
#include "gpusched/extender/group_defrag.h"
#include "gpusched/placement/node_fit.h"
#include "gpusched/json/writer.h"

namespace gpusched::extender {
namespace {

constexpr GroupApi kApis[] = {GroupApi::kPodGroup, GroupApi::kWorkload, GroupApi::kCoscheduling};

// What some member asks that gpusched does not judge.
std::string NotJudged(const std::vector<Pod>& pods) {
  std::set<std::string> parts;
  for (const Pod& p : pods) {
    std::string unjudged = placement::UnjudgedRelations(p.constraints);
    if (!unjudged.empty()) parts.insert(unjudged);
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

// The plan of `pending` inside one domain of `key`, as filter plans each (domain_plans.h): the
// domain where they fit on the fewest nodes (the first on a tie), named in *domain; else why not.
// Not in `kept`, the domain kept for another gang, where the gang stays off it (LeaveOutKeptDomain).
placement::GangPlan PlanPerDomain(const std::vector<Pod>& pending, const inventory::InventorySnapshot& snapshot,
                                  const ServiceOptions& options, dra::cel::ProgramCache* programs, const PodGroup& declared,
                                  const DomainReservation* kept, std::string* domain) {
  std::vector<const placement::NodeState*> nodes;
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) nodes.push_back(n.get());
  LeaveOutKeptDomain(pending, kept, snapshot, options, &nodes);
  const std::string& key = declared.topology_key;
  return BestInDomains<placement::GangPlan>(
      nodes, key, domain,
      [&](const placement::NodeNames& names) {
        std::vector<std::string_view> only(names.begin(), names.end());
        return PlanPending(pending, snapshot, options, programs, &only);
      },
      [](const placement::GangPlan& a, const placement::GangPlan& b) { return a.nodes < b.nodes; });
}

// "wouldFitAfter": null when nothing needs evicting (or it cannot be judged), else the evictions
// and where every member goes after them, or why no evictions make room.
void WriteWouldFitAfter(json::Writer& w, const GroupExplanation& e) {
  w.Key("wouldFitAfter");
  if (!e.would_fit_after) {
    w.Null();
    return;
  }
  const placement::GroupRoomPlan& p = *e.would_fit_after;
  w.StartObject().Member("fits", p.fits);
  if (!p.fits) w.Member("reason", p.reason);
  int32_t highest = INT32_MIN;
  w.Key("evict").StartArray();
  for (const placement::DefragMove& v : p.moves) {
    w.StartObject().Member("pod", v.pod).Member("uid", v.uid).Member("priority", v.priority).Member("node", v.from).EndObject();
    highest = std::max(highest, v.priority);
  }
  w.EndArray().Key("cost").StartObject().Member("victims", static_cast<int64_t>(p.moves.size()));
  w.Key("maxPriority");
  if (p.moves.empty()) {
    w.Null();
  } else {
    w.Int(highest);
  }
  w.Member("pdbViolations", p.pdb_violations).EndObject().Key("plan").StartArray();
  for (size_t i = 0; i < p.slots.size(); ++i) {
    w.StartObject().Member("pod", e.pending[i]).Member("node", p.slots[i].node).Member("gpus", GpusText(p.slots[i].placement)).EndObject();
  }
  w.EndArray().EndObject();
}

// The evictions that would make room, in words.
std::string WouldFitAfterText(const GroupExplanation& e) {
  if (!e.would_fit_after) return "";
  const placement::GroupRoomPlan& p = *e.would_fit_after;
  if (!p.fits) return fmt::format("evicting pods of lower priority would not make room for all of them: {}\n", p.reason);
  std::vector<std::string> pods;
  for (const placement::DefragMove& v : p.moves) pods.push_back(fmt::format("{} on {} (priority {})", v.pod, v.from, v.priority));
  return fmt::format("they would fit together after evicting {} pod{} ({} PodDisruptionBudget violation{}): {}\n", pods.size(),
                     pods.size() == 1 ? "" : "s", p.pdb_violations, p.pdb_violations == 1 ? "" : "s", fmt::join(pods, ", "));
}

}  // namespace

StatusOr<FoundGroup> FindGroup(std::string_view key, std::string_view replica, const inventory::InventorySnapshot& snapshot) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == key.size()) {
    return InvalidArgumentError(fmt::format("podGroup \"{}\": want namespace/name", key));
  }
  std::string_view ns = key.substr(0, slash), name = key.substr(slash + 1);
  // The first API that declares it, else the first whose pods name it.
  std::optional<GroupApi> api;
  for (GroupApi a : kApis) {
    if (!api && snapshot.groups().contains(GroupKey(a, ns, name))) api = a;
  }
  const inventory::GroupTable::Members* members = nullptr;
  for (GroupApi a : kApis) {
    if (api && *api != a) continue;
    members = &snapshot.MembersOf(inventory::GroupTable::MemberKey(a, ns, name, replica));
    if (api || !members->pending.empty() || members->bound > 0) {
      api = a;
      break;
    }
  }
  if (!api) {
    return NotFoundError(fmt::format("pod group {} is not known: no PodGroup, Workload or Coscheduling group of that name, "
                                     "and no pod names it", key));
  }
  if (!replica.empty() && *api != GroupApi::kWorkload) {
    return InvalidArgumentError(fmt::format("replica \"{}\": only a Workload's groups have replica keys ({} is a {})", replica, key,
                                            GroupApiName(*api)));
  }
  auto declared = snapshot.groups().find(GroupKey(*api, ns, name));
  FoundGroup found{.api = *api, .declared = declared != snapshot.groups().end() ? &declared->second : nullptr,
                   .members = members};
  for (const std::shared_ptr<const Pod>& p : members->pending) found.pending.push_back(*p);
  return found;
}

namespace {

// The nodes where `members` hold GPUs on `snapshot`: the bound members', and a pending one's
// being bound (as filter's GangHolds::SiblingNodes finds them in the ledger).
std::vector<std::string> MembersNodes(const inventory::GroupTable::Members& members, const inventory::InventorySnapshot& snapshot) {
  std::set<std::string_view, std::less<>> uids(members.bound_uids.begin(), members.bound_uids.end());
  for (const std::shared_ptr<const Pod>& p : members.pending) uids.insert(p->uid);
  std::vector<std::string> out;
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    for (const Allocation& a : n->allocations) {
      if (uids.contains(a.pod_uid)) out.push_back(n->node.name);
    }
  }
  return out;
}

// The group's plan as filter makes it while no member holds a slot (gang_domains.h): every
// pending member inside one domain of the topology levels where one holds them (the domain of
// the members placed, when some are: MembersNodes), else as they fall back, or waiting for one;
// with members bound it waits for no domain, as filter. `kept`: the domain kept for a waiting
// gang (gang_reservation.h), null: none.
GangPlacement PlanInDomains(const FoundGroup& found, const inventory::InventorySnapshot& snapshot, const ServiceOptions& options,
                            dra::cel::ProgramCache* programs, int64_t now_ms, const DomainReservation* kept) {
  DomainWait wait = found.members->bound > 0 ? DomainWait{.now_ms = now_ms}
                                              : DomainWaitOf(found.pending, options, kept, now_ms);
  std::string required = found.declared != nullptr ? found.declared->required_topology : "";
  return PlanGangInDomains(found.pending, found.pending.size(), required, MembersNodes(*found.members, snapshot), wait, snapshot,
                           options, programs, kept);
}

// "key=value" of `kept` when it is kept for the gang of `pending`, or "".
std::string KeptDomainFor(const std::vector<Pod>& pending, const std::optional<DomainReservation>& kept,
                          const ServiceOptions& options) {
  if (pending.empty() || !kept || !OfKeptGang(pending.front(), *kept)) return "";
  return options.topology_levels.front() + "=" + kept->domain;
}

}  // namespace

StatusOr<GroupExplanation> ExplainGroup(std::string_view key, std::string_view replica,
                                        const inventory::InventorySnapshot& snapshot, const ServiceOptions& options,
                                        dra::cel::ProgramCache* programs, int64_t now_ms) {
  GPUSCHED_ASSIGN_OR_RETURN(FoundGroup found, FindGroup(key, replica, snapshot));
  GroupExplanation e{.group = std::string(key), .replica = std::string(replica)};
  e.api = std::string(GroupApiName(found.api));
  e.declared = found.declared != nullptr;
  e.min_count = e.declared ? found.declared->min_count : 0;
  e.bound = found.members->bound;
  const std::vector<Pod>& pending = found.pending;
  for (const Pod& p : pending) e.pending.push_back(p.namespace_name + "/" + p.name);
  size_t exist = pending.size() + found.members->bound;
  e.missing = static_cast<size_t>(e.min_count) > exist ? static_cast<size_t>(e.min_count) - exist : 0;
  e.not_judged = NotJudged(pending);
  std::string topology = found.declared != nullptr ? found.declared->topology_key : "";
  for (const Pod& p : pending) e.held.push_back(StandingOf(p, snapshot, options.gangs).node);
  std::optional<DomainReservation> kept;  // computed once: the plan and the answer read it
  if (ReservesForGangs(options)) kept = DomainFullness(options).Of(snapshot, options.topology_levels.front())->reserved;
  bool waiting = false;  // for one domain: no eviction is to be made for it (as filter)
  if (!topology.empty()) {
    e.plan = PlanPerDomain(pending, snapshot, options, programs, *found.declared, kept ? &*kept : nullptr, &e.domain);
  } else if (!pending.empty() && std::all_of(e.held.begin(), e.held.end(), [](const std::string& n) { return n.empty(); })) {
    GangPlacement placed = PlanInDomains(found, snapshot, options, programs, now_ms, kept ? &*kept : nullptr);
    e.plan = std::move(placed.plan);
    if (!placed.domain.empty()) e.domain = placed.level + "=" + placed.domain;
    waiting = placed.waiting;
  } else {
    // None pending, or members hold slots (`held`): across the cluster, their slots free, off the
    // domain kept for another gang where they stay off it (as filter plans them).
    e.plan = PlanPendingOffKept(pending, kept ? &*kept : nullptr, snapshot, options, programs);
  }
  if (!e.plan.fits && !e.plan.unplannable && !waiting) {
    e.would_fit_after = GroupEvictions(pending, snapshot, options, programs, found.declared, kept ? &*kept : nullptr, &e.evictions_domain);
  }
  e.kept_domain = KeptDomainFor(pending, kept, options);
  return e;
}

std::string GroupExplanationJson(const GroupExplanation& e) {
  json::Writer w;
  w.StartObject().Member("podGroup", e.group).Member("api", e.api).Member("declared", e.declared);
  if (!e.replica.empty()) w.Member("replica", e.replica);
  w.Key("minCount").Int(e.min_count).Key("bound").Uint(e.bound).Key("missing").Uint(e.missing);
  if (!e.not_judged.empty()) w.Member("notJudged", e.not_judged);
  w.Key("pending").StartArray();
  for (const std::string& p : e.pending) w.String(p);
  w.EndArray();
  w.Member("fits", e.plan.fits);
  if (!e.domain.empty()) w.Member("domain", e.domain);
  if (!e.kept_domain.empty()) w.Member("keptDomain", e.kept_domain);
  if (!e.plan.fits) w.Member("reason", e.plan.reason);
  w.Key("plan").StartArray();
  for (size_t i = 0; i < e.plan.slots.size(); ++i) {
    const placement::GangSlot& s = e.plan.slots[i];
    w.StartObject().Member("pod", e.pending[i]).Member("node", s.node).Member("gpus", GpusText(s.placement));
    if (!e.held[i].empty()) w.Member("heldOn", e.held[i]);
    w.EndObject();
  }
  w.EndArray();
  w.Key("nodes").Uint(e.plan.nodes);
  WriteWouldFitAfter(w, e);
  w.EndObject();
  return w.TakeLine();
}

std::string GroupExplanationText(const GroupExplanation& e) {
  std::string out = fmt::format("pod group {} ({}{}{}): ", e.group, e.api, e.replica.empty() ? "" : ", replica ", e.replica);
  out += e.declared ? (e.min_count > 0 ? fmt::format("a gang of at least {}", e.min_count) : std::string("not a gang"))
                    : std::string("not declared (only pods name it)");
  out += fmt::format("; {} pending, {} bound", e.pending.size(), e.bound);
  out += e.missing > 0 ? fmt::format("; {} more must exist before it can start\n", e.missing) : std::string("\n");
  if (!e.not_judged.empty()) out += fmt::format("not judged by gpusched, left to kube-scheduler: {}\n", e.not_judged);
  if (!e.kept_domain.empty()) {
    out += fmt::format("domain {} is kept for it while it waits: other pods and gangs of its priority or lower stay off it\n",
                       e.kept_domain);
  }
  if (!e.plan.fits) return out + fmt::format("the pending members do not fit together now: {}\n", e.plan.reason) + WouldFitAfterText(e);
  out += fmt::format("the pending members fit together now, on {} node{}{}:\n", e.plan.nodes, e.plan.nodes == 1 ? "" : "s",
                     e.domain.empty() ? "" : " of domain " + e.domain);
  out += fmt::format("{:<40} {:<24} {:<16} {}\n", "POD", "NODE", "GPUS", "HELD ON");
  for (size_t i = 0; i < e.plan.slots.size(); ++i) {
    const placement::GangSlot& s = e.plan.slots[i];
    out += fmt::format("{:<40} {:<24} {:<16} {}\n", e.pending[i], s.node, s.placement.empty() ? "-" : GpusText(s.placement),
                       e.held[i].empty() ? "-" : e.held[i]);
  }
  return out;
}

}  // namespace gpusched::extender
