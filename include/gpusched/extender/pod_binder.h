// File: pod_binder.h
//
// What makes a placement real once the inventory booked it. Without a binder (snapshot or demo
// mode), bind books in memory only; with the live binder (kubeapi/api_binder.h) it writes to the API
// server.
#pragma once

#include "gpusched/common/status.h"
#include "gpusched/model/allocation.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"

namespace gpusched::extender {

struct BindTarget {
  const Pod& pod;
  const Node& node;                  // the node object the booking was checked against
  const Allocation& allocation;      // what was booked (placement kind kNone: nothing)
  const AnnotationMap& annotations;  // the result annotations to record on the pod
};

class PodBinder {
 public:
  virtual ~PodBinder() = default;
  // Binds target.pod to target.node. On an error other than DeadlineExceeded nothing remains
  // booked in the cluster on the pod's behalf, and the caller releases the inventory's booking.
  // Errors: Aborted when the node changed since it was checked (plan again on fresh state);
  // DeadlineExceeded when the outcome is unknown (the pod may be bound): the caller keeps its
  // booking until the cluster shows the pod or the booking expires; anything else is final.
  virtual Status Bind(const BindTarget& target) = 0;
};

}  // namespace gpusched::extender
