#include "gpusched/extender/service.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <limits>
#include <thread>
#include <vector>

#include "gpusched/extender/inventory_json.h"
#include "gpusched/extender/wire.h"
#include "gpusched/placement/allocation_record.h"
#include "gpusched/placement/node_ranking.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::extender {
namespace {

// "0/12 nodes fit: 8 insufficient ...; 4 node mode mgpu; ..." with the most common reasons first.
std::string UnschedulableMessage(const FilterResult& result, size_t nodes) {
  std::map<std::string_view, size_t> by_reason;
  for (const auto& [pos, reason] : result.failed) ++by_reason[reason];
  for (const auto& [pos, reason] : result.unresolvable) ++by_reason[reason];
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

using placement::NodeVerdict;
using placement::Planner;
using placement::PodRequest;

constexpr std::string_view kUnknownNode = "node is not in gpusched's inventory";

// Memo entries besides a policy's score (which is finite, of any sign).
constexpr double kNotEvaluated = std::numeric_limits<double>::quiet_NaN();
constexpr double kNoFit = -std::numeric_limits<double>::infinity();

using Fit = placement::RankedNode;

// The request's nodes resolved against a snapshot: the NodeState (nullptr if unknown) and its
// position in the snapshot (the tie-break order of the policies: node name order).
struct Resolved {
  std::vector<const placement::NodeState*> nodes;
  std::vector<uint32_t> index;
};

Resolved Resolve(const ExtenderArgs& args, const inventory::InventorySnapshot& snapshot) {
  Resolved r;
  r.nodes.reserve(args.node_names.size());
  r.index.reserve(args.node_names.size());
  for (std::string_view name : args.node_names) {
    size_t i = snapshot.FindIndex(name);
    bool known = i != inventory::InventorySnapshot::kNoNode;
    r.index.push_back(known ? static_cast<uint32_t>(i) : 0);
    r.nodes.push_back(known ? snapshot.nodes()[i].get() : nullptr);
  }
  return r;
}

// Returns true if a memo for `pod` can be trusted: a pod with a resourceVersion does not change
// without it changing.
bool Memoizable(const Pod& pod) { return !pod.uid.empty() && !pod.resource_version.empty(); }

std::vector<placement::ScoredNode> Scored(const std::vector<Fit>& fits, const ExtenderArgs& args) {
  std::vector<placement::ScoredNode> out;
  out.reserve(fits.size());
  for (const Fit& f : fits) out.push_back({args.node_names[f.pos], f.score});
  return out;
}

// Returns the node policy in force for `request`.
std::string_view NodePolicy(const PodRequest& request, const ServiceOptions& options) {
  return request.node_policy ? std::string_view(*request.node_policy) : std::string_view(options.node_policy);
}

uint64_t Hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

constexpr auto kWorkloadRefresh = std::chrono::seconds(30);

}  // namespace

std::unique_ptr<scoring::Scorer> Service::NodeScorer(const PodRequest& request,
                                                     const inventory::InventorySnapshot& snapshot,
                                                     std::shared_ptr<const scoring::TargetWorkload>* workload) const {
  std::string_view policy = NodePolicy(request, options_);
  if (scoring::NeedsWorkload(policy)) *workload = Workload(snapshot);
  // The name was validated when the options or the pod's annotation were read.
  StatusOr<std::unique_ptr<scoring::Scorer>> scorer = scoring::MakeScorer(policy, workload->get());
  if (!scorer.ok()) return scoring::MakeScorer("binpack", nullptr).value();
  return std::move(scorer).value();
}

template <typename OnFail>
std::vector<placement::RankedNode> Service::Evaluate(const PodRequest& request, const Pod& pod,
                                                     std::span<const placement::NodeState* const> nodes,
                                                     std::span<const uint32_t> order,
                                                     const inventory::InventorySnapshot& snapshot, OnFail&& on_fail) const {
  for (size_t pos = 0; pos < nodes.size(); ++pos) {
    // gpusched knows nothing of the node: evicting pods there cannot be shown to help.
    if (nodes[pos] == nullptr) {
      on_fail(pos, NodeVerdict{.reject = placement::Reject::kUnknownNode, .resolvable = false, .reason = std::string(kUnknownNode)});
    }
  }
  std::shared_ptr<const scoring::TargetWorkload> workload;
  std::unique_ptr<scoring::Scorer> scorer = NodeScorer(request, snapshot, &workload);
  Planner planner(options_.placement);
  return placement::FilterAndRank(planner, *scorer, request, nodes, order, Hash(pod.uid), on_fail);
}

// Decision slots: one per placement::Reject, then these.
constexpr size_t kFitSlot = 8;
constexpr size_t kInvalidPodSlot = 9;

void Service::CountDecisions(const std::array<uint64_t, 10>& counts) const {
  if (telemetry_ == nullptr) return;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) continue;
    std::string name = i == kFitSlot          ? "fit"
                       : i == kInvalidPodSlot ? "invalid_pod"
                                              : std::string(placement::RejectName(static_cast<placement::Reject>(i)));
    telemetry_->decisions.With({name}).Inc(counts[i]);
  }
}

