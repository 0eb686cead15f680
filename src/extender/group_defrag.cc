// File: group_defrag.cc
//
// Room for a pod group: its pending members found by name, planned together with moves (or, for
// explain, evictions) on the snapshot's nodes, applied through the defrag executor, encoded.
#include "gpusched/extender/group_defrag.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <deque>
#include <memory>
#include <set>
#include <utility>

#include "gpusched/extender/gang_holds.h"
#include "gpusched/extender/group_explain.h"
#include "gpusched/extender/workload_cache.h"
#include "gpusched/json/writer.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::extender {
namespace {

// The members as the planners take them, pointing into `pods`.
std::vector<placement::GangMember> MembersOf(const std::vector<Pod>& pods) {
  std::vector<placement::GangMember> out;
  for (const Pod& p : pods) out.push_back(placement::GangMember{.pod = &p, .request = placement::AnalyzePod(p)});
  return out;
}

// The snapshot's nodes and budgets as the group planners take them: every hold kept for a
// member released, as the gang planner sees them (gang_holds.h's ReleasedNodes).
struct GroupInput {
  std::deque<placement::NodeState> released;  // stable addresses: input.nodes points into it
  placement::DefragInput input;
};

std::unique_ptr<GroupInput> InputOf(const std::vector<Pod>& members, const inventory::InventorySnapshot& snapshot,
                                    const scoring::TargetWorkload* workload) {
  std::set<std::string, std::less<>> uids;
  for (const Pod& p : members) uids.insert(p.uid);
  auto out = std::make_unique<GroupInput>();
  out->input = placement::DefragInput{.nodes = ReleasedNodes(uids, snapshot, nullptr, /*nominations=*/true, &out->released),
                                      .budgets = snapshot.budgets(), .workload = workload};
  return out;
}

// Plans `plan_in` with the members inside one domain of `key` (anywhere without a key), the
// best plan (`better`) winning, its domain in *domain.
placement::GroupRoomPlan PerDomain(const placement::DefragInput& in, const std::string& key, std::string* domain,
                                   const std::function<placement::GroupRoomPlan(const placement::NodeNames*)>& plan_in,
                                   const std::function<bool(const placement::GroupRoomPlan&, const placement::GroupRoomPlan&)>& better) {
  if (key.empty()) return plan_in(nullptr);
  return BestInDomains<placement::GroupRoomPlan>(
      in.nodes, key, domain, [&](const placement::NodeNames& names) { return plan_in(&names); }, better);
}

// "ns/name" of each pending member.
std::string NameOf(const Pod& p) { return p.namespace_name + "/" + p.name; }

}  // namespace

StatusOr<GroupDefragResult> PlanGroupDefrag(std::string_view key, std::string_view replica, int max_moves,
                                            const EvaluationInputs& inputs, const std::function<bool(std::string_view)>& binding) {
  if (max_moves < 0) return InvalidArgumentError(fmt::format("maxMoves {}: want >= 0", max_moves));
  const inventory::InventorySnapshot& snapshot = *inputs.snapshot;
  GPUSCHED_ASSIGN_OR_RETURN(FoundGroup found, FindGroup(key, replica, snapshot));
  GroupDefragResult r{.group = std::string(key)};
  for (Pod& p : found.pending) {
    if (!binding || !binding(p.uid)) r.pending.push_back(std::move(p));  // one being bound needs no room
  }
  if (r.pending.empty()) {
    return FailedPreconditionError(fmt::format("pod group {} has no pending members ({} bound): nothing to make room for", key,
                                               found.members->bound));
  }
  std::shared_ptr<const scoring::TargetWorkload> workload = inputs.workloads != nullptr ? inputs.workloads->Get(snapshot) : nullptr;
  std::vector<placement::GangMember> members = MembersOf(r.pending);
  placement::DefragOptions options{.max_moves = max_moves, .placement = inputs.options->placement};
  std::unique_ptr<GroupInput> in = InputOf(r.pending, snapshot, workload.get());
  std::optional<DomainReservation> kept = KeptReservation(inputs);
  std::string topology = found.declared != nullptr ? found.declared->topology_key : "";
  SeeKeptDomain(r.pending, kept ? &*kept : nullptr, snapshot, *inputs.options, &in->input);
  placement::GroupDra dra{.state = &snapshot.dra(), .programs = inputs.programs, .options = inputs.options->dra};
  r.plan = PerDomain(
      in->input, topology, &r.domain,
      [&](const placement::NodeNames* domain) { return placement::MakeRoomForGroup(members, in->input, options, dra, domain); },
      [](const placement::GroupRoomPlan& a, const placement::GroupRoomPlan& b) { return a.moves.size() < b.moves.size(); });
  for (const Pod& p : r.pending) {
    const Allocation* slot = SlotOf(p.uid, snapshot);
    r.slots.push_back(slot != nullptr ? std::optional<Allocation>(*slot) : std::nullopt);
  }
  return r;
}

