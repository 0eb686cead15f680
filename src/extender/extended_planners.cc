// File: extended_planners.cc
//
// The planners of KEP 5004 pods: on an nvidia-dra node, which of the pod's resources DRA serves
// there, and one DRA planner per distinct set of them, built with the special claim that set needs.
#include "gpusched/extender/extended_planners.h"

namespace gpusched::extender {

ExtendedPlanners::Served::Served(const Pod& pod, const EvaluationInputs& in, dra::SpecialClaim claim)
    : special(std::move(claim)), planner(in.snapshot->dra(), pod, in.programs, in.options->dra, &special.claim) {}

ExtendedPlanners::ExtendedPlanners(const Pod& pod, const EvaluationInputs& inputs) : pod_(pod), in_(inputs) {
  if (inputs.options->dra_extended_resources) {
    mapped_ = dra::MappedResources(pod, inputs.snapshot->dra().classes());
  }
}

const placement::DraPlanner* ExtendedPlanners::For(const placement::NodeState& node) {
  if (mapped_.empty() || !HasPayload(node.mode, Payload::kDevices)) return nullptr;
  std::vector<std::string> served = dra::ServedOn(node.node, mapped_);
  if (served.empty()) return nullptr;
  auto it = by_served_.find(served);
  if (it == by_served_.end()) {
    std::optional<dra::SpecialClaim> special = dra::BuildSpecialClaim(pod_, in_.snapshot->dra().classes(), served);
    if (!special) return nullptr;  // not reached: every resource served is mapped
    it = by_served_.emplace(std::move(served), std::make_unique<Served>(pod_, in_, std::move(*special))).first;
  }
  return &it->second->planner;
}

}  // namespace gpusched::extender
