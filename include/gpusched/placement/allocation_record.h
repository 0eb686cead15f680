// File: allocation_record.h
//
// The two directions between an allocation and a pod: the result annotations gpusched writes at
// bind (vke.volcengine.com/gpu-index-container-<name>, vke.volcengine.com/assumed), and the
// allocation a bound pod holds, read back from its requests and those annotations at start-up.
// Together they make a restart lose nothing.
//
// Pure.
#pragma once

#include "gpusched/model/allocation.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::placement {

// Returns the annotations that record `placement` on the pod; empty unless it is an mGPU placement.
AnnotationMap ResultAnnotations(const Placement& placement);

// Returns the allocation that the bound, non-terminal `pod` holds on its node, given its analyzed
// `request`. An mGPU container whose index annotation is missing, malformed or names a different
// number of GPUs than the container's cards keeps its compute and memory but no GPU index (it is
// then counted against the node, not a GPU). A pod whose request breaks the contract (bound by
// someone else) gets Allocation::problem.
// REQUIRES: pod.bound() and request.asks_gpu().
Allocation RecordedAllocation(const Pod& pod, const PodRequest& request);

// Returns the GPU indices in an index annotation value ("1,0"), or an empty vector if malformed.
std::vector<int> ParseGpuIndexList(std::string_view text);

}  // namespace gpusched::placement
