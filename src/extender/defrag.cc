// File: defrag.cc
//
// The defrag verb's plan: for a pending pod (its GPUs, its claims, or its extended resources
// served by DRA) or a fragmentation target, and the plan with what applying it did as JSON or as
// a table. Applying it is defrag_executor.cc's.
#include "gpusched/extender/defrag.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gpusched/extender/workload_cache.h"
#include "gpusched/json/writer.h"
#include "gpusched/placement/defrag_planner.h"
#include "gpusched/placement/pod_judge.h"

namespace gpusched::extender {
namespace {

using placement::DefragMove;
using placement::DefragPlan;

// The device indices a placement holds (mGPU), ascending.
std::vector<int> GpusOf(const Placement& p) {
  std::set<int> gpus;
  for (const ContainerAssignment& c : p.containers) gpus.insert(c.gpu_indices.begin(), c.gpu_indices.end());
  return {gpus.begin(), gpus.end()};
}

// "gpus", "wholeGpus" and "devices" (DRA: "driver/pool/device" of the claims' devices).
void WriteGpus(json::Writer& w, const Placement& p) {
  w.Key("gpus").StartArray();
  for (int g : GpusOf(p)) w.Int(g);
  w.EndArray().Member("wholeGpus", p.whole_gpus).Key("devices").StartArray();
  for (const std::string& d : p.devices) w.String(d);
  w.EndArray();
}

void WriteNameOrNull(json::Writer& w, std::string_view key, const std::string& s) {
  w.Key(key);
  if (s.empty()) {
    w.Null();
  } else {
    w.String(s);
  }
}

// The request of the pod to make room for, or why no move can help it.
StatusOr<placement::PodRequest> RoomFor(const Pod& pod, const std::optional<Allocation>& placed) {
  std::string key = pod.namespace_name + "/" + pod.name;
  if (placed) return FailedPreconditionError(fmt::format("pod {} is already placed on {}", key, placed->node_name));
  placement::PodRequest request = placement::AnalyzePod(pod);
  if (!request.schedulable()) return InvalidArgumentError(fmt::format("pod {}: {}", key, request.RefusalReason()));
  if (!request.asks_gpu()) {
    return InvalidArgumentError(fmt::format("pod {} asks for no GPU: nothing to make room for", key));
  }
  return request;
}

}  // namespace

void WriteMoves(json::Writer& w, const std::vector<DefragMove>& moves) {
  w.Key("moves").StartArray();
  for (const DefragMove& m : moves) {
    w.StartObject().Member("pod", m.pod).Member("uid", m.uid).Member("priority", m.priority);
    w.Member("from", m.from).Member("to", m.to);
    WriteGpus(w, m.placement);
    w.Member("usesBudget", m.uses_budget).EndObject();
  }
  w.EndArray();
}

void WriteApplied(json::Writer& w, const std::optional<DefragApplied>& applied) {
  w.Key("applied");
  if (!applied) {
    w.Null();
  } else {
    w.StartArray();
    for (const DefragApplied::Move& m : applied->moves) {
      w.StartObject().Member("pod", m.pod).Member("evicted", m.evicted).Member("error", m.error).EndObject();
    }
    w.EndArray();
  }
  w.Member("held", applied && applied->held);
}

std::string DefragJson(const DefragResult& r) {
  const DefragPlan& plan = r.plan;
  const DefragAsk& ask = r.ask;
  const std::optional<DefragApplied>& applied = r.applied;
  json::Writer w;
  w.StartObject().Member("fits", plan.fits);
  WriteNameOrNull(w, "pod", ask.pod ? ask.pod->namespace_name + "/" + ask.pod->name : "");
  w.Key("targetFragPct");
  if (ask.pod) {
    w.Null();
  } else {
    w.Double(ask.target_frag_pct);
  }
  WriteNameOrNull(w, "node", plan.node);
  WriteGpus(w, plan.placement);
  WriteMoves(w, plan.moves);
  w.Key("fragmentedPct").StartObject();
  w.Key("before").Fixed(plan.frag_before_pct, 4).Key("after").Fixed(plan.frag_after_pct, 4).EndObject();
  w.Member("reason", plan.reason).Member("notJudged", plan.not_judged);
  WriteApplied(w, applied);
  w.EndObject();
  return w.TakeLine();
}

std::string GpusText(const Placement& p) {
  if (HasPayload(p.kind, Payload::kCount)) return fmt::format("{} whole", p.whole_gpus);
  if (HasPayload(p.kind, Payload::kDevices)) {
    std::vector<std::string> names;  // the device names without driver and pool
    for (const std::string& d : p.devices) names.push_back(d.substr(d.rfind('/') + 1));
    return fmt::format("{}", fmt::join(names, ","));
  }
  return fmt::format("{}", fmt::join(GpusOf(p), ","));
}

std::string DefragText(const DefragResult& r) {
  const DefragPlan& plan = r.plan;
  const DefragAsk& ask = r.ask;
  const std::optional<DefragApplied>& applied = r.applied;
  std::string out;
  std::string what = ask.pod ? fmt::format("pod {}/{}", ask.pod->namespace_name, ask.pod->name)
                             : fmt::format("fragmentation target {:.2f}%", ask.target_frag_pct);
  if (plan.fits && ask.pod) {
    out = fmt::format("{}: fits on {} (GPUs {}) after {} move{}", what, plan.node, GpusText(plan.placement),
                      plan.moves.size(), plan.moves.size() == 1 ? "" : "s");
  } else if (plan.fits) {
    out = fmt::format("{}: reached after {} move{}", what, plan.moves.size(), plan.moves.size() == 1 ? "" : "s");
  } else {
    out = fmt::format("{}: no plan: {}", what, plan.reason);
  }
  out += fmt::format("; fragmented {:.2f}% -> {:.2f}%{}\n", plan.frag_before_pct, plan.frag_after_pct,
                     applied ? "" : " (dry run: nothing was evicted)");
  if (!plan.not_judged.empty()) out += fmt::format("not judged by gpusched, left to kube-scheduler: {}\n", plan.not_judged);
  return out + MovesText(plan.moves, applied);
}

std::string MovesText(const std::vector<DefragMove>& moves, const std::optional<DefragApplied>& applied) {
  std::string out;
  for (const DefragApplied::Move& m : applied ? applied->moves : std::vector<DefragApplied::Move>{}) {
    out += m.evicted ? fmt::format("evicted {}\n", m.pod) : fmt::format("stopped at {}: {}\n", m.pod, m.error);
  }
  if (moves.empty()) return out;
  out += fmt::format("{:<4} {:<40} {:<20} {:<20} {:<10} {:>8}  {}\n", "#", "POD", "FROM", "TO", "GPUS", "PRIORITY", "BUDGET");
  for (size_t i = 0; i < moves.size(); ++i) {
    const DefragMove& m = moves[i];
    out += fmt::format("{:<4} {:<40} {:<20} {:<20} {:<10} {:>8}  {}\n", i + 1, m.pod, m.from, m.to.empty() ? "-" : m.to,
                       GpusText(m.placement), m.priority, m.uses_budget ? "uses allowance" : "-");
  }
  return out;
}

bool LeaveOutKeptDomain(std::span<const Pod> pending, const DomainReservation* kept, const inventory::InventorySnapshot& snapshot,
                        const ServiceOptions& options, std::vector<const placement::NodeState*>* nodes) {
  if (KeptOffFor(pending, kept, snapshot, options).empty()) return false;
  std::erase_if(*nodes, [&](const placement::NodeState* n) { return InKeptDomain(n, kept->domain, options); });
  return true;
}

void SeeKeptDomain(std::span<const Pod> pending, const DomainReservation* kept, const inventory::InventorySnapshot& snapshot,
                   const ServiceOptions& options, placement::DefragInput* in) {
  if (kept == nullptr || LeaveOutKeptDomain(pending, kept, snapshot, options, &in->nodes)) return;
  auto closed = std::make_shared<std::set<std::string, std::less<>>>();
  for (const placement::NodeState* n : in->nodes) {
    if (InKeptDomain(n, kept->domain, options)) closed->insert(n->node.name);
  }
  if (closed->empty()) return;
  in->no_landing = std::move(closed);
  in->no_landing_priority = kept->priority;  // as filter judges a pod outside gangs (KeptOffReserved)
}

StatusOr<DefragResult> PlanDefrag(const DefragAsk& ask, const std::optional<Allocation>& placed,
                                  const EvaluationInputs& inputs) {
  if (!ask.pod && ask.target_frag_pct < 0) {
    return InvalidArgumentError(fmt::format("targetFrag {}: want a percentage >= 0", ask.target_frag_pct));
  }
  if (ask.max_moves < 0) return InvalidArgumentError(fmt::format("maxMoves {}: want >= 0", ask.max_moves));
  std::shared_ptr<const scoring::TargetWorkload> workload =
      inputs.workloads != nullptr ? inputs.workloads->Get(*inputs.snapshot) : nullptr;
  placement::DefragInput in{.budgets = inputs.snapshot->budgets(), .workload = workload.get()};
  // While a domain is kept for a waiting gang (gang_reservation.h), a pod's plan sees it as
  // filter does (SeeKeptDomain); consolidation leaves it out: no pod is moved into or out of it.
  std::optional<DomainReservation> reserved = KeptReservation(inputs);
  for (const auto& n : inputs.snapshot->nodes()) in.nodes.push_back(n.get());
  if (ask.pod) {
    SeeKeptDomain(std::span(&*ask.pod, 1), reserved ? &*reserved : nullptr, *inputs.snapshot, *inputs.options, &in);
  } else if (reserved) {
    std::erase_if(in.nodes, [&](const placement::NodeState* n) { return InKeptDomain(n, reserved->domain, *inputs.options); });
  }
  placement::DefragOptions options{.max_moves = ask.max_moves, .placement = inputs.options->placement};
  DefragPlan plan;
  if (ask.pod) {
    GPUSCHED_ASSIGN_OR_RETURN(placement::PodRequest request, RoomFor(*ask.pod, placed));
    plan = placement::JudgeOf(*ask.pod, request, JudgeContextOf(inputs))->MakeRoom(in, options);
  } else {
    plan = placement::Consolidate(ask.target_frag_pct, in, options);
  }
  return DefragResult{.ask = ask, .plan = std::move(plan)};
}


}  // namespace gpusched::extender
