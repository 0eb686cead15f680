// File: service.cc
//
// The verbs' entry points: filter (nodes resolved, holds applied, pod evaluated, top K kept, Event
// posted, memo stored) and prioritize (memo reused, scores mapped to 0-10); bind, preempt, explain,
// defrag and /debug/inventory are handed on.
#include "gpusched/extender/service.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <vector>

#include "gpusched/extender/cheapest_eviction.h"
#include "gpusched/extender/defrag.h"
#include "gpusched/placement/defrag_planner.h"
#include "gpusched/extender/explain.h"
#include "gpusched/extender/inventory_json.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/extender/preemption.h"
#include "gpusched/extender/preemption_wire.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/placement/node_ranking.h"
#include "gpusched/placement/what_if.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::extender {
namespace {

using placement::NodeVerdict;
using placement::PodRequest;
using placement::RankedNode;
using placement::Reject;

// "0/12 nodes fit the GPU request: 8x insufficient ...; 4x node mode mgpu; ..." with the most
// common reasons first.
std::string UnschedulableMessage(const FilterResult& result, size_t nodes) {
  std::map<std::string_view, size_t> by_reason;
  for (const auto& [pos, reason] : result.failed) ++by_reason[reason];
  for (const auto& [pos, reason] : result.unresolvable) ++by_reason[reason];
  for (const auto& [reason, positions] : result.failed_shared) by_reason[reason] += positions.size();
  std::vector<std::pair<size_t, std::string_view>> sorted;
  for (const auto& [reason, n] : by_reason) sorted.emplace_back(n, reason);
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string out = fmt::format("0/{} nodes fit the GPU request:", nodes);
  constexpr size_t kShown = 5;
  for (size_t i = 0; i < sorted.size() && i < kShown; ++i) {
    out += fmt::format("{} {}x {}", i == 0 ? "" : ";", sorted[i].first, sorted[i].second);
  }
  if (sorted.size() > kShown) out += fmt::format("; and {} other reasons", sorted.size() - kShown);
  return out;
}

// The nodes `result` fails as resolvable (where evictions might help), known to the snapshot.
std::vector<const placement::NodeState*> Helpable(const FilterResult& result, const ResolvedNodes& resolved) {
  std::vector<const placement::NodeState*> out;
  for (const auto& [pos, reason] : result.failed) out.push_back(resolved.nodes[pos]);
  for (const auto& [reason, positions] : result.failed_shared) {
    for (size_t pos : positions) out.push_back(resolved.nodes[pos]);
  }
  std::erase(out, nullptr);
  return out;
}

// The request's nodes resolved against `snapshot`; a remembered list's positions are looked up
// once per node set (node_names_memo.h).
ResolvedNodes Resolve(const ExtenderArgs& args, const inventory::InventorySnapshot& snapshot) {
  const inventory::NameIndex& index = *snapshot.name_index();
  std::shared_ptr<const std::vector<size_t>> remembered =
      args.remembered == nullptr ? nullptr : args.remembered->PositionsIn(snapshot.name_index());
  ResolvedNodes r;
  r.nodes.reserve(args.node_names.size());
  r.index.reserve(args.node_names.size());
  r.generations.reserve(args.node_names.size());
  for (size_t n = 0; n < args.node_names.size(); ++n) {
    size_t i = remembered != nullptr ? (*remembered)[n] : index.Find(args.node_names[n]);
    bool known = i != inventory::NameIndex::kNone;
    r.index.push_back(known ? static_cast<uint32_t>(i) : 0);
    r.nodes.push_back(known ? snapshot.nodes()[i].get() : nullptr);
    r.generations.push_back(known ? snapshot.nodes().generation(i) : 0);
  }
  return r;
}

// GPUs held for nominated pods bind only pods of equal or lower priority (nomination.h): the
// holder, the next pod of a held-for controller and pods of higher priority are judged on those
// nodes without them (what_if.h). *own receives the states they see, and `resolved` points at
// them (generation 0: no cache keeps what is true for this pod alone).
void UseHolds(const Pod& pod, const inventory::InventorySnapshot& snapshot, ResolvedNodes* resolved,
              std::vector<placement::NodeState>* own) {
  own->reserve(snapshot.held_nodes().size());  // stable addresses below
  for (const std::string& name : snapshot.held_nodes()) {
    const placement::NodeState* held = snapshot.FindNode(name);
    if (held == nullptr || held->holds.empty()) continue;
    placement::WhatIf view(*held);
    if (!view.SeenBy(placement::Viewer::Of(pod)).changed()) continue;
    own->push_back(std::move(view).Take());
    for (size_t pos = 0; pos < resolved->nodes.size(); ++pos) {
      if (resolved->nodes[pos] != held) continue;
      resolved->nodes[pos] = &own->back();
      resolved->generations[pos] = 0;
    }
  }
}

std::vector<placement::ScoredNode> Scored(const std::vector<RankedNode>& fits, const ExtenderArgs& args) {
  std::vector<placement::ScoredNode> out;
  out.reserve(fits.size());
  for (const RankedNode& f : fits) out.push_back({args.node_names[f.pos], f.score});
  return out;
}

// Keeps the best `k` of `fits` (by the policy's score) and fails the rest with the reason.
void KeepBestK(const std::vector<RankedNode>& fits, const ExtenderArgs& args, size_t k, std::string_view policy,
               FilterResult* result) {
  std::vector<size_t> best = placement::BestK(Scored(fits, args), k);
  std::vector<bool> keep(fits.size(), false);
  for (size_t i : best) keep[i] = true;
  std::string reason =
      fmt::format("fits, but filter keeps only the best {} node{} by node policy {}", k, k == 1 ? "" : "s", policy);
  for (size_t i = 0; i < fits.size(); ++i) {
    if (keep[i]) {
      result->kept.push_back(fits[i].pos);
    } else {
      result->failed.emplace_back(fits[i].pos, reason);
    }
  }
}

// The monotonic clock in whole seconds: when this replica last served a GPU pod's filter.
int64_t SteadySeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// `o` completed from what the service is given: where bind writes claims (DRA owner mode), the
// device set allocated is gpusched's ranked choice, unless the replay's baseline asks for upstream's.
ServiceOptions Completed(ServiceOptions o, const ServiceCollaborators& with) {
  o.dra.ranked_allocated = with.claim_writer != nullptr && !o.dra_upstream_devices;
  return o;
}

}  // namespace

