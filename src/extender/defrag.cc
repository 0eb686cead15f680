// File: defrag.cc
//
// The defrag verb: the plan for a pending pod or a fragmentation target, written as JSON or as a
// table; and applying it: every move checked and every hold made (and published) before the first
// eviction, then evictions in order, stopping at the first refusal.
#include "gpusched/extender/defrag.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <vector>

#include "gpusched/common/log.h"
#include "gpusched/dra/extended_resources.h"
#include "gpusched/extender/workload_cache.h"
#include "gpusched/json/writer.h"
#include "gpusched/placement/defrag_planner.h"
#include "gpusched/placement/dra_defrag.h"
#include "gpusched/placement/nomination.h"

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

// What applying a plan did: per move made or tried, and whether the pending pod's GPUs are held.
struct Applied {
  struct Move {
    std::string pod;
    bool evicted = false;
    std::string error;
  };
  std::vector<Move> moves;
  bool held = false;
};

std::string PlanJson(const DefragPlan& plan, const DefragAsk& ask, const std::optional<Applied>& applied) {
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
  w.Key("moves").StartArray();
  for (const DefragMove& m : plan.moves) {
    w.StartObject().Member("pod", m.pod).Member("uid", m.uid).Member("priority", m.priority);
    w.Member("from", m.from).Member("to", m.to);
    WriteGpus(w, m.placement);
    w.Member("usesBudget", m.uses_budget).EndObject();
  }
  w.EndArray().Key("fragmentedPct").StartObject();
  w.Key("before").Fixed(plan.frag_before_pct, 4).Key("after").Fixed(plan.frag_after_pct, 4).EndObject();
  w.Member("reason", plan.reason).Member("notJudged", plan.not_judged).Key("applied");
  if (!applied) {
    w.Null();
  } else {
    w.StartArray();
    for (const Applied::Move& m : applied->moves) {
      w.StartObject().Member("pod", m.pod).Member("evicted", m.evicted).Member("error", m.error).EndObject();
    }
    w.EndArray();
  }
  w.Member("held", applied && applied->held).EndObject();
  return w.TakeLine();
}

std::string GpusText(const Placement& p) {
  if (p.kind == RequestKind::kWholeGpu) return fmt::format("{} whole", p.whole_gpus);
  if (p.kind == RequestKind::kDra) {
    std::vector<std::string> names;  // the device names without driver and pool
    for (const std::string& d : p.devices) names.push_back(d.substr(d.rfind('/') + 1));
    return fmt::format("{}", fmt::join(names, ","));
  }
  return fmt::format("{}", fmt::join(GpusOf(p), ","));
}

std::string PlanText(const DefragPlan& plan, const DefragAsk& ask, const std::optional<Applied>& applied) {
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
  for (const Applied::Move& m : applied ? applied->moves : std::vector<Applied::Move>{}) {
    out += m.evicted ? fmt::format("evicted {}\n", m.pod) : fmt::format("stopped at {}: {}\n", m.pod, m.error);
  }
  if (plan.moves.empty()) return out;
  out += fmt::format("{:<4} {:<40} {:<20} {:<20} {:<10} {:>8}  {}\n", "#", "POD", "FROM", "TO", "GPUS", "PRIORITY", "BUDGET");
  for (size_t i = 0; i < plan.moves.size(); ++i) {
    const DefragMove& m = plan.moves[i];
    out += fmt::format("{:<4} {:<40} {:<20} {:<20} {:<10} {:>8}  {}\n", i + 1, m.pod, m.from, m.to, GpusText(m.placement),
                       m.priority, m.uses_budget ? "uses allowance" : "-");
  }
  return out;
}

// The request of the pod to make room for (kNone: its ResourceClaims), or why no move can help it.
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

// Takes the hold about pod `about_uid` out of `node`'s annotation (best effort: else it runs out).
void Unpublish(const DefragApplier& with, const std::string& node, const std::string& about_uid) {
  if (with.publisher == nullptr) return;
  Status s = with.publisher->Withdraw(node, about_uid);
  if (!s.ok()) log::Warning("defrag hold about pod {} on node {} left to run out: {}", about_uid, node, s.message());
}

