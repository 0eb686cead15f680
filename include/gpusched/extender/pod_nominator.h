// File: pod_nominator.h
//
// Suggesting a pending pod's node to kube-scheduler (KEP-5278, GA in 1.37: components other than
// kube-scheduler may set status.nominatedNodeName). kube-scheduler then tries that node first,
// alone, and counts the pod's requests there against pods of equal or lower priority while it is
// pending; it clears the field after a failed attempt. Gangs use it for each member's slot
// (gang_holds.h, `gang.nominate`). The live one is kubeapi/api_pod_nominator.h.
#pragma once

#include <string>

#include "gpusched/common/status.h"
#include "gpusched/model/pod.h"

namespace gpusched::extender {

class PodNominator {
 public:
  virtual ~PodNominator() = default;
  // Sets `pod`'s status.nominatedNodeName to `node` ("" clears it), provided the pod still has
  // `pod.uid`.
  // Errors: Aborted when the pod is gone or replaced (its UID differs); FailedPrecondition when
  // the API server refuses it (no RBAC for pods/status, a version without KEP-5278's
  // validation); Unavailable when the outcome is unknown.
  virtual Status Nominate(const Pod& pod, const std::string& node) = 0;
};

}  // namespace gpusched::extender
