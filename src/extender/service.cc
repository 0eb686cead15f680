#include "gpusched/extender/service.h"

#include <fmt/format.h>

#include <vector>

#include "gpusched/extender/inventory_json.h"
#include "gpusched/extender/wire.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::extender {
namespace {

using placement::NodeVerdict;
using placement::Planner;
using placement::PodRequest;

constexpr std::string_view kUnknownNode = "node is not in gpusched's inventory";

constexpr double kNotEvaluated = -2.0;
constexpr double kNoFit = -1.0;

// One fitting node of a filter or prioritize call.
struct Fit {
  size_t pos;
  double score;
};

// The request's nodes resolved against a snapshot: the NodeState (nullptr if unknown) and its
// position in the snapshot.
struct Resolved {
  std::vector<const placement::NodeState*> nodes;
  std::vector<size_t> index;
};

Resolved Resolve(const ExtenderArgs& args, const inventory::InventorySnapshot& snapshot) {
  Resolved r;
  r.nodes.reserve(args.node_names.size());
  r.index.reserve(args.node_names.size());
  for (std::string_view name : args.node_names) {
    size_t i = snapshot.FindIndex(name);
    r.index.push_back(i);
    r.nodes.push_back(i == inventory::InventorySnapshot::kNoNode ? nullptr : snapshot.nodes()[i].get());
  }
  return r;
}

// Evaluates `request` on the resolved nodes; calls on_fail(pos, resolvable, reason) for each node
// that does not fit (unknown nodes included) and returns the ones that do.
// REQUIRES: request.kind != kNone and request.valid().
template <typename OnFail>
std::vector<Fit> EvaluateAll(const PodRequest& request, const Resolved& resolved, Planner& planner, OnFail on_fail) {
  for (size_t pos = 0; pos < resolved.nodes.size(); ++pos) {
    // gpusched knows nothing of the node: evicting pods there cannot be shown to help.
    if (resolved.nodes[pos] == nullptr) on_fail(pos, false, std::string(kUnknownNode));
  }
  std::vector<Fit> fits;
  fits.reserve(resolved.nodes.size());
  placement::EvaluateNodes(planner, request, resolved.nodes, [&](size_t pos, NodeVerdict&& v) {
    if (v.fits) {
      fits.push_back(Fit{pos, v.score});
    } else {
      on_fail(pos, v.resolvable, std::move(v.reason));
    }
  });
  return fits;
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

// Returns the policy in force for `request` ("binpack"/"spread"), for reasons.
std::string_view NodePolicyName(const PodRequest& request, const placement::PlacementOptions& options) {
  return placement::PolicyName(request.node_policy.value_or(options.node_policy));
}

}  // namespace

std::string Service::Filter(std::string body) const {
  StatusOr<std::unique_ptr<ExtenderArgs>> parsed = ParseExtenderArgs(std::move(body));
  if (!parsed.ok()) return EncodeFilterError(parsed.status().message());
  const ExtenderArgs& args = **parsed;
  if (!args.pod.uid.empty()) inventory_->RememberPod(Pod(args.pod));
  if (args.with_nodes) inventory_->UpsertNodes(std::vector<Node>(args.nodes));

  FilterResult result;
  PodRequest request = placement::AnalyzePod(args.pod);
  if (request.kind == RequestKind::kNone) {
    for (size_t pos = 0; pos < args.node_names.size(); ++pos) result.kept.push_back(pos);
    return EncodeFilterResult(args, result);
  }
  if (!request.valid()) {
    for (size_t pos = 0; pos < args.node_names.size(); ++pos) result.unresolvable.emplace_back(pos, request.invalid_reason);
    return EncodeFilterResult(args, result);
  }
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  Resolved resolved = Resolve(args, *snapshot);
  Planner planner(options_.placement);
  std::vector<Fit> fits = EvaluateAll(request, resolved, planner, [&](size_t pos, bool resolvable, std::string reason) {
    (resolvable ? result.failed : result.unresolvable).emplace_back(pos, std::move(reason));
  });
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
                                   NodePolicyName(request, options_.placement));
  for (size_t i = 0; i < fits.size(); ++i) {
    if (keep[i]) {
      result.kept.push_back(fits[i].pos);
    } else {
      result.failed.emplace_back(fits[i].pos, reason);
    }
  }
  return EncodeFilterResult(args, result);
}

std::shared_ptr<const Service::FilterMemo> Service::Memo() const {
  MutexLock lock(&memo_mu_);
  return memo_;
}

