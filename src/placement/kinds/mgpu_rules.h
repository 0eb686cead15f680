// File: mgpu_rules.h (private to the mGPU kind)
//
// VKE's mGPU contract as a pod meets it (mgpu_rules.cc).
#pragma once

#include <string_view>

#include "gpusched/model/allocation.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::placement {

// Fills the mGPU request: the compute policy, the container-multiple-gpu entries and each
// container's rules; sets out->kind to kNone if no container asks for a share after all.
void AnalyzeMgpuPod(const Pod& pod, PodRequest* out, Violations* v, Violations* unplaceable);
// Returns the request mGPU placement `a` answers: one container request per assignment (same
// cards, shares and phase) under `compute_policy`.
PodRequest MgpuRequestHeldBy(const Allocation& a, std::string_view compute_policy);

}  // namespace gpusched::placement