void Service::CountBind(std::string_view result) const {
  if (telemetry_ != nullptr) telemetry_->binds.With({std::string(result)}).Inc();
}

void Service::CountError(std::string_view verb) const {
  if (telemetry_ != nullptr) telemetry_->extender_errors.With({std::string(verb)}).Inc();
}

std::string Service::Filter(std::string body) const {
  StatusOr<std::unique_ptr<ExtenderArgs>> parsed = ParseExtenderArgs(std::move(body));
  if (!parsed.ok()) {
    CountError("filter");
    return EncodeFilterError(parsed.status().message());
  }
  const ExtenderArgs& args = **parsed;
  if (!args.pod.uid.empty()) inventory_->RememberPod(Pod(args.pod));
  if (args.with_nodes) inventory_->UpsertNodes(std::vector<Node>(args.nodes));

  FilterResult result;
  PodRequest request = placement::AnalyzePod(args.pod);
  if (request.kind == RequestKind::kNone && !args.pod.resource_claims.empty()) return FilterDra(args, *inventory_->Snapshot());
  if (request.kind == RequestKind::kNone) {
    for (size_t pos = 0; pos < args.node_names.size(); ++pos) result.kept.push_back(pos);
    return EncodeFilterResult(args, result);
  }
  std::array<uint64_t, 10> counts{};
  if (!request.schedulable()) {
    std::string reason = request.RefusalReason();
    for (size_t pos = 0; pos < args.node_names.size(); ++pos) result.unresolvable.emplace_back(pos, reason);
    counts[kInvalidPodSlot] = args.node_names.size();
    CountDecisions(counts);
    if (options_.events != nullptr && !args.pod.uid.empty()) options_.events->Unschedulable(args.pod, reason);
    return EncodeFilterResult(args, result);
  }
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  Resolved resolved = Resolve(args, *snapshot);
  std::vector<Fit> fits =
      Evaluate(request, args.pod, resolved.nodes, resolved.index, *snapshot, [&](size_t pos, NodeVerdict&& v) {
        ++counts[static_cast<size_t>(v.reject)];
        (v.resolvable ? result.failed : result.unresolvable).emplace_back(pos, std::move(v.reason));
      });
  counts[kFitSlot] = fits.size();
  CountDecisions(counts);
  if (fits.empty() && options_.events != nullptr && !args.pod.uid.empty()) {
    options_.events->Unschedulable(args.pod, UnschedulableMessage(result, args.node_names.size()));
  }
  if (Memoizable(args.pod)) {
    auto memo = std::make_shared<FilterMemo>(FilterMemo{.pod_uid = args.pod.uid,
                                                        .pod_resource_version = args.pod.resource_version,
                                                        .snapshot_version = snapshot->version()});
    memo->score.assign(snapshot->nodes().size(), kNotEvaluated);
    for (size_t pos = 0; pos < resolved.nodes.size(); ++pos) {
      if (resolved.nodes[pos] != nullptr) memo->score[resolved.index[pos]] = kNoFit;
    }
    for (const Fit& f : fits) memo->score[resolved.index[f.pos]] = f.score;
    MutexLock lock(&memo_mu_);
    memo_ = std::move(memo);
  }
  if (options_.filter_top_k == 0 || fits.size() <= options_.filter_top_k) {
    for (const Fit& f : fits) result.kept.push_back(f.pos);
    return EncodeFilterResult(args, result);
  }
  std::vector<placement::ScoredNode> scored = Scored(fits, args);
  std::vector<size_t> best = placement::BestK(scored, options_.filter_top_k);
  std::vector<bool> keep(fits.size(), false);
  for (size_t i : best) keep[i] = true;
  std::string reason = fmt::format("fits, but filter keeps only the best {} node{} by node policy {}",
                                   options_.filter_top_k, options_.filter_top_k == 1 ? "" : "s",
                                   NodePolicy(request, options_));
  for (size_t i = 0; i < fits.size(); ++i) {
    if (keep[i]) {
      result.kept.push_back(fits[i].pos);
    } else {
      result.failed.emplace_back(fits[i].pos, reason);
    }
  }
  return EncodeFilterResult(args, result);
}

