// File: victim_chooser.cc
//
// Preempt's victim rules (priority, known pods, required neighbours, budgets) and the victim
// choice of the pod's judge.
#include "gpusched/extender/victim_chooser.h"

#include "gpusched/placement/pod_relations.h"

namespace gpusched::extender {

using Budgets = std::shared_ptr<const std::vector<DisruptionBudget>>;

int64_t CountViolations(std::span<const std::string_view> uids, const placement::ResourceFit& fit, const Budgets& budgets) {
  if (budgets == nullptr) return 0;
  DisruptionCounter counter(budgets);
  int64_t violations = 0;
  for (std::string_view uid : uids) {
    const PodUse* use = fit.Find(uid);
    if (use != nullptr && counter.Evict(use->name, use->labels.get())) ++violations;
  }
  return violations;
}

placement::VictimRules PreemptionRules(const Pod& pod, const placement::ResourceFit& fit, DisruptionCounter* counter) {
  placement::VictimRules rules{.priority = pod.priority, .viewer = placement::Viewer::Of(pod), .known_only = true};
  if (!pod.constraints.affinity.empty()) {
    rules.keeps = [&pod, &fit](std::string_view uid) {
      const PodUse* use = fit.Find(uid);
      return use != nullptr && use->labels != nullptr && placement::RequiredNeighbour(pod, *use->labels);
    };
  }
  if (counter != nullptr) {
    rules.violates_pdb = [&fit, counter](const Allocation& a) {
      const PodUse* use = fit.Find(a.pod_uid);
      return use != nullptr && counter->Evict(use->name, use->labels.get());
    };
  }
  return rules;
}

VictimChooser::VictimChooser(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& in)
    : judge_(placement::JudgeOf(pod, request, JudgeContextOf(in))) {}

}  // namespace gpusched::extender