struct Service::DecisionCounts {
  std::array<uint64_t, placement::kRejectKinds> rejects{};
  uint64_t fit = 0;
  uint64_t invalid_pod = 0;
};

Service::Service(inventory::Inventory* inventory, ServiceOptions options, ServiceCollaborators with)
    : inventory_(inventory),
      options_(Completed(std::move(options), with)),
      with_(std::move(with)),
      memo_(std::make_unique<FilterMemoStore>()),
      workloads_(std::make_unique<WorkloadCache>(with_.clock)),
      scores_(std::make_unique<ScoreCacheStore>()),
      dra_verdicts_(std::make_unique<DraVerdictCacheStore>()),
      node_names_(std::make_unique<NodeNamesMemo>()),
      dra_log_(std::make_unique<DraDecisionLog>()),
      claims_(with_.claim_writer == nullptr
                  ? nullptr
                  : std::make_unique<ClaimAllocator>(inventory_, with_.claim_writer, &options_, &programs_, dra_log_.get(), with_.clock)),
      domains_(std::make_unique<DomainPlans>(inventory_, &options_, &programs_)),
      fullness_(std::make_unique<DomainFullness>(options_)),
      bind_(std::make_unique<BindFlow>(inventory_, &options_, &with_, claims_.get(), domains_.get())),
      gangs_(std::make_unique<GangHolds>(inventory_, &options_, with_.hold_publisher, with_.clock, &programs_, with_.nominator,
                                         fullness_.get())),
      kueue_(std::make_unique<KueueAdmission>(inventory_, &options_, with_.kueue_writer, with_.hold_publisher, &programs_, with_.clock)) {}

size_t Service::SweepClaims() const { return claims_ ? claims_->Sweep(options_.dra_release_after) : 0; }

size_t Service::SweepGangs() const {
  bool called = SteadySeconds() - last_filter_s_.load() < 60;
  return gangs_->Sweep(/*plan=*/with_.hold_publisher == nullptr || called);
}

