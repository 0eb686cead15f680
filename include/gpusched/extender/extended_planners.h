// File: extended_planners.h
//
// The DRA planners of a pod's special claims (KEP 5004, dra/extended_resources.h): on an
// nvidia-dra node whose allocatable does not list some extended resources of the pod that a
// DeviceClass maps, DRA serves them through a special claim, which the DRA planner allocates
// with the pod's own claims. One planner per set of resources served (nodes with the same
// allocatable share it). Off in DRA owner mode (it cannot create special claims yet) and where
// ServiceOptions::dra_extended_resources is false.
//
// Not thread-safe: one per request and thread (filter, each preempt worker, explain).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/dra/extended_resources.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/placement/dra_planner.h"

namespace gpusched::extender {

class ExtendedPlanners {
 public:
  // REQUIRES: pod and what `inputs` points to outlive it (inputs itself is copied).
  ExtendedPlanners(const Pod& pod, const EvaluationInputs& inputs);

  // True if the pod asks extended resources that some class maps (and the feature is on).
  bool any() const { return !mapped_.empty(); }
  // The planner for `node` if DRA serves some of the pod's resources there, else nullptr. Valid
  // as long as this object.
  const placement::DraPlanner* For(const placement::NodeState& node);

 private:
  // A special claim and the planner that allocates it (the planner points at the claim).
  struct Served {
    Served(const Pod& pod, const EvaluationInputs& in, dra::SpecialClaim claim);
    dra::SpecialClaim special;
    placement::DraPlanner planner;
  };

  const Pod& pod_;
  const EvaluationInputs in_;
  std::vector<std::string> mapped_;
  std::map<std::vector<std::string>, std::unique_ptr<Served>> by_served_;
};

}  // namespace gpusched::extender
