// File: group_defrag.cc
//
// Room for a pod group: its pending members found by name, planned together with moves (or, for
// explain, evictions) on the snapshot's nodes, applied through the defrag executor, encoded.
#include "gpusched/extender/group_defrag.h"

#include <fmt/format.h>

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

// The snapshot's nodes and budgets as the defrag planners take them.
placement::DefragInput InputOf(const inventory::InventorySnapshot& snapshot, const scoring::TargetWorkload* workload) {
  placement::DefragInput in{.budgets = snapshot.budgets(), .workload = workload};
  for (const auto& n : snapshot.nodes()) in.nodes.push_back(n.get());
  return in;
}

// "ns/name" of each pending member.
std::string NameOf(const Pod& p) { return p.namespace_name + "/" + p.name; }

}  // namespace

StatusOr<GroupDefragResult> PlanGroupDefrag(std::string_view key, std::string_view replica, int max_moves,
                                            const EvaluationInputs& inputs) {
  if (max_moves < 0) return InvalidArgumentError(fmt::format("maxMoves {}: want >= 0", max_moves));
  GPUSCHED_ASSIGN_OR_RETURN(FoundGroup found, FindGroup(key, replica, *inputs.snapshot));
  if (found.pending.empty()) {
    return FailedPreconditionError(fmt::format("pod group {} has no pending members ({} bound): nothing to make room for", key,
                                               found.members->bound));
  }
  GroupDefragResult r{.group = std::string(key), .pending = std::move(found.pending)};
  std::shared_ptr<const scoring::TargetWorkload> workload =
      inputs.workloads != nullptr ? inputs.workloads->Get(*inputs.snapshot) : nullptr;
  std::vector<placement::GangMember> members = MembersOf(r.pending);
  placement::DefragOptions options{.max_moves = max_moves, .placement = inputs.options->placement};
  r.plan = placement::MakeRoomForGroup(members, InputOf(*inputs.snapshot, workload.get()), options);
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
                                .node = slot.node, .placement = slot.placement});
  }
  Unjudged why{.what = r.plan.not_judged, .pod = "a member of pod group " + r.group, .node = "the nodes of its plan"};
  return executor.ApplyRoom(r.plan.moves, rooms, why, unjudged);
}

placement::GroupRoomPlan GroupEvictions(const std::vector<Pod>& pending, const inventory::InventorySnapshot& snapshot,
                                        const ServiceOptions& options) {
  std::vector<placement::GangMember> members = MembersOf(pending);
  placement::DefragOptions defrag{.max_moves = 1000, .placement = options.placement};
  return placement::EvictForGroup(members, InputOf(snapshot, nullptr), defrag);
}

std::string GroupDefragJson(const GroupDefragResult& r) {
  json::Writer w;
  w.StartObject().Member("podGroup", r.group).Member("fits", r.plan.fits).Key("pending").StartArray();
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
  std::string out = plan.fits ? fmt::format("pod group {}: its {} pending members fit together on {} node{} after {} move{}", r.group,
                                            r.pending.size(), plan.nodes, plan.nodes == 1 ? "" : "s", n, n == 1 ? "" : "s")
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