size_t Service::SweepKueue() const { return kueue_->Sweep(); }

EvaluationInputs Service::Inputs(const inventory::InventorySnapshot* snapshot, bool caches) const {
  EvaluationInputs in{.snapshot = snapshot, .options = &options_, .programs = &programs_, .workloads = workloads_.get(),
                      .helper = &helper_, .domains = fullness_.get()};
  if (caches) {
    in.log = dra_log_.get();
    in.scores = scores_.get();
    in.dra_verdicts = dra_verdicts_.get();
  }
  return in;
}

void Service::CountDecisions(const DecisionCounts& counts) const {
  if (with_.telemetry == nullptr) return;
  for (size_t i = 0; i < counts.rejects.size(); ++i) {
    if (counts.rejects[i] > 0) {
      with_.telemetry->decisions.With({std::string(placement::RejectName(static_cast<Reject>(i)))}).Inc(counts.rejects[i]);
    }
  }
  if (counts.fit > 0) with_.telemetry->decisions.With({"fit"}).Inc(counts.fit);
  if (counts.invalid_pod > 0) with_.telemetry->decisions.With({"invalid_pod"}).Inc(counts.invalid_pod);
}

void Service::CountError(std::string_view verb) const {
  if (with_.telemetry != nullptr) with_.telemetry->extender_errors.With({std::string(verb)}).Inc();
}

std::string Service::Filter(std::string body) const {
  StatusOr<std::unique_ptr<ExtenderArgs>> parsed = ParseExtenderArgs(std::move(body), node_names_.get());
  if (!parsed.ok()) {
    CountError("filter");
    return EncodeFilterError(parsed.status().message());
  }
  const ExtenderArgs& args = **parsed;
  if (!args.pod.uid.empty()) inventory_->RememberPod(Pod(args.pod));
  if (args.with_nodes) inventory_->UpsertNodes(std::vector<Node>(args.nodes));

  PodRequest request = placement::AnalyzePod(args.pod);
  FilterResult result;
  if (!request.asks_gpu()) return FilterWithoutGpus(args);
  if (!request.schedulable()) {
    std::string reason = request.RefusalReason();
    for (size_t pos = 0; pos < args.node_names.size(); ++pos) result.unresolvable.emplace_back(pos, reason);
    CountDecisions(DecisionCounts{.invalid_pod = args.node_names.size()});
    if (with_.events != nullptr && !args.pod.uid.empty()) with_.events->Unschedulable(args.pod, reason);
    return EncodeFilterResult(args, result);
  }
  return FilterPod(args, request);
}

std::string Service::FilterWithoutGpus(const ExtenderArgs& args) const {
  FilterResult result;
  std::shared_ptr<const inventory::InventorySnapshot> snapshot;
  if (!args.pod.group && options_.topology_steer && !options_.topology_levels.empty() && !args.node_names.empty()) {
    snapshot = inventory_->Snapshot();
  }
  // Computed once per snapshot: a cluster whose nodes carry no domain label costs a look-up.
  if (snapshot == nullptr || fullness_->Of(*snapshot, options_.topology_levels.front())->domains.empty()) {
    result.kept.resize(args.node_names.size());
    std::iota(result.kept.begin(), result.kept.end(), size_t{0});
    return EncodeFilterResult(args, result);
  }
  ResolvedNodes resolved = Resolve(args, *snapshot);
  // Only the nodes gpusched knows are judged; kube-scheduler's filters passed them all.
  std::vector<RankedNode> known;
  for (size_t pos = 0; pos < args.node_names.size(); ++pos) {
    if (resolved.nodes[pos] == nullptr) {
      result.kept.push_back(pos);
    } else {
      known.push_back(RankedNode{pos, 0});
    }
  }
  RefuseOutsideFullestDomain(args.pod, SteeredPod::kWithoutGpus, options_, fullness_.get(), *snapshot, resolved, &known,
                             [&](std::span<const size_t> positions, const std::string& reason) {
                               result.failed_shared.emplace_back(reason, std::vector<size_t>(positions.begin(), positions.end()));
                             });
  for (const RankedNode& k : known) result.kept.push_back(k.pos);
  std::sort(result.kept.begin(), result.kept.end());
  return EncodeFilterResult(args, result);
}

