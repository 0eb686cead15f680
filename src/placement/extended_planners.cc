// File: extended_planners.cc
//
// The planners of KEP 5004 pods: on an nvidia-dra node, which of the pod's resources DRA serves
// there, and one DRA planner per distinct set of them, built with the special claim that set needs.
#include "gpusched/placement/extended_planners.h"

namespace gpusched::placement {

ExtendedPlanners::Served::Served(const ExtendedPlanners& owner, dra::SpecialClaim claim)
    : special(std::move(claim)), planner(owner.state_, owner.pod_, owner.programs_, owner.options_, &special.claim) {}

ExtendedPlanners::ExtendedPlanners(const dra::ClusterState& state, const Pod& pod, dra::cel::ProgramCache* programs,
                                   DraOptions options, bool enabled)
    : state_(state), pod_(pod), programs_(programs), options_(std::move(options)) {
  if (enabled) mapped_ = dra::MappedResources(pod, state.classes());
}

const DraPlanner* ExtendedPlanners::For(const NodeState& node) {
  if (mapped_.empty() || !HasPayload(node.mode, Payload::kDevices)) return nullptr;
  std::vector<std::string> served = dra::ServedOn(node.node, mapped_);
  if (served.empty()) return nullptr;
  auto it = by_served_.find(served);
  if (it == by_served_.end()) {
    std::optional<dra::SpecialClaim> special = dra::BuildSpecialClaim(pod_, state_.classes(), served);
    if (!special) return nullptr;  // not reached: every resource served is mapped
    it = by_served_.emplace(std::move(served), std::make_unique<Served>(*this, std::move(*special))).first;
  }
  return &it->second->planner;
}

}  // namespace gpusched::placement