// A node changed under a hold being written is checked again this many times.
constexpr int kHoldAttempts = 3;

// Holds `placement` on `node` for `holder` about pod `about` (Inventory::HoldFor), and writes the
// hold to the node through the publisher, checking it again when the node changed meanwhile.
Status Hold(const DefragApplier& with, const std::string& holder, const Allocation& about, const std::string& node,
            const Placement& placement, const std::set<std::string, std::less<>>& leaving) {
  for (int attempt = 1;; ++attempt) {
    StatusOr<inventory::HoldMade> made = with.inventory->HoldFor(holder, about, node, placement, with.hold_ttl, leaving);
    if (!made.ok() || with.publisher == nullptr) return made.status();
    Status written = with.publisher->Publish(made->hold, made->node_version);
    if (written.ok()) {
      if (!made->replaced_node.empty()) Unpublish(with, made->replaced_node, about.pod_uid);  // moved from there
      return written;
    }
    with.inventory->DropHold(about.pod_uid);
    if (written.code() != StatusCode::kAborted || attempt == kHoldAttempts) {
      if (written.code() == StatusCode::kUnavailable) Unpublish(with, node, about.pod_uid);  // it may have landed
      return FailedPreconditionError(fmt::format("hold on {} for {}/{} not written: {}", node, about.pod_namespace,
                                                 about.pod_name, written.message()));
    }
  }
}

// Ends the hold about pod `about_uid` on `node`, here and in the node's annotation.
void Unhold(const DefragApplier& with, const std::string& node, const std::string& about_uid) {
  with.inventory->DropHold(about_uid);
  Unpublish(with, node, about_uid);
}

// The pod a move is about, as the hold and the eviction name it.
Allocation About(const DefragMove& m) {
  size_t slash = m.pod.find('/');
  return Allocation{.pod_uid = m.uid, .pod_namespace = m.pod.substr(0, slash), .pod_name = m.pod.substr(slash + 1)};
}

// Checks what move `m` depends on before anything is held or evicted: a controller to recreate
// the pod, and an eviction the API server would accept now (a dry run: the UID, the
// PodDisruptionBudgets).
Status CheckMove(const DefragMove& m, const DefragApplier& with) {
  if (m.controller_uid.empty()) return FailedPreconditionError(fmt::format("pod {} has no controller: nothing would recreate it", m.pod));
  Allocation about = About(m);
  Status s = with.evictor->Evict(about.pod_namespace, about.pod_name, m.uid, /*dry_run=*/true);
  return s.ok() ? s : Status(s.code(), fmt::format("{} (dry run: nothing was evicted)", s.message()));
}

// What a plan stopped before its first eviction did: nothing. Lists `stopped` (the pending pod,
// or a move) with `why`, and every move as not evicted.
Applied Stopped(const DefragPlan& plan, const std::string& stopped, const Status& why) {
  Applied out;
  if (std::none_of(plan.moves.begin(), plan.moves.end(), [&](const DefragMove& m) { return m.pod == stopped; })) {
    out.moves.push_back(Applied::Move{.pod = stopped, .error = why.message()});
  }
  for (const DefragMove& m : plan.moves) {
    out.moves.push_back(Applied::Move{.pod = m.pod, .error = m.pod == stopped ? why.message() : "not evicted: the plan stopped"});
  }
  return out;
}