bool Service::FitsOnceLeft(const placement::NodeState& seen, ResolvedNodes one, PodEvaluation& evaluation) const {
  if (std::none_of(seen.allocations.begin(), seen.allocations.end(), [](const Allocation& a) { return a.terminating; })) return false;
  placement::WhatIf view(seen);
  for (const Allocation& a : seen.allocations) {
    if (a.terminating) view.Without(a.pod_uid);
  }
  placement::NodeState left = std::move(view).Take();
  one.nodes = {&left};
  StatusOr<std::vector<RankedNode>> fits = evaluation.Evaluate(one, /*rank=*/false, [](size_t, NodeVerdict&&) {});
  return fits.ok() && !fits->empty();
}

std::string Service::SteerToSlot(const ExtenderArgs& args, const GangStanding& gang,
                                 const inventory::InventorySnapshot& snapshot, PodEvaluation& evaluation) const {
  FilterResult result;
  auto offered = std::find(args.node_names.begin(), args.node_names.end(), gang.node);
  const placement::NodeState* slot = snapshot.FindNode(gang.node);
  if (offered == args.node_names.end() || slot == nullptr) {
    result.others_failed = fmt::format("gang {}: this member's slot in the gang's plan is node {}, not offered", gang.group, gang.node);
    return EncodeFilterResult(args, result);
  }
  // The member sees its own slot free, its siblings' held (what_if.h).
  placement::NodeState seen = std::move(placement::WhatIf(*slot).SeenBy(placement::Viewer::Of(args.pod))).Take();
  ResolvedNodes one{.nodes = {&seen}, .index = {static_cast<uint32_t>(snapshot.FindIndex(gang.node))}, .generations = {0}};
  StatusOr<std::vector<RankedNode>> fits = evaluation.Evaluate(one, /*rank=*/false, [](size_t, NodeVerdict&&) {});
  if (!fits.ok() || fits->empty()) {
    // Room made for it (defrag), its victims still leaving: the slot is kept, for a while, and no
    // node is worth a preemption meanwhile.
    if (FitsOnceLeft(seen, one, evaluation) && gangs_->MayWait(args.pod.uid, gang.node)) {
      result.others_failed = fmt::format("gang {}: this member's slot on node {} waits for pods being deleted there", gang.group,
                                         gang.node);
      result.others_unresolvable = true;
      return EncodeFilterResult(args, result);
    }
    gangs_->SlotBroken(args.pod);  // GPUs taken there by a pod gpusched did not see: planned again
    result.others_failed = fmt::format("gang {}: this member's slot on node {} no longer fits it; the member is planned again",
                                       gang.group, gang.node);
    return EncodeFilterResult(args, result);
  }
  result.kept.push_back(static_cast<size_t>(offered - args.node_names.begin()));
  result.others_failed = fmt::format("gang {}: this member's slot in the gang's plan is node {}", gang.group, gang.node);
  CountDecisions(DecisionCounts{.fit = 1});
  return EncodeFilterResult(args, result);
}

GangStanding Service::PlanIfGang(const ExtenderArgs& args, std::shared_ptr<const inventory::InventorySnapshot>* snapshot) const {
  GangStanding gang = StandingOf(args.pod, **snapshot, options_.gangs);
  if (gang.kind == GangStanding::Kind::kUnplanned && !args.pod.uid.empty()) {
    gang = gangs_->Plan(args.pod);  // the group's plan, held: the next snapshot shows its slots
    *snapshot = inventory_->Snapshot();
  }
  bool nominated_try = args.node_names.size() == 1 && !args.pod.nominated_node.empty() &&
                       args.node_names[0] == args.pod.nominated_node;
  if (gang.kind == GangStanding::Kind::kSlot && !nominated_try &&
      std::find(args.node_names.begin(), args.node_names.end(), gang.node) == args.node_names.end()) {
    // Nodes offered, not the slot's, and not the pod's nominated node tried alone first:
    // kube-scheduler's own filters refused the slot's node (its CPU or memory taken, a taint, an
    // affinity), and the member alone is planned again among those offered.
    gang = gangs_->Plan(args.pod, &args.node_names);
    *snapshot = inventory_->Snapshot();
  }
  if (gang.kind == GangStanding::Kind::kAlone && args.pod.annotations.contains(kKueueWorkloadAnnotation)) {
    gang = kueue_->Claim(args.pod, args.node_names);  // its Workload's plan, held when the check set it Ready
    if (gang.kind == GangStanding::Kind::kSlot) *snapshot = inventory_->Snapshot();
  }
  return gang;
}

