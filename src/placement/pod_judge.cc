// File: pod_judge.cc
//
// The judge every device-plugin kind shares: victims and moves by the GPUs the pod would get
// (victims.h, defrag_planner.h), and by the devices its special claim would get on the nodes
// where DRA serves its extended resources (KEP 5004). JudgeOf asks the pod's kind for its judge.
#include "gpusched/placement/pod_judge.h"

#include <optional>

#include "gpusched/dra/extended_resources.h"
#include "gpusched/placement/dra_defrag.h"
#include "gpusched/placement/dra_victims.h"
#include "gpusched/placement/extended_planners.h"
#include "gpusched/placement/kinds.h"

namespace gpusched::placement {
namespace {

class DevicePluginJudge final : public PodJudge {
 public:
  DevicePluginJudge(const Pod& pod, const PodRequest& request, const JudgeContext& context)
      : pod_(pod),
        request_(request),
        context_(context),
        finder_(context.placement),
        extended_(*context.dra, pod, context.programs, context.dra_options, context.dra_extended_resources) {}

  Status Problem() const override { return OkStatus(); }

  NodeMode ModeOn(const NodeState& node) override {
    return extended_.For(node) != nullptr ? ClaimsMode() : ModeServing(request_.kind);
  }

  VictimChoice ChooseVictims(const NodeState& node, const VictimRules& rules) override {
    if (const DraPlanner* special = extended_.For(node)) return ChooseDraVictims(*special, *context_.dra, node, rules);
    return finder_.Choose(request_, node, rules);
  }

  // The plan by the pod's GPUs, or the one through DRA where it serves the pod's extended
  // resources when that one needs fewer moves.
  DefragPlan MakeRoom(const DefragInput& cluster, const DefragOptions& options) override {
    DefragPlan plan = placement::MakeRoom(request_, pod_, cluster, options);
    std::optional<dra::SpecialClaim> special =
        extended_.any() ? dra::BuildSpecialClaim(pod_, context_.dra->classes(), extended_.mapped()) : std::nullopt;
    if (!special) return plan;
    DraDefragInput dra{.cluster = cluster, .state = context_.dra, .programs = context_.programs,
                       .dra = context_.dra_options, .special = &special->claim};
    DefragPlan through_dra = MakeRoomForClaims(pod_, dra, options);
    if (through_dra.fits && (!plan.fits || through_dra.moves.size() < plan.moves.size())) return through_dra;
    return plan;
  }

 private:
  const Pod& pod_;
  const PodRequest& request_;
  const JudgeContext context_;
  VictimFinder finder_;
  ExtendedPlanners extended_;  // nodes where DRA serves the pod's extended resources
};

}  // namespace

Status ClaimsProblem(const std::string& problem) { return problem.empty() ? OkStatus() : UnavailableError(problem); }

std::unique_ptr<PodJudge> NewDevicePluginJudge(const Pod& pod, const PodRequest& request, const JudgeContext& context) {
  return std::make_unique<DevicePluginJudge>(pod, request, context);
}

std::unique_ptr<PodJudge> JudgeOf(const Pod& pod, const PodRequest& request, const JudgeContext& context) {
  return KindFor(request.kind)->NewPodJudge(pod, request, context);
}

}  // namespace gpusched::placement