DefragApplied ApplyGroupDefrag(const GroupDefragResult& r, const DefragExecutor& executor, UnjudgedPolicy unjudged) {
  if (!r.plan.fits) return DefragApplied{};
  std::vector<PendingRoom> rooms;
  for (size_t i = 0; i < r.pending.size(); ++i) {
    const Pod& p = r.pending[i];
    const placement::GangSlot& slot = r.plan.slots[i];
    if (slot.placement.empty()) continue;  // a member without GPUs holds nothing
    rooms.push_back(PendingRoom{.about = Allocation{.pod_uid = p.uid, .pod_namespace = p.namespace_name, .pod_name = p.name},
                                .node = slot.node, .placement = slot.placement, .replaced = r.slots[i]});
  }
  Unjudged why{.what = r.plan.not_judged, .pod = "a member of pod group " + r.group, .node = "the nodes of its plan"};
  return executor.ApplyRoom(r.plan.moves, rooms, why, unjudged);
}

placement::GroupRoomPlan GroupEvictions(const std::vector<Pod>& pending, const inventory::InventorySnapshot& snapshot,
                                        const ServiceOptions& options, dra::cel::ProgramCache* programs,
                                        const PodGroup* declared, const DomainReservation* kept, std::string* domain) {
  std::string topology_key = declared != nullptr ? declared->topology_key : "";
  std::vector<placement::GangMember> members = MembersOf(pending);
  placement::DefragOptions defrag{.max_moves = 1000, .placement = options.placement};
  placement::GroupDra dra{.state = &snapshot.dra(), .programs = programs, .options = options.dra};
  std::unique_ptr<GroupInput> in = InputOf(pending, snapshot, nullptr);
  LeaveOutKeptDomain(pending, kept, snapshot, options, &in->input.nodes);
  std::string ignored;
  return PerDomain(
      in->input, topology_key, domain != nullptr ? domain : &ignored,
      [&](const placement::NodeNames* domain) { return placement::EvictForGroup(members, in->input, defrag, dra, domain); },
      [](const placement::GroupRoomPlan& a, const placement::GroupRoomPlan& b) {
        return std::make_pair(a.moves.size(), a.pdb_violations) < std::make_pair(b.moves.size(), b.pdb_violations);
      });
}

std::map<std::string, std::vector<const placement::NodeState*>> DomainsOf(std::span<const placement::NodeState* const> nodes,
                                                                          const std::string& topology_key) {
  std::map<std::string, std::vector<const placement::NodeState*>> out;
  for (const placement::NodeState* n : nodes) {
    if (n == nullptr) continue;
    auto label = n->node.labels.find(topology_key);
    if (label != n->node.labels.end()) out[label->second].push_back(n);
  }
  return out;
}

std::string GroupDefragJson(const GroupDefragResult& r) {
  json::Writer w;
  w.StartObject().Member("podGroup", r.group).Member("fits", r.plan.fits);
  if (!r.domain.empty()) w.Member("domain", r.domain);
  w.Key("pending").StartArray();
  for (const Pod& p : r.pending) w.String(NameOf(p));
  w.EndArray().Key("plan").StartArray();
  for (size_t i = 0; i < r.plan.slots.size(); ++i) {
    const placement::GangSlot& s = r.plan.slots[i];
    w.StartObject().Member("pod", NameOf(r.pending[i])).Member("node", s.node).Member("gpus", GpusText(s.placement)).EndObject();
  }
  w.EndArray().Key("nodes").Uint(r.plan.nodes);
  WriteMoves(w, r.plan.moves);
  w.Key("fragmentedPct").StartObject();
  w.Key("before").Fixed(r.plan.frag_before_pct, 4).Key("after").Fixed(r.plan.frag_after_pct, 4).EndObject();
  w.Member("reason", r.plan.reason).Member("notJudged", r.plan.not_judged);
  WriteApplied(w, r.applied);
  w.EndObject();
  return w.TakeLine();
}

std::string GroupDefragText(const GroupDefragResult& r) {
  const placement::GroupRoomPlan& plan = r.plan;
  size_t n = plan.moves.size();
  std::string where = r.domain.empty() ? "" : fmt::format(" in domain {}", r.domain);
  std::string out = plan.fits ? fmt::format("pod group {}: its {} pending members fit together on {} node{}{} after {} move{}", r.group,
                                            r.pending.size(), plan.nodes, plan.nodes == 1 ? "" : "s", where, n, n == 1 ? "" : "s")
                              : fmt::format("pod group {}: no plan: {}", r.group, plan.reason);
  out += fmt::format("; fragmented {:.2f}% -> {:.2f}%{}\n", plan.frag_before_pct, plan.frag_after_pct,
                     r.applied ? "" : " (dry run: nothing was evicted)");
  if (!plan.not_judged.empty()) out += fmt::format("not judged by gpusched, left to kube-scheduler: {}\n", plan.not_judged);
  if (plan.fits) {
    out += fmt::format("{:<40} {:<24} {}\n", "MEMBER", "NODE", "GPUS");
    for (size_t i = 0; i < plan.slots.size(); ++i) {
      const placement::GangSlot& s = plan.slots[i];
      out += fmt::format("{:<40} {:<24} {}\n", NameOf(r.pending[i]), s.node, s.placement.empty() ? "-" : GpusText(s.placement));
    }
  }
  return out + MovesText(plan.moves, r.applied);
}

}  // namespace gpusched::extender
