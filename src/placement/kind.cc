// File: kind.cc
//
// The defaults of a kind (kind.h): a pod that fits every ready node of its mode and holds nothing
// gpusched books.
#include "gpusched/placement/kind.h"

#include "gpusched/placement/pod_judge.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::placement {

PodRequest Kind::RequestHeldBy(const Allocation& a, std::string_view compute_policy) const { return PodRequest{}; }

void Kind::Evaluate(const PodRequest& request, const NodeState& node, const Judging& how, NodeVerdict* v) const {
  v->outcome = Outcome::kFits;
  v->placement.kind = row_.request;
}

std::unique_ptr<PodJudge> Kind::NewPodJudge(const Pod& pod, const PodRequest& request, const JudgeContext& context) const {
  return NewDevicePluginJudge(pod, request, context);
}

}  // namespace gpusched::placement
