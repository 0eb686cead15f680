// File: victim_chooser.cc
//
// Preempt's victim rules (priority, known pods, required neighbours, budgets) and the victim
// choice dispatched by the kind of devices the pod gets on each node.
#include "gpusched/extender/victim_chooser.h"

#include "gpusched/placement/kinds.h"
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
    : request_(request), in_(in), finder_(in.options->placement), extended_(pod, in) {
  if (request.claims_only()) dra_.emplace(in.snapshot->dra(), pod, in.programs, in.options->dra);
}

NodeMode VictimChooser::ModeOn(const placement::NodeState& node) {
  if (dra_ || extended_.For(node) != nullptr) return ClaimsMode();
  return ModeServing(request_.kind);
}

placement::VictimChoice VictimChooser::Choose(const placement::NodeState& node, const placement::VictimRules& rules) {
  if (dra_) return placement::ChooseDraVictims(*dra_, in_.snapshot->dra(), node, rules);
  if (const placement::DraPlanner* special = extended_.For(node)) return placement::ChooseDraVictims(*special, in_.snapshot->dra(), node, rules);
  return finder_.Choose(request_, node, rules);
}

}  // namespace gpusched::extender
