#include "gpusched/extender/pod_evaluation.h"

#include <fmt/format.h>

#include "gpusched/placement/dra_planner.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::extender {
namespace {

using placement::NodeVerdict;
using placement::RankedNode;
using placement::Reject;

constexpr std::string_view kUnknownNode = "node is not in gpusched's inventory";

NodeVerdict UnknownNode() {
  return NodeVerdict{.reject = Reject::kUnknownNode, .resolvable = false, .reason = std::string(kUnknownNode)};
}

uint64_t Hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

// nvidia.com/gpu and mGPU pods: the Planner decides, the node policy scores, in one pass.
class DevicePluginEvaluation final : public PodEvaluation {
 public:
  DevicePluginEvaluation(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& in)
      : pod_(pod), request_(request), in_(in) {}

  std::string problem() const override { return ""; }
  bool scores_while_filtering() const override { return true; }

  StatusOr<std::vector<RankedNode>> Evaluate(const ResolvedNodes& resolved, bool /*rank*/,
                                             const OnNodeFailed& on_failed) override {
    for (size_t pos = 0; pos < resolved.nodes.size(); ++pos) {
      // gpusched knows nothing of the node: evicting pods there cannot be shown to help.
      if (resolved.nodes[pos] == nullptr) on_failed(pos, UnknownNode());
    }
    std::string_view policy = NodePolicyFor(request_, *in_.options);
    std::shared_ptr<const scoring::TargetWorkload> workload;
    if (scoring::NeedsWorkload(policy)) workload = in_.workloads->Get(*in_.snapshot);
    // The name was validated where it was read (the configuration or the pod's annotation).
    StatusOr<std::unique_ptr<scoring::Scorer>> scorer = scoring::MakeScorer(policy, workload.get());
    if (!scorer.ok()) return InternalError(fmt::format("node policy {}: {}", policy, scorer.status().message()));
    placement::Planner planner(in_.options->placement);
    auto on_fail = [&](size_t pos, NodeVerdict&& v) { on_failed(pos, std::move(v)); };
    if (in_.scores == nullptr || (*scorer)->Batch()) {
      return placement::FilterAndRank(planner, **scorer, request_, resolved.nodes, resolved.index, Hash(pod_.uid), on_fail);
    }
    // The workload is named by address in the key: the loan pins it.
    ScoreCacheStore::Loan loan = in_.scores->Borrow(
        fmt::format("{}|{}|{}", policy, static_cast<const void*>(workload.get()), placement::ShapeKey(request_)), workload);
    std::vector<RankedNode> fits =
        placement::FilterAndRank(planner, **scorer, request_, resolved.nodes, resolved.index, Hash(pod_.uid), on_fail,
                                 placement::CachedScores{loan.cache.get(), resolved.generations});
    in_.scores->Return(std::move(loan));
    return fits;
  }

 private:
  const Pod& pod_;
  const placement::PodRequest& request_;
  const EvaluationInputs in_;
};

// Pods with ResourceClaims: the DRA planner allocates as kube-scheduler would, and ranks.
class DraEvaluation final : public PodEvaluation {
 public:
  DraEvaluation(const Pod& pod, const EvaluationInputs& in)
      : pod_(pod), in_(in), planner_(in.snapshot->dra(), pod, in.programs, in.options->dra) {}

  std::string problem() const override { return planner_.problem(); }
  bool scores_while_filtering() const override { return false; }

  StatusOr<std::vector<RankedNode>> Evaluate(const ResolvedNodes& resolved, bool rank,
                                             const OnNodeFailed& on_failed) override {
    const std::vector<const placement::NodeState*>& nodes = resolved.nodes;
    std::optional<DraVerdictCacheStore::Loan> loan;
    if (in_.dra_verdicts != nullptr && planner_.cacheable()) loan = in_.dra_verdicts->Borrow(planner_.shape());
    placement::DraVerdictCache* cache = loan ? loan->cache.get() : nullptr;
    std::vector<RankedNode> fits;
    for (size_t pos = 0; pos < nodes.size(); ++pos) {
      if (nodes[pos] == nullptr) {
        on_failed(pos, UnknownNode());
        continue;
      }
      std::shared_ptr<const placement::DraVerdict> v = planner_.Evaluate(*nodes[pos], resolved.index[pos], rank, cache);
      // As upstream: a fault of the request (bad CEL, unknown class) stops the pod's filter.
      if (v->request_error && !rank) return Finish(std::move(loan), InvalidArgumentError(v->node.reason));
      if (!v->fits()) {
        on_failed(pos, NodeVerdict(v->node));
        continue;
      }
      fits.push_back(RankedNode{pos, v->score});
      if (rank && in_.log != nullptr) {
        in_.log->Record(fmt::format("{}/{}", pod_.namespace_name, pod_.name), nodes[pos]->node.name, std::move(v));
      }
    }
    return Finish(std::move(loan), std::move(fits));
  }

 private:
  // Returns the borrowed cache, if any, and passes `result` through.
  template <typename T>
  T Finish(std::optional<DraVerdictCacheStore::Loan> loan, T result) {
    if (loan) in_.dra_verdicts->Return(std::move(*loan));
    return result;
  }

  const Pod& pod_;
  const EvaluationInputs in_;
  placement::DraPlanner planner_;
};

}  // namespace

std::string_view NodePolicyFor(const placement::PodRequest& request, const ServiceOptions& options) {
  return request.node_policy ? std::string_view(*request.node_policy) : std::string_view(options.node_policy);
}

std::unique_ptr<PodEvaluation> MakeEvaluation(const Pod& pod, const placement::PodRequest& request,
                                              const EvaluationInputs& inputs) {
  if (request.kind == RequestKind::kNone) return std::make_unique<DraEvaluation>(pod, inputs);
  return std::make_unique<DevicePluginEvaluation>(pod, request, inputs);
}

}  // namespace gpusched::extender
