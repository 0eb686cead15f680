#include "gpusched/model/pod_constraints.h"

#include <algorithm>

namespace gpusched {

bool PodConstraints::HasPodRelations() const {
  return !affinity.empty() || !anti_affinity.empty() ||
         std::any_of(spread.begin(), spread.end(), [](const SpreadConstraint& c) { return c.Filters(); });
}

}  // namespace gpusched
