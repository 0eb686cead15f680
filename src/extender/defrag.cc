#include "gpusched/extender/defrag.h"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "gpusched/extender/workload_cache.h"
#include "gpusched/json/json.h"
#include "gpusched/placement/defrag_planner.h"

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

void AppendGpus(std::string* out, const Placement& p) {
  *out += fmt::format(R"("gpus":[{}],"wholeGpus":{})", fmt::join(GpusOf(p), ","), p.whole_gpus);
}

void AppendNameOrNull(std::string* out, const std::string& s) {
  if (s.empty()) {
    *out += "null";
  } else {
    json::AppendString(out, s);
  }
}

std::string PlanJson(const DefragPlan& plan, const DefragAsk& ask) {
  std::string out = fmt::format(R"({{"fits":{},"pod":)", plan.fits);
  AppendNameOrNull(&out, ask.pod ? ask.pod->namespace_name + "/" + ask.pod->name : "");
  out += ask.pod ? R"(,"targetFragPct":null)" : fmt::format(R"(,"targetFragPct":{})", ask.target_frag_pct);
  out += R"(,"node":)";
  AppendNameOrNull(&out, plan.node);
  out += ",";
  AppendGpus(&out, plan.placement);
  out += R"(,"moves":[)";
  for (size_t i = 0; i < plan.moves.size(); ++i) {
    const DefragMove& m = plan.moves[i];
    out += i > 0 ? R"(,{"pod":)" : R"({"pod":)";
    json::AppendString(&out, m.pod);
    out += R"(,"uid":)";
    json::AppendString(&out, m.uid);
    out += fmt::format(R"(,"priority":{},"from":)", m.priority);
    json::AppendString(&out, m.from);
    out += R"(,"to":)";
    json::AppendString(&out, m.to);
    out += ",";
    AppendGpus(&out, m.placement);
    out += fmt::format(R"(,"usesBudget":{}}})", m.uses_budget);
  }
  out += fmt::format(R"(],"fragmentedPct":{{"before":{:.4f},"after":{:.4f}}},"reason":)", plan.frag_before_pct,
                     plan.frag_after_pct);
  json::AppendString(&out, plan.reason);
  return out + "}\n";
}

std::string GpusText(const Placement& p) {
  if (p.kind == RequestKind::kWholeGpu) return fmt::format("{} whole", p.whole_gpus);
  return fmt::format("{}", fmt::join(GpusOf(p), ","));
}

std::string PlanText(const DefragPlan& plan, const DefragAsk& ask) {
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
  out += fmt::format("; fragmented {:.2f}% -> {:.2f}% (dry run: nothing was evicted)\n", plan.frag_before_pct,
                     plan.frag_after_pct);
  if (plan.moves.empty()) return out;
  out += fmt::format("{:<4} {:<40} {:<20} {:<20} {:<10} {:>8}  {}\n", "#", "POD", "FROM", "TO", "GPUS", "PRIORITY", "BUDGET");
  for (size_t i = 0; i < plan.moves.size(); ++i) {
    const DefragMove& m = plan.moves[i];
    out += fmt::format("{:<4} {:<40} {:<20} {:<20} {:<10} {:>8}  {}\n", i + 1, m.pod, m.from, m.to, GpusText(m.placement),
                       m.priority, m.uses_budget ? "uses allowance" : "-");
  }
  return out;
}

// The request of the pod to make room for, or why no move can help it.
StatusOr<placement::PodRequest> RoomFor(const Pod& pod, const std::optional<Allocation>& placed) {
  std::string key = pod.namespace_name + "/" + pod.name;
  if (placed) return FailedPreconditionError(fmt::format("pod {} is already placed on {}", key, placed->node_name));
  placement::PodRequest request = placement::AnalyzePod(pod);
  if (!request.schedulable()) return InvalidArgumentError(fmt::format("pod {}: {}", key, request.RefusalReason()));
  if (request.kind == RequestKind::kNone) {
    if (pod.resource_claims.empty()) return InvalidArgumentError(fmt::format("pod {} asks for no GPU: nothing to make room for", key));
    return InvalidArgumentError(
        fmt::format("pod {} asks for devices through ResourceClaims: defrag plans whole-GPU and mGPU pods only", key));
  }
  return request;
}

}  // namespace

StatusOr<std::string> PlanDefrag(const DefragAsk& ask, const std::optional<Allocation>& placed,
                                 const EvaluationInputs& inputs, bool text) {
  if (!ask.pod && ask.target_frag_pct < 0) {
    return InvalidArgumentError(fmt::format("targetFrag {}: want a percentage >= 0", ask.target_frag_pct));
  }
  if (ask.max_moves < 0) return InvalidArgumentError(fmt::format("maxMoves {}: want >= 0", ask.max_moves));
  std::shared_ptr<const scoring::TargetWorkload> workload =
      inputs.workloads != nullptr ? inputs.workloads->Get(*inputs.snapshot) : nullptr;
  placement::DefragInput in{.budgets = inputs.snapshot->budgets(), .workload = workload.get()};
  for (const auto& n : inputs.snapshot->nodes()) in.nodes.push_back(n.get());
  placement::DefragOptions options{.max_moves = ask.max_moves, .placement = inputs.options->placement};
  DefragPlan plan;
  if (ask.pod) {
    GPUSCHED_ASSIGN_OR_RETURN(placement::PodRequest request, RoomFor(*ask.pod, placed));
    plan = placement::MakeRoom(request, ask.pod->uid, in, options);
  } else {
    plan = placement::Consolidate(ask.target_frag_pct, in, options);
  }
  return text ? PlanText(plan, ask) : PlanJson(plan, ask);
}

}  // namespace gpusched::extender