std::shared_ptr<const scoring::TargetWorkload> Service::Workload(const inventory::InventorySnapshot& snapshot) const {
  auto now = options_.clock->Now();
  MutexLock lock(&workload_mu_);
  bool fresh = workload_ != nullptr && (workload_version_ == snapshot.version() || now - workload_time_ < kWorkloadRefresh);
  if (fresh) return workload_;
  std::vector<const placement::NodeState*> nodes;
  nodes.reserve(snapshot.nodes().size());
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) nodes.push_back(n.get());
  workload_ = std::make_shared<const scoring::TargetWorkload>(placement::ObservedWorkload(nodes));
  workload_version_ = snapshot.version();
  workload_time_ = now;
  return workload_;
}

std::shared_ptr<const Service::FilterMemo> Service::Memo() const {
  MutexLock lock(&memo_mu_);
  return memo_;
}

std::string Service::Prioritize(std::string body) const {
  StatusOr<std::unique_ptr<ExtenderArgs>> parsed = ParseExtenderArgs(std::move(body));
  // kube-scheduler ignores prioritize errors; an empty list gives no node a score.
  if (!parsed.ok()) {
    CountError("prioritize");
    return "[]";
  }
  const ExtenderArgs& args = **parsed;
  PodRequest request = placement::AnalyzePod(args.pod);
  if (request.kind == RequestKind::kNone && !args.pod.resource_claims.empty()) return PrioritizeDra(args, *inventory_->Snapshot());
  // A pod without GPUs gets no score: kube-scheduler adds an extender's score only for the hosts
  // it answers, so the empty list is the pass-through.
  if (request.kind == RequestKind::kNone) return "[]";
  std::vector<HostPriority> priorities(args.node_names.size());
  for (size_t pos = 0; pos < args.node_names.size(); ++pos) priorities[pos].host = args.node_names[pos];
  if (!request.schedulable()) return EncodeHostPriorities(priorities);
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  Resolved resolved = Resolve(args, *snapshot);
  std::shared_ptr<const FilterMemo> memo = Memo();
  bool reuse = memo != nullptr && Memoizable(args.pod) && memo->pod_uid == args.pod.uid &&
               memo->pod_resource_version == args.pod.resource_version &&
               memo->snapshot_version == snapshot->version();
  std::vector<Fit> fits;
  auto ignore = [](size_t, NodeVerdict&&) {};
  if (reuse) {
    // Only nodes the filter did not see are evaluated here.
    Resolved rest;
    std::vector<size_t> rest_pos;
    for (size_t pos = 0; pos < resolved.nodes.size(); ++pos) {
      if (resolved.nodes[pos] == nullptr) continue;
      double s = memo->score[resolved.index[pos]];
      if (std::isnan(s)) {
        rest.nodes.push_back(resolved.nodes[pos]);
        rest.index.push_back(resolved.index[pos]);
        rest_pos.push_back(pos);
      } else if (s != kNoFit) {
        fits.push_back(Fit{pos, s});
      }
    }
    for (Fit f : Evaluate(request, args.pod, rest.nodes, rest.index, *snapshot, ignore)) {
      fits.push_back(Fit{rest_pos[f.pos], f.score});
    }
  } else {
    fits = Evaluate(request, args.pod, resolved.nodes, resolved.index, *snapshot, ignore);
  }
  std::vector<int64_t> scores = placement::MapScores(Scored(fits, args), options_.score_mapping);
  for (size_t i = 0; i < fits.size(); ++i) priorities[fits[i].pos].score = scores[i];
  return EncodeHostPriorities(priorities);
}