std::string Service::FilterPod(const ExtenderArgs& args, const PodRequest& request) const {
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  if (const PodGroup* group = options_.gangs ? TopologyGangOf(args.pod, *snapshot) : nullptr) {
    last_filter_s_.store(SteadySeconds());
    std::optional<DomainReservation> kept = KeptReservation(Inputs(snapshot.get(), /*caches=*/true));
    const DomainReservation* off = kept && KeptOff(args.pod, *kept, *snapshot, options_) ? &*kept : nullptr;
    FilterResult result = domains_->Steer(args.pod, *group, args.node_names, *snapshot, off);  // one plan per domain
    CountDecisions(DecisionCounts{.fit = result.kept.size()});
    return EncodeFilterResult(args, result);
  }
  GangStanding gang = PlanIfGang(args, &snapshot);
  if (gang.kind != GangStanding::Kind::kAlone) gangs_->Touch(inventory::GroupTable::MemberKey(args.pod));
  last_filter_s_.store(SteadySeconds());
  if (gang.kind == GangStanding::Kind::kRefused) {
    // FailedNodes (room could be made) when the whole gang does not fit now; unresolvable when
    // not all its members exist.
    FilterResult result{.others_failed = gang.reason, .others_unresolvable = gang.unresolvable};
    if (with_.events != nullptr && !args.pod.uid.empty()) with_.events->Unschedulable(args.pod, gang.reason);
    return EncodeFilterResult(args, result);
  }
  std::unique_ptr<PodEvaluation> evaluation = MakeEvaluation(
      args.pod, request, Inputs(snapshot.get(), /*caches=*/true));
  DecisionCounts counts;
  if (Status problem = evaluation->Problem(); !problem.ok()) {
    // The pod cannot be placed anywhere until its claims exist: kube-scheduler retries it later.
    counts.invalid_pod = args.node_names.size();
    CountDecisions(counts);
    return EncodeFilterError(problem.message());
  }
  if (gang.kind == GangStanding::Kind::kSlot) return SteerToSlot(args, gang, *snapshot, *evaluation);
  ResolvedNodes resolved = Resolve(args, *snapshot);
  std::vector<placement::NodeState> own;
  UseHolds(args.pod, *snapshot, &resolved, &own);
  FilterResult result;
  StatusOr<std::vector<RankedNode>> fits =
      evaluation->Evaluate(resolved, /*rank=*/false, [&](size_t pos, NodeVerdict&& v) {
        ++counts.rejects[static_cast<size_t>(v.reject)];
        (v.resolvable() ? result.failed : result.unresolvable).emplace_back(pos, std::move(v.reason));
      });
  if (!fits.ok()) {
    CountError("filter");
    return EncodeFilterError(fits.status().message());
  }
  RefuseAmongFitting(args.pod, request, *evaluation, options_, fullness_.get(), *snapshot, resolved, &*fits,
                     [&](std::span<const size_t> positions, const std::string& reason) {
                       counts.rejects[static_cast<size_t>(placement::Reject::kInsufficient)] += positions.size();
                       result.failed_shared.emplace_back(reason, std::vector<size_t>(positions.begin(), positions.end()));
                     });
  counts.fit = fits->size();
  CountDecisions(counts);
  if (fits->empty() && with_.events != nullptr && !args.pod.uid.empty()) {
    std::string message = UnschedulableMessage(result, args.node_names.size());
    if (with_.events->WouldPost(args.pod)) {
      // Where evicting lower-priority pods would make room, the Event says the cheapest such set.
      std::string fix = CheapestFix(args.pod, request, Helpable(result, resolved),
                                    EvaluationInputs{.snapshot = snapshot.get(), .options = &options_, .programs = &programs_});
      if (!fix.empty()) message += "; " + fix;
    }
    with_.events->Unschedulable(args.pod, std::move(message));
  }
  if (!evaluation->scores_while_filtering()) {
    for (const RankedNode& f : *fits) result.kept.push_back(f.pos);
    return EncodeFilterResult(args, result);
  }
  if (FilterMemoStore::Memoizable(args.pod)) {
    std::vector<uint32_t> evaluated;
    for (size_t pos = 0; pos < resolved.nodes.size(); ++pos) {
      if (resolved.nodes[pos] != nullptr) evaluated.push_back(resolved.index[pos]);
    }
    std::vector<std::pair<uint32_t, double>> scores;
    for (const RankedNode& f : *fits) scores.emplace_back(resolved.index[f.pos], f.score);
    memo_->Put(args.pod, snapshot->version(), snapshot->nodes().size(), evaluated, scores);
  }
  if (options_.filter_top_k == 0 || fits->size() <= options_.filter_top_k) {
    for (const RankedNode& f : *fits) result.kept.push_back(f.pos);
  } else {
    KeepBestK(*fits, args, options_.filter_top_k, NodePolicyFor(request, options_), &result);
  }
  return EncodeFilterResult(args, result);
}

