// File: pod_evaluation.cc
//
// The three pod evaluations behind filter and prioritize: device-plugin pods (planner, then node
// policy), claim pods (DRA planner through the verdict cache, re-scored by the policy), and
// KEP 5004 pods (DRA where it serves them, the device-plugin path elsewhere).
#include "gpusched/extender/pod_evaluation.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <span>

#include "gpusched/extender/gang_holds.h"
#include "gpusched/placement/extended_planners.h"
#include "gpusched/placement/dra_planner.h"
#include "gpusched/placement/kinds.h"
#include "gpusched/scoring/scorer.h"

namespace gpusched::extender {
namespace {

using placement::NodeVerdict;
using placement::RankedNode;
using placement::Outcome;
using placement::Reject;

constexpr std::string_view kUnknownNode = "node is not in gpusched's inventory";

NodeVerdict UnknownNode() {
  return NodeVerdict{.outcome = Outcome::kUnresolvable, .reject = Reject::kUnknownNode, .reason = std::string(kUnknownNode)};
}

uint64_t Hash(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

// The scorer of node policy `policy`, and in *workload the workload it scores against (fgd and
// the soft policies; null for the others). Errors: the policy needs a workload and `in` has no
// cache of it, or MakeScorer's.
StatusOr<std::unique_ptr<scoring::Scorer>> PolicyScorer(std::string_view policy, const EvaluationInputs& in,
                                                        std::shared_ptr<const scoring::TargetWorkload>* workload) {
  if (scoring::NeedsWorkload(policy)) {
    if (in.workloads == nullptr) return FailedPreconditionError(fmt::format("node policy {} needs the cluster's workload", policy));
    *workload = in.workloads->Get(*in.snapshot);
  }
  return scoring::MakeScorer(policy, workload->get());
}

// nvidia.com/gpu and mGPU pods: the Planner decides, the node policy scores, in one pass.
class DevicePluginEvaluation final : public PodEvaluation {
 public:
  DevicePluginEvaluation(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& in)
      : pod_(pod), request_(request), in_(in) {}

  Status Problem() const override { return OkStatus(); }
  bool scores_while_filtering() const override { return true; }

  StatusOr<std::vector<RankedNode>> Evaluate(const ResolvedNodes& resolved, bool /*rank*/,
                                             const OnNodeFailed& on_failed) override {
    for (size_t pos = 0; pos < resolved.nodes.size(); ++pos) {
      // gpusched knows nothing of the node: evicting pods there cannot be shown to help.
      if (resolved.nodes[pos] == nullptr) on_failed(pos, UnknownNode());
    }
    std::string_view policy = NodePolicyFor(request_, *in_.options);
    std::shared_ptr<const scoring::TargetWorkload> workload;
    // The name was validated where it was read (the configuration or the pod's annotation).
    StatusOr<std::unique_ptr<scoring::Scorer>> scorer = PolicyScorer(policy, in_, &workload);
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

// Re-scores `fits[first..]` (DRA nodes that fit, with their `verdicts`) by the node policy, as
// device-plugin pods are scored: the scoring library on each node's GPUs (whole devices, and
// partitionable ones by their counters: DraPlanner::GpuView), the pod taking what its ranked
// choice does (whole GPUs, or one partition's share). A topology-aligned choice stays first.
// Nodes the library cannot judge (no GPU taken, more devices than a view holds) and policies
// whose workload is not at hand keep the planner's score.
void ScoreByPolicy(std::string_view policy, uint64_t seed, const EvaluationInputs& in,
                   const ResolvedNodes& resolved, const std::vector<std::shared_ptr<const placement::DraVerdict>>& verdicts,
                   size_t first, std::vector<RankedNode>* fits) {
  constexpr double kTopologyFirst = 1e6;  // above any policy's score
  std::shared_ptr<const scoring::TargetWorkload> workload;
  StatusOr<std::unique_ptr<scoring::Scorer>> scorer = PolicyScorer(policy, in, &workload);
  if (!scorer.ok()) return;
  // Candidates grouped by what the pod takes (one group, unless firstAvailable differs by node).
  std::map<std::pair<int, int32_t>, std::vector<size_t>> by_taken;  // {GPUs, milli} -> indices into verdicts
  std::vector<scoring::NodeView> views(verdicts.size());
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const std::optional<scoring::NodeView>& view = verdicts[i]->gpu_view;
    std::pair<int, int32_t> taken{verdicts[i]->gpus_taken, verdicts[i]->milli_taken};
    if (!view || taken.first == 0) continue;
    views[i] = *view;
    if (scoring::Fits(scoring::PodShape{.gpus = taken.first, .milli = taken.second}, views[i])) by_taken[taken].push_back(i);
  }
  Rng rng(seed);
  for (const auto& [taken, members] : by_taken) {
    std::vector<scoring::Candidate> candidates;
    for (size_t i : members) {
      const RankedNode& f = (*fits)[first + i];
      candidates.push_back(scoring::Candidate{.node = &views[i], .order = resolved.index[f.pos],
                                              .rank = (*scorer)->UsesRank() ? placement::StableRank(resolved.nodes[f.pos]->node.name) : 0.0});
    }
    std::vector<scoring::Choice> choices(candidates.size());
    (*scorer)->Score(scoring::PodShape{.gpus = taken.first, .milli = taken.second}, candidates, choices, rng);
    for (size_t k = 0; k < members.size(); ++k) {
      (*fits)[first + members[k]].score = (verdicts[members[k]]->topology_aligned ? kTopologyFirst : 0.0) + choices[k].score;
    }
  }
}

// A DRA fit's verdict and the planner that judged it (its claims' names), by node position;
// empty where the links did not judge the set.
using DraFits = std::vector<std::pair<std::shared_ptr<const placement::DraVerdict>, const placement::DraPlanner*>>;

// How the device set for the pod's multi-GPU requests stands on the links of the node at `pos`
// ("the devices allocated here for claim pair request gpus would be GPU0+GPU2,
// NVLink-connected"), or "" where they did not judge it.
std::string DraLinksNote(const DraFits& verdicts, size_t pos) {
  if (pos >= verdicts.size() || verdicts[pos].first == nullptr) return "";
  const placement::ChosenLinks& l = verdicts[pos].first->links;
  return placement::DescribeChosenLinks(l, verdicts[pos].second->to_allocate()[l.claim]->name);
}

// Of `fits`, the DRA nodes whose device set for the pod's multi-GPU requests is not
// NVLink-connected (DraVerdict::links kScattered) where another's is (kConnected), by place in
// `fits`, with the reason: as whole-GPU nodes are refused (whole_gpu_sets.h ScatteredNodes). A
// preference in prioritize would not do: kube-scheduler skips scoring when one node is left.
std::vector<std::pair<size_t, std::string>> ScatteredDraFits(const DraFits& verdicts, const std::vector<RankedNode>& fits) {
  using placement::LinkedStanding;
  auto links = [&](const RankedNode& f) -> const placement::ChosenLinks* {
    return f.pos < verdicts.size() && verdicts[f.pos].first != nullptr ? &verdicts[f.pos].first->links : nullptr;
  };
  bool connected = std::any_of(fits.begin(), fits.end(), [&](const RankedNode& f) {
    const placement::ChosenLinks* l = links(f);
    return l != nullptr && l->standing == LinkedStanding::kConnected;
  });
  std::vector<std::pair<size_t, std::string>> refused;
  for (size_t i = 0; connected && i < fits.size(); ++i) {
    const placement::ChosenLinks* l = links(fits[i]);
    if (l == nullptr || l->standing != LinkedStanding::kScattered) continue;
    const placement::DraPlanner& planner = *verdicts[fits[i].pos].second;
    refused.emplace_back(i, placement::DescribeChosenLinks(*l, planner.to_allocate()[l->claim]->name) +
                                "; other nodes offered have a connected set");
  }
  return refused;
}

// Judges the nodes of `resolved` at `positions` (none null) with `planner`, through the DRA
// verdict cache where the planner's verdicts can be shared; appends those that fit to *fits
// (scored by `policy` when `rank`) and calls on_failed for the others. Errors: a fault of the
// request (bad CEL, unknown class), which stops the pod's filter as upstream.
Status EvaluateByDra(const placement::DraPlanner& planner, std::string_view policy, const Pod& pod, const EvaluationInputs& in,
                     const ResolvedNodes& resolved, std::span<const size_t> positions, bool rank, const OnNodeFailed& on_failed,
                     std::vector<RankedNode>* fits, DraFits* verdicts) {
  std::optional<DraVerdictCacheStore::Loan> loan;
  if (in.dra_verdicts != nullptr && planner.cacheable()) loan = in.dra_verdicts->Borrow(planner.shape());
  placement::DraVerdictCache* cache = loan ? loan->cache.get() : nullptr;
  Status status;
  size_t first = fits->size();
  std::vector<std::shared_ptr<const placement::DraVerdict>> fitting;
  for (size_t pos : positions) {
    const placement::NodeState& node = *resolved.nodes[pos];
    std::shared_ptr<const placement::DraVerdict> v = planner.Evaluate(node, resolved.index[pos], rank, cache);
    if (v->node.outcome == Outcome::kError && !rank) {
      status = InvalidArgumentError(v->node.reason);
      break;
    }
    if (!v->fits()) {
      on_failed(pos, NodeVerdict(v->node));
      continue;
    }
    fits->push_back(RankedNode{pos, v->score});
    if (v->links.standing != placement::LinkedStanding::kUnknown) {
      if (verdicts->size() < resolved.nodes.size()) verdicts->resize(resolved.nodes.size());
      (*verdicts)[pos] = {v, &planner};
    }
    if (rank) fitting.push_back(v);
    if (rank && in.log != nullptr) in.log->Record(fmt::format("{}/{}", pod.namespace_name, pod.name), node.node.name, std::move(v));
  }
  if (loan) in.dra_verdicts->Return(std::move(*loan));
  if (rank && status.ok()) ScoreByPolicy(policy, Hash(pod.uid), in, resolved, fitting, first, fits);
  return status;
}

// Pods with ResourceClaims: the DRA planner allocates as kube-scheduler would, and ranks.
class DraEvaluation final : public PodEvaluation {
 public:
  DraEvaluation(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& in)
      : pod_(pod), policy_(NodePolicyFor(request, *in.options)), in_(in), planner_(in.snapshot->dra(), pod, in.programs, in.options->dra) {}

  Status Problem() const override { return ClaimsProblem(planner_.problem()); }
  bool scores_while_filtering() const override { return false; }

  StatusOr<std::vector<RankedNode>> Evaluate(const ResolvedNodes& resolved, bool rank,
                                             const OnNodeFailed& on_failed) override {
    std::vector<size_t> known;
    for (size_t pos = 0; pos < resolved.nodes.size(); ++pos) {
      if (resolved.nodes[pos] == nullptr) {
        on_failed(pos, UnknownNode());
      } else {
        known.push_back(pos);
      }
    }
    std::vector<RankedNode> fits;
    verdicts_.clear();
    GPUSCHED_RETURN_IF_ERROR(EvaluateByDra(planner_, policy_, pod_, in_, resolved, known, rank, on_failed, &fits, &verdicts_));
    return fits;
  }
  std::vector<std::pair<size_t, std::string>> RefusedAmongFits(const std::vector<RankedNode>& fits) const override {
    return ScatteredDraFits(verdicts_, fits);
  }
  std::string LinksNote(size_t pos) const override { return DraLinksNote(verdicts_, pos); }

 private:
  const Pod& pod_;
  const std::string policy_;
  const EvaluationInputs in_;
  placement::DraPlanner planner_;
  DraFits verdicts_;  // the last Evaluate's, where NVLink links judged the set
};

// Pods asking extended resources that a DeviceClass maps (KEP 5004, extended_planners.h): on
// nvidia-dra nodes where DRA serves them the DRA planner allocates the pod's special claim (with
// its own claims, if any) and ranks; every other node judges the pod as a device-plugin pod. The
// two kinds of node are scored by their own rules.
class ExtendedResourceEvaluation final : public PodEvaluation {
 public:
  ExtendedResourceEvaluation(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& in,
                             std::unique_ptr<placement::ExtendedPlanners> planners)
      : pod_(pod), policy_(NodePolicyFor(request, *in.options)), in_(in), planners_(std::move(planners)), plugin_(pod, request, in) {}

  Status Problem() const override { return ClaimsProblem(in_.snapshot->dra().Resolve(pod_).problem); }
  bool scores_while_filtering() const override { return false; }

  StatusOr<std::vector<RankedNode>> Evaluate(const ResolvedNodes& resolved, bool rank,
                                             const OnNodeFailed& on_failed) override {
    ResolvedNodes plugin;
    std::vector<size_t> plugin_pos;
    std::map<const placement::DraPlanner*, std::vector<size_t>> by_planner;  // DRA nodes
    for (size_t pos = 0; pos < resolved.nodes.size(); ++pos) {
      const placement::NodeState* node = resolved.nodes[pos];
      if (const placement::DraPlanner* planner = node != nullptr ? planners_->For(*node) : nullptr) {
        by_planner[planner].push_back(pos);
        continue;
      }
      plugin.nodes.push_back(node);
      plugin.index.push_back(resolved.index[pos]);
      plugin.generations.push_back(resolved.generations[pos]);
      plugin_pos.push_back(pos);
    }
    std::vector<RankedNode> fits;
    verdicts_.clear();
    for (const auto& [planner, positions] : by_planner) {
      GPUSCHED_RETURN_IF_ERROR(EvaluateByDra(*planner, policy_, pod_, in_, resolved, positions, rank, on_failed, &fits, &verdicts_));
    }
    if (!plugin.nodes.empty()) {
      auto on_plugin_failed = [&](size_t i, NodeVerdict&& v) { on_failed(plugin_pos[i], std::move(v)); };
      GPUSCHED_ASSIGN_OR_RETURN(std::vector<RankedNode> more, plugin_.Evaluate(plugin, rank, on_plugin_failed));
      for (const RankedNode& f : more) fits.push_back(RankedNode{plugin_pos[f.pos], f.score});
    }
    std::sort(fits.begin(), fits.end(), [](const RankedNode& a, const RankedNode& b) { return a.pos < b.pos; });
    return fits;
  }
  std::vector<std::pair<size_t, std::string>> RefusedAmongFits(const std::vector<RankedNode>& fits) const override {
    return ScatteredDraFits(verdicts_, fits);
  }
  std::string LinksNote(size_t pos) const override { return DraLinksNote(verdicts_, pos); }

 private:
  const Pod& pod_;
  const std::string policy_;
  const EvaluationInputs in_;
  std::unique_ptr<placement::ExtendedPlanners> planners_;
  DevicePluginEvaluation plugin_;
  DraFits verdicts_;  // the last Evaluate's DRA nodes, where NVLink links judged the set
};

}  // namespace

namespace {

// Removes `refused` (each reason with places in `fits`) from `fits`, telling on_refused each
// reason with the nodes' positions. Returns how many.
size_t Refuse(const std::vector<std::pair<std::string, std::vector<size_t>>>& refused, std::vector<placement::RankedNode>* fits,
              const OnNodesRefused& on_refused) {
  std::vector<bool> drop(fits->size(), false);
  std::vector<size_t> positions;
  size_t count = 0;
  for (const auto& [reason, places] : refused) {
    positions.clear();
    for (size_t i : places) {
      drop[i] = true;
      positions.push_back((*fits)[i].pos);
    }
    count += places.size();
    on_refused(positions, reason);
  }
  size_t i = 0;
  std::erase_if(*fits, [&](const placement::RankedNode&) { return drop[i++]; });
  return count;
}

// `refused` (places in fits, with reasons) grouped by reason, in the order reasons first appear.
std::vector<std::pair<std::string, std::vector<size_t>>> ByReason(std::vector<std::pair<size_t, std::string>> refused) {
  std::vector<std::pair<std::string, std::vector<size_t>>> out;
  std::map<std::string, size_t, std::less<>> at;
  for (auto& [i, reason] : refused) {
    auto [it, added] = at.try_emplace(reason, out.size());
    if (added) out.emplace_back(std::move(reason), std::vector<size_t>{});
    out[it->second].second.push_back(i);
  }
  return out;
}

std::vector<const placement::NodeState*> StatesOf(const ResolvedNodes& nodes, const std::vector<placement::RankedNode>& fits) {
  std::vector<const placement::NodeState*> states;
  for (const placement::RankedNode& f : fits) states.push_back(nodes.nodes[f.pos]);
  return states;
}

}  // namespace

size_t RefuseAmongFits(const placement::PodRequest& request, const ResolvedNodes& nodes,
                       std::vector<placement::RankedNode>* fits, const OnNodesRefused& on_refused) {
  const placement::Kind* kind = placement::KindFor(request.kind);
  if (kind == nullptr || fits->size() < 2 || !kind->MayRefuseAmongFits(request)) return 0;
  return Refuse(ByReason(kind->RefuseAmongFits(request, StatesOf(nodes, *fits))), fits, on_refused);
}

void RefuseAmongFitting(const Pod& pod, const placement::PodRequest& request, const PodEvaluation& evaluation,
                        const ServiceOptions& options, const DomainFullness* fullness,
                        const inventory::InventorySnapshot& snapshot, const ResolvedNodes& nodes,
                        std::vector<placement::RankedNode>* fits, const OnNodesRefused& on_refused) {
  Refuse(ByReason(evaluation.RefusedAmongFits(*fits)), fits, on_refused);
  RefuseAmongFits(request, nodes, fits, on_refused);
  RefuseOutsideFullestDomain(pod, SteeredPod::kAsksGpus, options, fullness, snapshot, nodes, fits, on_refused);
}

void RefuseOutsideFullestDomain(const Pod& pod, SteeredPod steered, const ServiceOptions& options,
                                const DomainFullness* fullness, const inventory::InventorySnapshot& snapshot,
                                const ResolvedNodes& nodes, std::vector<placement::RankedNode>* fits,
                                const OnNodesRefused& on_refused) {
  if (!options.topology_steer || options.topology_levels.empty() || fits->empty()) return;
  // A pod of a group is the gang planner's to steer; one whose group is no gang gpusched plans is
  // still kept off a domain kept for a gang.
  if (pod.group && !(ReservesForGangs(options) && StandingOf(pod, snapshot, options.gangs).kind == GangStanding::Kind::kAlone)) return;
  const std::string& key = options.topology_levels.front();
  DomainFullness local(options);
  std::shared_ptr<const DomainIndex> index = (fullness != nullptr ? fullness : &local)->Of(snapshot, key);
  if (index->domains.empty()) return;  // no node carries the label (computed once per snapshot)
  auto positions = [&] {
    std::vector<uint32_t> out;
    out.reserve(fits->size());
    for (const placement::RankedNode& f : *fits) out.push_back(nodes.index[f.pos]);
    return out;
  };
  if (ReservesForGangs(options) && index->reserved && KeptOff(pod, *index->reserved, snapshot, options)) {
    Refuse(InReservedDomain(positions(), key, *index), fits, on_refused);
  }
  if (pod.group || fits->size() < 2) return;
  Refuse(OutsideFullestDomain(positions(), key, *index, steered), fits, on_refused);
}

bool KeptOff(const Pod& pod, const DomainReservation& kept, const inventory::InventorySnapshot& snapshot,
             const ServiceOptions& options) {
  auto in_kept = [&](const std::string& name) {
    const placement::NodeState* node = name.empty() ? nullptr : snapshot.FindNode(name);
    return InKeptDomain(node, kept.domain, options);
  };
  // Room made or held for it there (a defrag hold or slot, a preemption's nomination) stays its own.
  const Allocation* held = SlotOf(pod.uid, snapshot);
  if (in_kept(pod.nominated_node) || (held != nullptr && in_kept(held->node_name))) return false;
  if (const PodGroup* gang = DeclaredGangOf(pod, snapshot)) return GangKeptOff(FactsOf(pod, *gang, kept, snapshot), kept);
  return KeptOffReserved(pod, kept);
}

std::string KeptOffFor(std::span<const Pod> pods, const DomainReservation* kept, const inventory::InventorySnapshot& snapshot,
                       const ServiceOptions& options) {
  if (kept == nullptr || pods.empty()) return "";
  if (const PodGroup* gang = DeclaredGangOf(pods.front(), snapshot)) {  // one judgement for the gang
    GangFacts facts = FactsOf(pods.front(), *gang, *kept, snapshot);
    for (const Pod& p : pods) facts.priority = std::max(facts.priority, p.priority);
    return OffDomain(facts, kept);
  }
  bool off = std::any_of(pods.begin(), pods.end(), [&](const Pod& p) { return KeptOff(p, *kept, snapshot, options); });
  return off ? kept->domain : "";
}

std::optional<DomainReservation> KeptReservation(const EvaluationInputs& inputs) {
  if (!ReservesForGangs(*inputs.options)) return std::nullopt;
  DomainFullness local(*inputs.options);
  return (inputs.domains != nullptr ? inputs.domains : &local)->Of(*inputs.snapshot, inputs.options->topology_levels.front())->reserved;
}

std::string KeptDomain(const EvaluationInputs& inputs) {
  std::optional<DomainReservation> kept = KeptReservation(inputs);
  return kept ? kept->domain : "";
}

std::string KeptOffDomain(const Pod& pod, const EvaluationInputs& inputs) {
  std::optional<DomainReservation> kept = KeptReservation(inputs);
  return kept && KeptOff(pod, *kept, *inputs.snapshot, *inputs.options) ? kept->domain : "";
}


std::string_view NodePolicyFor(const placement::PodRequest& request, const ServiceOptions& options) {
  return request.node_policy ? std::string_view(*request.node_policy) : std::string_view(options.node_policy);
}

placement::JudgeContext JudgeContextOf(const EvaluationInputs& in) {
  return placement::JudgeContext{.dra = &in.snapshot->dra(), .programs = in.programs, .placement = in.options->placement,
                                 .dra_options = in.options->dra, .dra_extended_resources = in.options->dra_extended_resources};
}

std::unique_ptr<PodEvaluation> MakeEvaluation(const Pod& pod, const placement::PodRequest& request,
                                              const EvaluationInputs& inputs) {
  if (request.claims_only()) return std::make_unique<DraEvaluation>(pod, request, inputs);
  auto planners = std::make_unique<placement::ExtendedPlanners>(inputs.snapshot->dra(), pod, inputs.programs,
                                                                inputs.options->dra, inputs.options->dra_extended_resources);
  if (planners->any()) return std::make_unique<ExtendedResourceEvaluation>(pod, request, inputs, std::move(planners));
  return std::make_unique<DevicePluginEvaluation>(pod, request, inputs);
}

}  // namespace gpusched::extender
