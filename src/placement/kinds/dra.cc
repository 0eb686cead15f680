// File: dra.cc
//
// The DRA kind: no resource of its own (claims-only pods are given to it by AnalyzePod), the
// Kind defaults for the node, and its judge: victims and moves by the devices the pod's claims
// would get (dra_victims.h, dra_defrag.h).
#include "gpusched/placement/kinds/dra.h"

#include "gpusched/placement/dra_defrag.h"
#include "gpusched/placement/dra_victims.h"
#include "gpusched/placement/pod_judge.h"

namespace gpusched::placement {
namespace {

class ClaimsJudge final : public PodJudge {
 public:
  ClaimsJudge(const Pod& pod, const JudgeContext& context)
      : pod_(pod), context_(context), planner_(*context.dra, pod, context.programs, context.dra_options) {}

  Status Problem() const override { return ClaimsProblem(planner_.problem()); }
  NodeMode ModeOn(const NodeState& node) override { return ClaimsMode(); }
  VictimChoice ChooseVictims(const NodeState& node, const VictimRules& rules) override {
    return ChooseDraVictims(planner_, *context_.dra, node, rules);
  }
  DefragPlan MakeRoom(const DefragInput& cluster, const DefragOptions& options) override {
    DraDefragInput in{.cluster = cluster, .state = context_.dra, .programs = context_.programs, .dra = context_.dra_options};
    return MakeRoomForClaims(pod_, in, options);
  }

 private:
  const Pod& pod_;
  const JudgeContext context_;
  DraPlanner planner_;
};

class DraKind final : public Kind {
 public:
  DraKind() : Kind(*KindOf(RequestKind::kDra)) {}

  bool Asks(const Pod& pod) const override { return false; }
  void Analyze(const Pod& pod, PodRequest* out, Violations* invalid, Violations* unplaceable) const override {}
  std::unique_ptr<PodJudge> NewPodJudge(const Pod& pod, const PodRequest& request,
                                        const JudgeContext& context) const override {
    return std::make_unique<ClaimsJudge>(pod, context);
  }
};

}  // namespace

std::unique_ptr<Kind> MakeDraKind() { return std::make_unique<DraKind>(); }

}  // namespace gpusched::placement
