// File: event_sink.h
//
// Where the extender reports what a user should see on a pod: today, that it fit no node.
// Implementations must not block the caller (filter is on kube-scheduler's critical path).
#pragma once

#include <string>

#include "gpusched/model/pod.h"

namespace gpusched::extender {

class EventSink {
 public:
  virtual ~EventSink() = default;
  // `pod` failed every node filter was asked about; `message` summarizes why.
  virtual void Unschedulable(const Pod& pod, std::string message) = 0;
  // True if an Unschedulable for `pod` now would be posted, not dropped as said recently: the
  // caller works out a costly message (the cheapest fix) only then.
  virtual bool WouldPost(const Pod& pod) const { return true; }
};

}  // namespace gpusched::extender