// Applies `plan` (see defrag.h): everything it depends on is checked, and every hold made, before
// the first eviction. `ask.pod`, when set, is the pending pod the plan makes room for;
// `pending_uid` its UID.
Applied Apply(const DefragPlan& plan, const DefragAsk& ask, const std::string& pending_uid, const DefragApplier& with) {
  std::set<std::string, std::less<>> leaving;
  for (const DefragMove& m : plan.moves) leaving.insert(m.uid);
  for (const DefragMove& m : plan.moves) {
    if (Status s = CheckMove(m, with); !s.ok()) return Stopped(plan, m.pod, s);
  }
  Applied out;
  if (!pending_uid.empty()) {
    Allocation about{.pod_uid = pending_uid, .pod_namespace = ask.pod->namespace_name, .pod_name = ask.pod->name};
    Status held = Hold(with, pending_uid, about, plan.node, plan.placement, leaving);
    if (!held.ok()) return Stopped(plan, about.pod_namespace + "/" + about.pod_name, held);
    out.held = true;
  }
  for (size_t i = 0; i < plan.moves.size(); ++i) {
    const DefragMove& m = plan.moves[i];
    Status s = Hold(with, placement::ControllerHoldKey(m.controller_uid), About(m), m.to, m.placement, leaving);
    if (s.ok()) continue;
    for (size_t k = 0; k < i; ++k) Unhold(with, plan.moves[k].to, plan.moves[k].uid);
    if (out.held) Unhold(with, plan.node, pending_uid);
    return Stopped(plan, m.pod, s);
  }
  // Evictions in order. One refused now (a budget used up meanwhile) stops the plan: the moves
  // made stay made, the pending pod keeps its hold, the holds of the moves not made end; one whose
  // outcome is unknown (Unavailable) keeps its hold too, since its pod may be gone.
  for (size_t i = 0; i < plan.moves.size(); ++i) {
    const DefragMove& m = plan.moves[i];
    Allocation about = About(m);
    Status s = with.evictor->Evict(about.pod_namespace, about.pod_name, m.uid, /*dry_run=*/false);
    bool unknown = s.code() == StatusCode::kUnavailable;  // it may have been carried out
    out.moves.push_back(Applied::Move{.pod = m.pod, .evicted = s.ok(),
                                      .error = s.ok() ? "" : unknown ? "outcome unknown: " + s.message() : s.message()});
    if (s.ok()) continue;
    for (size_t k = unknown ? i + 1 : i; k < plan.moves.size(); ++k) Unhold(with, plan.moves[k].to, plan.moves[k].uid);

    for (size_t k = i + 1; k < plan.moves.size(); ++k) {
      out.moves.push_back(Applied::Move{.pod = plan.moves[k].pod, .error = "not evicted: the plan stopped"});
    }
    break;
  }
  return out;
}

}  // namespace

StatusOr<std::string> PlanDefrag(const DefragAsk& ask, const std::optional<Allocation>& placed,
                                 const EvaluationInputs& inputs, bool text, const DefragApplier* apply) {
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
    if (request.claims_only()) {
      placement::DraDefragInput dra{.cluster = in, .state = &inputs.snapshot->dra(), .programs = inputs.programs,
                                    .dra = inputs.options->dra};
      plan = placement::MakeRoomForClaims(*ask.pod, dra, options);
    } else {
      plan = placement::MakeRoom(request, *ask.pod, in, options);
      // Where DRA serves its extended resources (KEP 5004), nvidia-dra nodes may make room too.
      std::vector<std::string> mapped = inputs.options->dra_extended_resources
                                            ? dra::MappedResources(*ask.pod, inputs.snapshot->dra().classes())
                                            : std::vector<std::string>{};
      std::optional<dra::SpecialClaim> special =
          mapped.empty() ? std::nullopt : dra::BuildSpecialClaim(*ask.pod, inputs.snapshot->dra().classes(), mapped);
      if (special) {
        placement::DraDefragInput dra{.cluster = in, .state = &inputs.snapshot->dra(), .programs = inputs.programs,
                                      .dra = inputs.options->dra, .special = &special->claim};
        DefragPlan through_dra = placement::MakeRoomForClaims(*ask.pod, dra, options);
        if (through_dra.fits && (!plan.fits || through_dra.moves.size() < plan.moves.size())) plan = std::move(through_dra);
      }
    }
  } else {
    plan = placement::Consolidate(ask.target_frag_pct, in, options);
  }
  std::optional<Applied> applied;
  std::string pending_uid = ask.pod ? ask.pod->uid : "";
  if (apply != nullptr) applied = plan.fits ? Apply(plan, ask, pending_uid, *apply) : Applied{};
  return text ? PlanText(plan, ask, applied) : PlanJson(plan, ask, applied);
}

}  // namespace gpusched::extender
