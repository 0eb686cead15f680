// File: pod_constraints.cc
//
// Whether a pod has relations gpusched does not judge: required pod affinity or anti-affinity, or a
// topology spread constraint other than ScheduleAnyway.
#include "gpusched/model/pod_constraints.h"

#include <algorithm>

namespace gpusched {

bool PodConstraints::HasPodRelations() const {
  return !affinity.empty() || !anti_affinity.empty() ||
         std::any_of(spread.begin(), spread.end(), [](const SpreadConstraint& c) { return c.Filters(); });
}

}  // namespace gpusched
