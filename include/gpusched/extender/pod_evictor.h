// File: pod_evictor.h
//
// What evicts a pod for a defrag move (defrag.h). Without an evictor (snapshot or demo mode) a plan
// cannot be applied; the live one (kubeapi/api_evictor.h) goes through the Eviction API, where the
// API server honours PodDisruptionBudgets.
#pragma once

#include <string>

#include "gpusched/common/status.h"

namespace gpusched::extender {

class PodEvictor {
 public:
  virtual ~PodEvictor() = default;
  // Evicts pod `ns`/`name`, if its UID is still `uid`; with `dry_run`, the API server checks
  // everything (the UID, the PodDisruptionBudgets) and changes nothing. Errors: ResourceExhausted
  // when a PodDisruptionBudget forbids it now (429); NotFound when the pod is gone;
  // FailedPrecondition when the name holds another pod (409) or the API server refuses it for
  // good (another 4xx, or a 500 naming the pod's budgets: more than one covers it); Unavailable
  // for anything else (the outcome may be unknown).
  virtual Status Evict(const std::string& ns, const std::string& name, const std::string& uid, bool dry_run) = 0;
};

}  // namespace gpusched::extender