std::string Service::FilterDra(const ExtenderArgs& args, const inventory::InventorySnapshot& snapshot) const {
  placement::DraPlanner planner(snapshot.dra(), args.pod, &programs_, options_.dra);
  std::array<uint64_t, 10> counts{};
  if (!planner.problem().empty()) {
    // The pod cannot be placed anywhere until its claims exist: kube-scheduler retries it later.
    counts[kInvalidPodSlot] = args.node_names.size();
    CountDecisions(counts);
    return EncodeFilterError(planner.problem());
  }
  FilterResult result;
  for (size_t pos = 0; pos < args.node_names.size(); ++pos) {
    const placement::NodeState* node = snapshot.FindNode(args.node_names[pos]);
    if (node == nullptr) {
      result.unresolvable.emplace_back(pos, std::string(kUnknownNode));
      ++counts[static_cast<size_t>(placement::Reject::kUnknownNode)];
      continue;
    }
    placement::DraVerdict v = planner.Evaluate(*node, /*rank=*/false);
    if (v.kind == placement::DraVerdict::Kind::kError) {
      // As upstream: a hard error (bad CEL, unknown class) aborts the pod's scheduling attempt.
      CountError("filter");
      return EncodeFilterError(v.reason);
    }
    if (v.kind == placement::DraVerdict::Kind::kFits) {
      result.kept.push_back(pos);
      ++counts[kFitSlot];
    } else {
      bool resolvable = v.reject == placement::Reject::kInsufficient;
      (resolvable ? result.failed : result.unresolvable).emplace_back(pos, std::move(v.reason));
      ++counts[static_cast<size_t>(v.reject)];
    }
  }
  CountDecisions(counts);
  if (result.kept.empty() && options_.events != nullptr && !args.pod.uid.empty()) {
    options_.events->Unschedulable(args.pod, UnschedulableMessage(result, args.node_names.size()));
  }
  return EncodeFilterResult(args, result);
}

std::string Service::PrioritizeDra(const ExtenderArgs& args, const inventory::InventorySnapshot& snapshot) const {
  std::vector<HostPriority> priorities(args.node_names.size());
  for (size_t pos = 0; pos < args.node_names.size(); ++pos) priorities[pos].host = args.node_names[pos];
  placement::DraPlanner planner(snapshot.dra(), args.pod, &programs_, options_.dra);
  if (!planner.problem().empty()) return EncodeHostPriorities(priorities);
  std::vector<Fit> fits;
  for (size_t pos = 0; pos < args.node_names.size(); ++pos) {
    const placement::NodeState* node = snapshot.FindNode(args.node_names[pos]);
    if (node == nullptr) continue;
    placement::DraVerdict v = planner.Evaluate(*node, /*rank=*/true);
    if (v.kind != placement::DraVerdict::Kind::kFits) continue;
    fits.push_back(Fit{pos, v.score});
    RecordDra(args.pod, node->node.name, v);
  }
  std::vector<int64_t> scores = placement::MapScores(Scored(fits, args), options_.score_mapping);
  for (size_t i = 0; i < fits.size(); ++i) priorities[fits[i].pos].score = scores[i];
  return EncodeHostPriorities(priorities);
}

std::string Service::AllocateClaims(const Pod& pod, const std::string& node_name) const {
  MutexLock lock(&dra_bind_mu_);
  constexpr int kAttempts = 4;
  std::string last;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
    const dra::ClusterState& state = snapshot->dra();
    // Assumed allocations the cluster now shows are no longer needed.
    dra::AllocatedDevices assumed;
    std::erase_if(dra_assumed_, [&](const auto& kv) {
      for (const auto& [key, claim] : state.claims()) {
        if (claim.uid == kv.first) return claim.allocation.has_value();
      }
      return true;  // the claim is gone
    });
    for (const auto& [uid, result] : dra_assumed_) assumed.Add(result);
    placement::DraOptions options = options_.dra;
    options.also_allocated = &assumed;
    placement::DraPlanner planner(state, pod, &programs_, options);
    if (!planner.problem().empty()) return planner.problem();
    const placement::NodeState* node = snapshot->FindNode(node_name);
    if (node == nullptr) return std::string(kUnknownNode);
    placement::DraVerdict v = planner.Evaluate(*node, /*rank=*/true);
    if (v.kind != placement::DraVerdict::Kind::kFits) return v.reason;
    Status s;
    for (size_t i = 0; i < planner.to_allocate().size() && s.ok(); ++i) {
      const dra::ResourceClaim& claim = *planner.to_allocate()[i];
      s = options_.claim_writer->Write(claim, &v.ranked[i], pod);
      if (s.ok()) dra_assumed_[claim.uid] = v.ranked[i];
    }
    for (const dra::ResourceClaim* claim : planner.allocated()) {
      if (!s.ok()) break;
      bool reserved = std::any_of(claim->reserved_for.begin(), claim->reserved_for.end(),
                                  [&](const dra::ConsumerRef& r) { return r.uid == pod.uid; });
      if (!reserved) s = options_.claim_writer->Write(*claim, nullptr, pod);
    }
    if (s.ok()) {
      RecordDra(pod, node_name, v);
      return "";
    }
    last = std::string(s.message());
    if (s.code() != StatusCode::kAborted) return last;
    // Someone changed a claim: give the watch a moment to bring the change, then plan again.
    std::this_thread::sleep_for(std::chrono::milliseconds(50) * (attempt + 1));
  }
  return fmt::format("claims kept changing: {}", last);
}

