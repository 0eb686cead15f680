// File: counted.h
//
// The base of kinds whose pods ask for a number of interchangeable devices and whose device
// plugin picks which (payload kCount): whole GPUs, or any counted resource a kind registers (a
// time-sliced GPU's replicas). A node offers NodeState::whole_total of them; the pods booked there
// hold whole_used. Subclasses say how a pod counts its request and what a node offers.
#pragma once

#include <cstdint>
#include <string>

#include "gpusched/placement/kind.h"

namespace gpusched::placement {

class CountedKind : public Kind {
 public:
  using Kind::Kind;

  // Returns how many devices the pod asks for, as the kind's rules count them (0: none), adding a
  // violation to `invalid` for each rule the pod breaks.
  virtual int64_t Requested(const Pod& pod, Violations* invalid) const = 0;
  // The most devices one container asks (PodRequest::largest_set). Default: Requested's count.
  virtual int64_t LargestSet(const Pod& pod, int64_t requested) const { return requested; }

  void Analyze(const Pod& pod, PodRequest* out, Violations* invalid, Violations* unplaceable) const override;
  PodRequest RequestHeldBy(const Allocation& a, std::string_view compute_policy) const override;
  void Record(const Pod& pod, const PodRequest& request, Placement* placement) const override;
  void Evaluate(const PodRequest& request, const NodeState& node, const Judging& how, NodeVerdict* v) const override;
  Status CheckFits(const NodeState& node, const Placement& placement) const override;
};

}  // namespace gpusched::placement