std::string Service::Prioritize(std::string body) const {
  StatusOr<std::unique_ptr<ExtenderArgs>> parsed = ParseExtenderArgs(std::move(body));
  // kube-scheduler ignores prioritize errors; an empty list gives no node a score.
  if (!parsed.ok()) return "[]";
  const ExtenderArgs& args = **parsed;
  std::vector<HostPriority> priorities(args.node_names.size());
  for (size_t pos = 0; pos < args.node_names.size(); ++pos) priorities[pos].host = args.node_names[pos];

  PodRequest request = placement::AnalyzePod(args.pod);
  if (request.kind == RequestKind::kNone || !request.valid()) return EncodeHostPriorities(priorities);
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  Resolved resolved = Resolve(args, *snapshot);
  std::shared_ptr<const FilterMemo> memo = Memo();
  bool reuse = memo != nullptr && Memoizable(args.pod) && memo->pod_uid == args.pod.uid &&
               memo->pod_resource_version == args.pod.resource_version &&
               memo->snapshot_version == snapshot->version();
  std::vector<Fit> fits;
  if (reuse) {
    // Only nodes the filter did not see are evaluated here.
    Resolved rest;
    std::vector<size_t> rest_pos;
    for (size_t pos = 0; pos < resolved.nodes.size(); ++pos) {
      if (resolved.nodes[pos] == nullptr) continue;
      double s = memo->score[resolved.index[pos]];
      if (s >= 0) {
        fits.push_back(Fit{pos, s});
      } else if (s == kNotEvaluated) {
        rest.nodes.push_back(resolved.nodes[pos]);
        rest_pos.push_back(pos);
      }
    }
    Planner planner(options_.placement);
    for (const Fit& f : EvaluateAll(request, rest, planner, [](size_t, bool, std::string) {})) {
      fits.push_back(Fit{rest_pos[f.pos], f.score});
    }
  } else {
    Planner planner(options_.placement);
    fits = EvaluateAll(request, resolved, planner, [](size_t, bool, std::string) {});
  }
  std::vector<int64_t> scores = placement::MapScores(Scored(fits, args), options_.score_mapping);
  for (size_t i = 0; i < fits.size(); ++i) priorities[fits[i].pos].score = scores[i];
  return EncodeHostPriorities(priorities);
}

std::string Service::Bind(std::string_view body) const {
  StatusOr<BindingArgs> parsed = ParseBindingArgs(body);
  if (!parsed.ok()) return EncodeBindingResult(parsed.status().message());
  const BindingArgs& b = *parsed;
  std::string pod_key = fmt::format("{}/{}", b.pod_namespace, b.pod_name);

  std::optional<Pod> found = inventory_->FindPod(b.pod_uid);
  if (!found) {
    return EncodeBindingResult(
        fmt::format("bind {} (uid {}): pod unknown to gpusched; it must pass filter first", pod_key, b.pod_uid));
  }
  Pod pod = std::move(*found);
  if (pod.name != b.pod_name || pod.namespace_name != b.pod_namespace) {
    return EncodeBindingResult(fmt::format("bind {} (uid {}): uid belongs to pod {}/{}", pod_key, b.pod_uid,
                                           pod.namespace_name, pod.name));
  }
  auto already = [&]() -> std::optional<std::string> {
    std::optional<Allocation> held = inventory_->AllocationOf(b.pod_uid);
    std::string node = held ? held->node_name : pod.node_name;
    if (node.empty()) return std::nullopt;
    if (node == b.node) return std::string();  // idempotent: already bound here
    return fmt::format("bind {} to {}: pod is already bound to {}", pod_key, b.node, node);
  };
  if (auto done = already()) return EncodeBindingResult(*done);

  PodRequest request = placement::AnalyzePod(pod);
  if (!request.valid()) return EncodeBindingResult(fmt::format("bind {} rejected: {}", pod_key, request.invalid_reason));
  Planner planner(options_.placement);
  Status last;
  for (int attempt = 0; attempt < options_.bind_attempts; ++attempt) {
    Placement placement;
    if (request.kind != RequestKind::kNone) {
      std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
      const placement::NodeState* node = snapshot->FindNode(b.node);
      if (node == nullptr) return EncodeBindingResult(fmt::format("bind {} to {}: {}", pod_key, b.node, kUnknownNode));
      NodeVerdict v = planner.Evaluate(request, *node, /*want_placement=*/true);
      if (!v.fits) return EncodeBindingResult(fmt::format("bind {} to {} rejected: {}", pod_key, b.node, v.reason));
      placement = std::move(v.placement);
    }
    if (options_.test_before_commit) options_.test_before_commit();
    last = inventory_->Commit(pod, b.node, placement);
    if (last.ok()) return EncodeBindingResult("");
    if (last.code() != StatusCode::kFailedPrecondition) break;
    // Either another bind changed the node since we planned (plan again), or a concurrent bind
    // of this same pod won.
    if (auto done = already()) return EncodeBindingResult(*done);
  }
  return EncodeBindingResult(fmt::format("bind {} to {} rejected: {}", pod_key, b.node, last.message()));
}

std::string Service::DebugInventory(std::string_view node) const {
  return EncodeInventory(*inventory_->Snapshot(), inventory_->Stats(), node);
}

}  // namespace gpusched::extender
