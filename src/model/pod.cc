// File: pod.cc
//
// A pod's effective requests as kube-scheduler counts them (app containers and sidecars summed,
// raised to the peak of any init phase, pod-level cpu and memory, overhead), the labels preemption
// weighs, and which annotations gpusched keeps.
#include "gpusched/model/pod.h"

namespace gpusched {

ResourceList EffectiveRequests(const Pod& pod) {
  ResourceList total;
  for (const Container& c : pod.containers) total.Add(c.other_requests);
  ResourceList sidecars;    // the sidecars started so far
  ResourceList init_peak;   // the most any init phase needs
  for (const Container& c : pod.init_containers) {
    if (c.sidecar) {
      total.Add(c.other_requests);
      sidecars.Add(c.other_requests);
      init_peak.RaiseTo(sidecars);
    } else {
      ResourceList phase = sidecars;
      phase.Add(c.other_requests);
      init_peak.RaiseTo(phase);
    }
  }
  total.RaiseTo(init_peak);
  for (std::string_view name : {"cpu", "memory"}) {
    int64_t pod_level = pod.pod_requests.Get(name);
    if (pod_level > 0) total.Add(name, pod_level - total.Get(name));
  }
  total.Add(pod.overhead);
  return total;
}

PodLabels LabelsOf(const Pod& pod) {
  return PodLabels{.namespace_name = pod.namespace_name, .labels = pod.labels, .controller_uid = pod.controller_uid,
                   .controller_kind = pod.controller_kind, .constraints = pod.constraints, .group = pod.group};
}

bool IsTrackedAnnotation(std::string_view key) {
  return key.starts_with("vke.volcengine.com/") || key.starts_with("gpusched.io/");
}

}  // namespace gpusched