std::string Service::Prioritize(std::string body) const {
  StatusOr<std::unique_ptr<ExtenderArgs>> parsed = ParseExtenderArgs(std::move(body), node_names_.get());
  // kube-scheduler ignores prioritize errors; an empty list gives no node a score.
  if (!parsed.ok()) {
    CountError("prioritize");
    return "[]";
  }
  const ExtenderArgs& args = **parsed;
  PodRequest request = placement::AnalyzePod(args.pod);
  // A pod without GPUs gets no score: kube-scheduler adds an extender's score only for the hosts
  // it answers, so the empty list is the pass-through.
  // Only hosts with a score above 0 are answered: a host left out gets 0 from this extender
  // (prioritizeNodes), so the answer stays a few hundred bytes however many nodes were asked.
  if (!request.asks_gpu() || !request.schedulable()) return "[]";
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  std::unique_ptr<PodEvaluation> evaluation = MakeEvaluation(
      args.pod, request, Inputs(snapshot.get(), /*caches=*/true));
  if (!evaluation->Problem().ok()) return "[]";
  ResolvedNodes resolved = Resolve(args, *snapshot);
  std::vector<placement::NodeState> own;
  UseHolds(args.pod, *snapshot, &resolved, &own);
  std::shared_ptr<const FilterMemo> memo =
      evaluation->scores_while_filtering() ? memo_->Get(args.pod, snapshot->version()) : nullptr;
  // With the filter's memo, only the nodes it did not see are evaluated here.
  std::vector<RankedNode> fits;
  ResolvedNodes rest;
  std::vector<size_t> rest_pos;
  for (size_t pos = 0; pos < resolved.nodes.size(); ++pos) {
    if (resolved.nodes[pos] == nullptr) continue;
    double s = memo != nullptr ? memo->At(resolved.index[pos]) : 0;
    if (memo == nullptr || !FilterMemo::Evaluated(s)) {
      rest.nodes.push_back(resolved.nodes[pos]);
      rest.index.push_back(resolved.index[pos]);
      rest.generations.push_back(resolved.generations[pos]);
      rest_pos.push_back(pos);
    } else if (FilterMemo::Fits(s)) {
      fits.push_back(RankedNode{pos, s});
    }
  }
  StatusOr<std::vector<RankedNode>> more =
      evaluation->Evaluate(rest, /*rank=*/true, [](size_t, NodeVerdict&&) {});
  if (!more.ok()) return "[]";
  for (const RankedNode& f : *more) fits.push_back(RankedNode{rest_pos[f.pos], f.score});
  auto by_pos = [](const RankedNode& a, const RankedNode& b) { return a.pos < b.pos; };
  if (!std::is_sorted(fits.begin(), fits.end(), by_pos)) std::sort(fits.begin(), fits.end(), by_pos);
  std::vector<int64_t> scores = placement::MapScores(Scored(fits, args), options_.score_mapping);
  std::vector<HostPriority> priorities;
  for (size_t i = 0; i < fits.size(); ++i) {
    if (scores[i] != 0) priorities.push_back(HostPriority{.host = args.node_names[fits[i].pos], .score = scores[i]});
  }
  return EncodeHostPriorities(priorities);
}

