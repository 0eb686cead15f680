// File: cheapest_eviction.cc
//
// The evictions that would make room for a pod, node by node, and the cheapest of them in words.
#include "gpusched/extender/cheapest_eviction.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <tuple>

#include "gpusched/placement/resource_fit.h"

namespace gpusched::extender {
namespace {

// kube-scheduler's pickOneNodeForPreemption: the sum of priorities adds 2^31 to each (every term
// positive), so that fewer victims of a negative priority never lose to more of the same.
auto CandidateKey(const Evictions& e, std::string_view node) {
  int64_t total = 0;
  int32_t highest = INT32_MIN;
  for (const Eviction& v : e.pods) {
    total += int64_t{v.priority} + (int64_t{1} << 31);
    highest = std::max(highest, v.priority);
  }
  return std::make_tuple(e.pdb_violations, highest, total, e.pods.size(), node);
}

}  // namespace

std::optional<Evictions> EvictionsOn(const Pod& pod, const placement::NodeState& node,
                                     const std::shared_ptr<const std::vector<DisruptionBudget>>& budgets,
                                     VictimChooser& chooser) {
  ResourceList none;
  placement::ResourceFit fit(node, none);
  DisruptionCounter counter(budgets);
  placement::VictimChoice c = chooser.Choose(node, PreemptionRules(pod, fit, budgets ? &counter : nullptr));
  if (!c.helps || c.victims.empty()) return std::nullopt;
  Evictions out;
  std::vector<std::string_view> uids;
  for (const Allocation* a : c.victims) {
    out.pods.push_back(Eviction{.pod = a->pod_namespace + "/" + a->pod_name, .uid = a->pod_uid, .priority = a->priority});
    uids.push_back(a->pod_uid);
  }
  out.pdb_violations = CountViolations(uids, fit, budgets);
  return out;
}

std::optional<Evictions> ResourceEvictionsOn(const Pod& pod, const ResourceList& requests, const placement::NodeState& node,
                                             const std::shared_ptr<const std::vector<DisruptionBudget>>& budgets) {
  if (node.uses == nullptr) return std::nullopt;
  placement::ResourceFit fit(node, requests);
  fit.CountNominated(pod.uid, pod.priority);
  std::vector<const PodUse*> lower;
  for (const PodUse& u : node.uses->pods()) {
    if (u.uid != pod.uid && !u.terminating && u.priority < pod.priority) lower.push_back(&u);
  }
  for (const PodUse* u : lower) fit.Remove(*u);
  if (!fit.Fits()) return std::nullopt;
  std::stable_sort(lower.begin(), lower.end(), [](const PodUse* a, const PodUse* b) { return a->priority > b->priority; });
  Evictions out;
  std::vector<std::string_view> uids;
  for (const PodUse* u : lower) {
    fit.Restore(*u);
    if (fit.Fits()) continue;  // reprieved
    fit.Remove(*u);
    std::string ns = u->labels ? u->labels->namespace_name : "";
    out.pods.push_back(Eviction{.pod = ns + "/" + u->name, .uid = u->uid, .priority = u->priority});
    uids.push_back(u->uid);
  }
  if (out.pods.empty()) return std::nullopt;
  out.pdb_violations = CountViolations(uids, fit, budgets);
  return out;
}

bool Cheaper(const Evictions& a, std::string_view a_node, const Evictions& b, std::string_view b_node) {
  return CandidateKey(a, a_node) < CandidateKey(b, b_node);
}

std::string CheapestFix(const Pod& pod, const placement::PodRequest& request, std::span<const placement::NodeState* const> nodes,
                        const EvaluationInputs& inputs) {
  if (!request.asks_gpu() || pod.never_preempts) return "";
  VictimChooser chooser(pod, request, inputs);
  if (!chooser.Problem().ok()) return "";
  std::optional<Evictions> best;
  std::string_view best_node;
  for (const placement::NodeState* node : nodes) {
    std::optional<Evictions> e = EvictionsOn(pod, *node, inputs.snapshot->budgets(), chooser);
    if (e && (!best || Cheaper(*e, node->node.name, *best, best_node))) {
      best = std::move(e);
      best_node = node->node.name;
    }
  }
  if (!best) return "";
  std::vector<std::string> pods;
  for (const Eviction& v : best->pods) pods.push_back(fmt::format("{}, priority {}", v.pod, v.priority));
  size_t count = best->pods.size();
  return fmt::format("evicting {} pod{} on {} ({}) makes room", count, count == 1 ? "" : "s", best_node, fmt::join(pods, "; "));
}

}  // namespace gpusched::extender