void Service::RecordDra(const Pod& pod, const std::string& node, const placement::DraVerdict& v) const {
  constexpr size_t kKept = 64;
  MutexLock lock(&dra_mu_);
  dra_decisions_.push_back(DraDecision{fmt::format("{}/{}", pod.namespace_name, pod.name), node, v});
  while (dra_decisions_.size() > kKept) dra_decisions_.pop_front();
}

std::string Service::BindError(std::string_view body) const {
  StatusOr<BindingArgs> parsed = ParseBindingArgs(body);
  if (!parsed.ok()) return parsed.status().message();
  const BindingArgs& b = *parsed;
  std::string pod_key = fmt::format("{}/{}", b.pod_namespace, b.pod_name);

  // One bind of a pod at a time: a retry that arrives while the first attempt still runs (say,
  // after kube-scheduler's timeout) must not undo what that attempt is doing.
  struct InFlight {
    const Service* service;
    std::string uid;
    bool acquired;
    ~InFlight() {
      if (!acquired) return;
      MutexLock lock(&service->binding_mu_);
      service->binding_.erase(uid);
    }
  } in_flight{this, b.pod_uid, false};
  {
    MutexLock lock(&binding_mu_);
    in_flight.acquired = binding_.insert(b.pod_uid).second;
  }
  if (!in_flight.acquired) return fmt::format("bind {} to {}: a bind of this pod is already in progress", pod_key, b.node);
  auto deadline = options_.clock->Now() + options_.bind_deadline;

  std::optional<Pod> found = inventory_->FindPod(b.pod_uid);
  if (!found) {
    return fmt::format("bind {} (uid {}): pod unknown to gpusched; it must pass filter first", pod_key, b.pod_uid);
  }
  Pod pod = std::move(*found);
  if (pod.name != b.pod_name || pod.namespace_name != b.pod_namespace) {
    return fmt::format("bind {} (uid {}): uid belongs to pod {}/{}", pod_key, b.pod_uid,
                                           pod.namespace_name, pod.name);
  }
  // Returns the answer if the pod is bound already: only the cluster's word (an observed
  // allocation, or a bound record of a pod without GPUs) or, without a binder, our own in-memory
  // booking counts. A booking in flight (ours or another replica's) does not.
  auto already = [&]() -> std::optional<std::string> {
    std::optional<Allocation> held = inventory_->AllocationOf(b.pod_uid);
    std::string node;
    if (held) {
      bool bound = held->origin == AllocationOrigin::kObserved ||
                   (held->origin == AllocationOrigin::kCommitted && options_.binder == nullptr);
      if (!bound) return std::nullopt;
      node = held->node_name;
    } else if (std::optional<Pod> record = inventory_->FindPod(b.pod_uid); record && record->bound()) {
      node = record->node_name;
    }
    if (node.empty()) return std::nullopt;
    if (node == b.node) return std::string();  // idempotent: already bound here
    return fmt::format("bind {} to {}: pod is already bound to {}", pod_key, b.node, node);
  };
  if (std::optional<Allocation> held = inventory_->AllocationOf(b.pod_uid);
      held && held->origin == AllocationOrigin::kCommitted && held->node_name == b.node && options_.binder != nullptr) {
    // A bind of ours whose outcome was unknown: finish it (the binding call is idempotent).
    std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
    const placement::NodeState* node = snapshot->FindNode(b.node);
    if (node == nullptr) return fmt::format("bind {} to {}: {}", pod_key, b.node, kUnknownNode);
    AnnotationMap annotations = placement::ResultAnnotations(held->placement);
    Status s = options_.binder->Bind(
        extender::BindTarget{.pod = pod, .node = node->node, .allocation = *held, .annotations = annotations});
    if (s.ok()) return "";
    if (s.code() == StatusCode::kDeadlineExceeded) return fmt::format("bind {} to {}: {}", pod_key, b.node, s.message());
    inventory_->Release(pod.uid);
    if (s.code() != StatusCode::kAborted) return fmt::format("bind {} to {} failed: {}", pod_key, b.node, s.message());
    found = inventory_->FindPod(b.pod_uid);  // plan afresh below
    if (found) pod = std::move(*found);
  }
  if (auto done = already()) return *done;

  PodRequest request = placement::AnalyzePod(pod);
  if (options_.claim_writer != nullptr && request.kind == RequestKind::kNone && !pod.resource_claims.empty()) {
    std::string error = AllocateClaims(pod, b.node);
    if (!error.empty()) return fmt::format("bind {} to {} failed: {}", pod_key, b.node, error);
  }
  if (!request.schedulable()) return fmt::format("bind {} rejected: {}", pod_key, request.RefusalReason());
  Planner planner(options_.placement);
  Status last;
  for (int attempt = 0; attempt < options_.bind_attempts; ++attempt) {
    if (attempt > 0 && options_.clock->Now() > deadline) {
      return fmt::format("bind {} to {}: gave up after {} attempts in {} s: {}", pod_key, b.node, attempt,
                         options_.bind_deadline.count(), last.message());
    }
    Placement placement;
    if (request.kind != RequestKind::kNone) {
      std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
      const placement::NodeState* node = snapshot->FindNode(b.node);
      if (node == nullptr) return fmt::format("bind {} to {}: {}", pod_key, b.node, kUnknownNode);
      NodeVerdict v = planner.Evaluate(request, *node, /*want_placement=*/true);
      if (!v.fits) return fmt::format("bind {} to {} rejected: {}", pod_key, b.node, v.reason);
      placement = std::move(v.placement);
    }
    if (options_.test_before_commit) options_.test_before_commit();
    Node checked;
    last = inventory_->Commit(pod, b.node, placement, options_.binder != nullptr ? &checked : nullptr);
    if (last.ok()) {
      if (options_.binder == nullptr) return "";
      Allocation booked{.pod_uid = pod.uid,
                        .pod_namespace = pod.namespace_name,
                        .pod_name = pod.name,
                        .node_name = b.node,
                        .mode = ModeServing(placement.kind),
                        .placement = placement,
                        .origin = AllocationOrigin::kCommitted};
      AnnotationMap annotations = placement::ResultAnnotations(placement);
      last = options_.binder->Bind(
          extender::BindTarget{.pod = pod, .node = checked, .allocation = booked, .annotations = annotations});
      if (last.ok()) return "";
      if (last.code() == StatusCode::kDeadlineExceeded) {
        return fmt::format("bind {} to {}: {}", pod_key, b.node, last.message());
      }
      inventory_->Release(pod.uid);
      if (last.code() == StatusCode::kAborted) continue;  // the node changed under us: plan again
      return fmt::format("bind {} to {} failed: {}", pod_key, b.node, last.message());
    }
    if (last.code() != StatusCode::kFailedPrecondition) break;
    // Either another bind changed the node since we planned (plan again), or a concurrent bind
    // of this same pod won.
    if (auto done = already()) return *done;
  }
  return fmt::format("bind {} to {} rejected: {}", pod_key, b.node, last.message());
}

std::string Service::Bind(std::string_view body) const {
  std::string error = BindError(body);
  CountBind(error.empty() ? "ok" : "rejected");
  return EncodeBindingResult(error);
}

std::string Service::DebugInventory(std::string_view node) const {
  MutexLock lock(&dra_mu_);
  std::vector<DraDecisionView> decisions;
  for (const DraDecision& d : dra_decisions_) decisions.push_back(DraDecisionView{d.pod, d.node, &d.verdict});
  return EncodeInventory(*inventory_->Snapshot(), inventory_->Stats(), node, decisions, inventory_->Errors());
}

}  // namespace gpusched::extender