std::string Service::Bind(std::string_view body) const {
  StatusOr<BindingArgs> parsed = ParseBindingArgs(body);
  Status s = parsed.ok() ? bind_->Bind(*parsed) : parsed.status();
  if (with_.telemetry != nullptr) with_.telemetry->binds.With({s.ok() ? "ok" : "rejected"}).Inc();
  return EncodeBindingResult(s.ok() ? "" : s.message());
}

StatusOr<std::string> Service::Preempt(std::string body) const {
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  EvaluationInputs inputs = Inputs(snapshot.get(), /*caches=*/false);
  // kube-scheduler writes the Pod first: its candidates are decided while the rest is parsed.
  std::optional<Pod> early = PeekPreemptor(body);
  std::optional<PodRequest> early_request;
  std::optional<PreemptionDecider> decider;
  if (early) early_request = placement::AnalyzePod(*early);
  if (early && ChoosePath(*early, *early_request, inputs) == PreemptionPath::kByNode) decider.emplace(*early, *early_request, inputs);
  StatusOr<PreemptionArgs> parsed = ParsePreemptionArgs(std::move(body), PreemptionRead::kStreamed, decider ? &*decider : nullptr);
  if (!parsed.ok()) {
    CountError("preempt");
    return parsed.status();
  }
  if (decider) return EncodePreemptionResult(decider->Finish());
  PodRequest request = placement::AnalyzePod(parsed->pod);
  return EncodePreemptionResult(DecidePreemption(*parsed, request, inputs));
}

StatusOr<Explanation> Service::ExplainPod(const Pod& pod, const std::optional<Allocation>& placed) const {
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  // No shared caches: an explanation is computed afresh, and never disturbs the verbs' caches.
  return extender::Explain(pod, placed, Inputs(snapshot.get(), /*caches=*/false));
}

StatusOr<Pod> Service::PodOf(std::string_view body, std::optional<Allocation>* placed) const {
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(body, &doc));
  GPUSCHED_ASSIGN_OR_RETURN(Pod pod, kubejson::DecodePod(doc, "Pod"));
  if (!pod.spec_error.empty()) return InvalidArgumentError(pod.spec_error);
  if (pod.uid.empty()) {
    // A body without metadata.uid (written by hand) names the pod gpusched knows by that name.
    if (std::optional<std::string> uid = inventory_->FindUid(pod.namespace_name, pod.name)) pod.uid = std::move(*uid);
  }
  *placed = pod.uid.empty() ? std::nullopt : inventory_->AllocationOf(pod.uid);
  return pod;
}

StatusOr<Explanation> Service::Explain(std::string_view body) const {
  std::optional<Allocation> placed;
  GPUSCHED_ASSIGN_OR_RETURN(Pod pod, PodOf(body, &placed));
  return ExplainPod(pod, placed);
}

StatusOr<Explanation> Service::ExplainKnown(std::string_view key) const {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return InvalidArgumentError(fmt::format("pod \"{}\": want namespace/name", key));
  std::optional<std::string> uid = inventory_->FindUid(key.substr(0, slash), key.substr(slash + 1));
  std::optional<Pod> pod = uid ? inventory_->FindPod(*uid) : std::nullopt;
  if (!pod) return NotFoundError(fmt::format("pod {} is not known to gpusched (it sees pods in filter and bound ones)", key));
  std::optional<Allocation> placed = inventory_->AllocationOf(*uid);
  if (pod->containers.empty() && pod->resource_claims.empty() && placed) {
    return FailedPreconditionError(fmt::format(
        "pod {} is bound to {}; gpusched keeps its allocation, not its spec: POST the pod to /explain to judge it", key,
        placed->node_name));
  }
  return ExplainPod(*pod, placed);
}

StatusOr<GroupExplanation> Service::ExplainGroup(std::string_view key, std::string_view replica) const {
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  return extender::ExplainGroup(key, replica, *snapshot, options_, &programs_, with_.clock->WallMs());
}

