// File: kueue.cc
//
// kueue.h: check state names, a pod set's admitted count, a check looked up by name.
#include "gpusched/model/kueue.h"

namespace gpusched::kueue {

std::string_view CheckStateName(CheckState state) {
  switch (state) {
    case CheckState::kPending: return "Pending";
    case CheckState::kReady: return "Ready";
    case CheckState::kRetry: return "Retry";
    case CheckState::kRejected: return "Rejected";
  }
  return "Pending";
}

int32_t Workload::AdmittedCount(size_t i) const {
  const PodSet& set = pod_sets[i];
  for (const PodSetAssignment& a : assignments) {
    if (a.name == set.name && a.count) return *a.count;
  }
  return set.count;
}

const CheckStatus* Workload::FindCheck(std::string_view name) const {
  for (const CheckStatus& c : checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace gpusched::kueue
