// File: pod_judge.h
//
// PodJudge: one pending pod's judgement for the algorithms over what-ifs, made once per request
// by the pod's kind (Kind::NewPodJudge) and asked node by node: which pods must leave a node for
// it to fit there (preempt, explain, the filter's Event), and which moves make room for it in the
// cluster (defrag). A kind whose pods get their GPUs from the device plugin shares one judge
// (victims.h, defrag_planner.h), which also serves the pod's extended resources through DRA on
// the nodes where DRA serves them (KEP 5004, extended_planners.h); the DRA kind's judge chooses by
// the devices the pod's claims would get (dra_victims.h, dra_defrag.h). So no verb asks which kind
// a pod is to choose victims or moves.
//
// Not thread-safe: one per request (or thread). Pure apart from its search buffers.
#pragma once

#include <memory>

#include "gpusched/common/status.h"
#include "gpusched/dra/cel.h"
#include "gpusched/dra/cluster_state.h"
#include "gpusched/model/node_mode.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/defrag_planner.h"
#include "gpusched/placement/dra_planner.h"
#include "gpusched/placement/policy.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/victims.h"

namespace gpusched::placement {

// What a judge reads besides the pod. `dra` and `programs` must outlive the judges made with it.
struct JudgeContext {
  const dra::ClusterState* dra = nullptr;
  dra::cel::ProgramCache* programs = nullptr;  // compiled CEL selectors, shared
  PlacementOptions placement;
  DraOptions dra_options;
  bool dra_extended_resources = true;  // DRA may serve a pod's extended resources (KEP 5004)
};

class PodJudge {
 public:
  virtual ~PodJudge() = default;

  // OK, or why the pod can be judged on no node now: Unavailable. The claims judge says so when
  // a claim the pod names is missing or not generated yet; the device-plugin judge always
  // answers OK (a KEP 5004 pod's missing claim shows as no room where DRA serves it).
  virtual Status Problem() const = 0;
  // The mode of the GPUs the pod gets on `node`.
  virtual NodeMode ModeOn(const NodeState& node) = 0;
  // Chooses the pods to evict from `node` so that the pod fits there (victims.h).
  virtual VictimChoice ChooseVictims(const NodeState& node, const VictimRules& rules) = 0;
  // The plan that makes room for the pod with the fewest moves (defrag_planner.h's MakeRoom).
  virtual DefragPlan MakeRoom(const DefragInput& cluster, const DefragOptions& options) = 0;
};

// The Problem of a pod whose claims resolved with `problem` ("" for none): OK or Unavailable.
Status ClaimsProblem(const std::string& problem);

// The judge of a pod whose GPUs come from the device plugin, the default of every kind.
// REQUIRES: `pod`, `request` and what `context` points to outlive it; request.device_plugin().
std::unique_ptr<PodJudge> NewDevicePluginJudge(const Pod& pod, const PodRequest& request, const JudgeContext& context);

// The judge of `pod`, made by the kind of its request. REQUIRES: request is AnalyzePod(pod),
// request.asks_gpu(), and `pod`, `request` and what `context` points to outlive the judge.
std::unique_ptr<PodJudge> JudgeOf(const Pod& pod, const PodRequest& request, const JudgeContext& context);

}  // namespace gpusched::placement
