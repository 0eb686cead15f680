// File: extended_planners.h
//
// The DRA planners of a pod's special claims (KEP 5004, dra/extended_resources.h): on an
// nvidia-dra node whose allocatable does not list some extended resources of the pod that a
// DeviceClass maps, DRA serves them through a special claim, which the DRA planner allocates
// with the pod's own claims. One planner per set of resources served (nodes with the same
// allocatable share it). Off in DRA owner mode (it cannot create special claims yet) and where
// the service's dra_extended_resources option is false.
//
// Not thread-safe: one per request and thread (filter, each preempt worker, explain, defrag).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/dra/cel.h"
#include "gpusched/dra/cluster_state.h"
#include "gpusched/dra/extended_resources.h"
#include "gpusched/placement/dra_planner.h"

namespace gpusched::placement {

class ExtendedPlanners {
 public:
  // `enabled`: DRA may serve extended resources (else no node has a planner). REQUIRES: state,
  // pod and programs outlive it.
  ExtendedPlanners(const dra::ClusterState& state, const Pod& pod, dra::cel::ProgramCache* programs, DraOptions options,
                   bool enabled);

  // True if the pod asks extended resources that some class maps (and the feature is on).
  bool any() const { return !mapped_.empty(); }
  // The resources of the pod that some class maps.
  const std::vector<std::string>& mapped() const { return mapped_; }
  // The planner for `node` if DRA serves some of the pod's resources there, else nullptr. Valid
  // as long as this object.
  const DraPlanner* For(const NodeState& node);

 private:
  // A special claim and the planner that allocates it (the planner points at the claim).
  struct Served {
    Served(const ExtendedPlanners& owner, dra::SpecialClaim claim);
    dra::SpecialClaim special;
    DraPlanner planner;
  };

  const dra::ClusterState& state_;
  const Pod& pod_;
  dra::cel::ProgramCache* programs_;
  const DraOptions options_;
  std::vector<std::string> mapped_;
  std::map<std::vector<std::string>, std::unique_ptr<Served>> by_served_;
};

}  // namespace gpusched::placement