StatusOr<WorkloadExplanation> Service::ExplainWorkload(std::string_view key) const {
  if (key.find('/') == std::string_view::npos) return InvalidArgumentError(fmt::format("workload \"{}\": want namespace/name", key));
  std::shared_ptr<const inventory::KueueState> kueue = inventory_->kueue().State();
  const kueue::Workload* w = kueue->FindWorkload(key);
  if (w == nullptr) return NotFoundError(fmt::format("Workload {} is not known to gpusched (kueue.x-k8s.io Workloads it has read)", key));
  WorkloadExplanation e{.workload = *w, .check = GpuschedCheckOf(*w, *kueue, options_.kueue_controller_name)};
  if (const kueue::CheckStatus* c = w->FindCheck(e.check); c != nullptr) e.check_state = kueue::CheckStateName(c->state);
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  e.verdict = JudgeWorkload(*w, *kueue, EvaluationInputs{.snapshot = snapshot.get(), .options = &options_, .programs = &programs_});
  return e;
}

StatusOr<DefragResult> Service::Defrag(std::string_view body, double target_frag_pct, int max_moves, DefragRun run) const {
  GPUSCHED_RETURN_IF_ERROR(CanApply(run));
  DefragAsk ask{.target_frag_pct = target_frag_pct, .max_moves = max_moves};
  std::optional<Allocation> placed;
  if (body.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    GPUSCHED_ASSIGN_OR_RETURN(ask.pod, PodOf(body, &placed));
    if (run.apply && ask.pod->uid.empty()) {
      return InvalidArgumentError(fmt::format(
          "Pod.metadata.uid: missing, and gpusched knows no pod {}/{}: room made for it could not be held for it",
          ask.pod->namespace_name, ask.pod->name));
    }
  }
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  GPUSCHED_ASSIGN_OR_RETURN(DefragResult result, PlanDefrag(ask, placed, Inputs(snapshot.get(), /*caches=*/false)));
  if (run.apply) result.applied = Executor().Apply(result.plan, ask.pod, run.unjudged);
  return result;
}

StatusOr<GroupDefragResult> Service::DefragGroup(std::string_view key, std::string_view replica, int max_moves, DefragRun run) const {
  GPUSCHED_RETURN_IF_ERROR(CanApply(run));
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  auto binding = [this](std::string_view uid) { return inventory_->AllocationOf(uid).has_value(); };
  GPUSCHED_ASSIGN_OR_RETURN(GroupDefragResult result,
                            PlanGroupDefrag(key, replica, max_moves, Inputs(snapshot.get(), /*caches=*/false), binding));
  if (run.apply) result.applied = ApplyGroupDefrag(result, Executor(), run.unjudged);
  return result;
}

Status Service::CanApply(const DefragRun& run) const {
  if (!run.apply || with_.evictor != nullptr) return OkStatus();
  return FailedPreconditionError("applying a defrag plan needs a live cluster (gpusched serve with --kubeconfig or in a pod)");
}

DefragExecutor Service::Executor() const {
  return DefragExecutor({.inventory = inventory_, .evictor = with_.evictor, .publisher = with_.hold_publisher,
                         .hold_ttl = options_.defrag_hold_ttl});
}

std::string Service::DebugInventory(std::string_view node, bool compact) const {
  std::vector<DraDecision> recent = dra_log_->Recent();
  std::vector<DraDecisionView> decisions;
  for (const DraDecision& d : recent) decisions.push_back(DraDecisionView{d.pod, d.node, d.verdict.get()});
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  std::optional<double> fragmented;
  if (node.empty()) {
    std::vector<const placement::NodeState*> nodes;
    for (const inventory::NodeStatePtr& n : snapshot->nodes()) nodes.push_back(n.get());
    fragmented = placement::FragmentedPct(nodes, *workloads_->Get(*snapshot));
  }
  std::string domain_key = options_.topology_levels.empty() ? "" : options_.topology_levels.front();
  std::shared_ptr<const DomainIndex> domains = domain_key.empty() ? nullptr : fullness_->Of(*snapshot, domain_key);
  return EncodeInventory(*snapshot, inventory_->Stats(), node, decisions, inventory_->Errors(), fragmented, compact, domain_key,
                         domains.get());
}

}  // namespace gpusched::extender
