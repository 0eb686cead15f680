// File: mgpu.h
//
// The mGPU kind (nodes labelled mgpu): containers share GPUs under VKE's contract
// (vke.volcengine.com/mgpu-core percent and mgpu-memory MiB, whole cards, container-multiple-gpu,
// a compute policy that node and pod share), and gpusched picks each container's GPUs and writes
// them in vke.volcengine.com/gpu-index-container-<name>.
//
// The one-slice parts below let victim choice (victims.h) follow one node through many states
// and recheck only what each change touches.
#pragma once

#include <memory>
#include <string_view>

#include "gpusched/placement/kind.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::placement {

std::unique_ptr<Kind> MakeMgpuKind();

// Returns true if `policy` is one of the three mGPU compute policies.
bool IsComputePolicy(std::string_view policy);

// A one-slice mGPU request (IsOneSlice: one container on one shared GPU, the common mGPU pod)
// fits a ready mGPU node exactly when PolicyMatches, TotalsFit, and some GPU passes
// GpuTakesSlice.
bool IsOneSlice(const PodRequest& request);
// The node's mGPU compute policy is the pod's, or the pod takes any. REQUIRES: mGPU request.
bool PolicyMatches(const PodRequest& request, const NodeState& node);
// The node's free mGPU totals cover the pod's. REQUIRES: mGPU request.
bool TotalsFit(const PodRequest& request, const NodeState& node);
// GPU `gpu` takes the slice. REQUIRES: IsOneSlice(request).
bool GpuTakesSlice(const PodRequest& request, const GpuSlot& gpu);

}  // namespace gpusched::placement
