// File: node_agent_api.h
//
// The node agent's calls to the API server, all about its own Node:
//   - the annotation gpusched.io/gpu-devices: it reads the Node and merge-PATCHes the annotation
//     only when its value differs, so an agent that polls every few seconds writes only when a
//     GPU changed (a new card, a GPU turned unhealthy); the ValidatingAdmissionPolicy in
//     deploy/agent/ limits the agent to this annotation of the node its token is bound to;
//   - the pods bound to the Node (a field selector), for the drift check (agent/drift.h), and
//     when some of them use ResourceClaims, those claims (GET each, resource.k8s.io/v1) and the
//     Node's ResourceSlices (a field selector): the GPUs the claims hold;
//   - Warning Events on the Node (reason GPUAccountingDrift).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/kubejson/dra_objects.h"  // dra::ResourceClaim, dra::ResourceSlice
#include "gpusched/kubeapi/api_client.h"
#include "gpusched/model/pod.h"

namespace gpusched::kubeapi {

// Sets the annotation of node `node` to `value` if it is not that already. Returns true if it
// wrote. Errors: NotFound (no such node), Unavailable (the API server's answer, named).
StatusOr<bool> PublishGpuDevices(ApiClient* client, const std::string& node, const std::string& value,
                                 std::chrono::milliseconds timeout = std::chrono::milliseconds(3000));

// The pods bound to `node` that have not finished (phase neither Succeeded nor Failed). A pod
// that cannot be read is skipped. Errors: Unavailable (the API server's answer, named).
StatusOr<std::vector<Pod>> PodsOnNode(ApiClient* client, const std::string& node,
                                      std::chrono::milliseconds timeout = std::chrono::milliseconds(3000));

// The ResourceClaims that `pods` use, at resource.k8s.io/v1: each pod's spec.resourceClaims by
// name, or by the name status.resourceClaimStatuses gives a template's claim (none while it has
// none), and its special claim of extended resources. A claim that does not exist (404: deleted,
// or not created yet) holds nothing and is skipped. Errors: Unavailable (the API server's answer,
// named with the claim).
StatusOr<std::vector<dra::ResourceClaim>> ClaimsOfPods(ApiClient* client, const std::vector<Pod>& pods,
                                                       std::chrono::milliseconds timeout = std::chrono::milliseconds(3000));

// The ResourceSlices of `node` (spec.nodeName), at resource.k8s.io/v1; a slice that cannot be
// read is skipped. Errors: Unavailable (the API server's answer, named).
StatusOr<std::vector<dra::ResourceSlice>> SlicesOnNode(ApiClient* client, const std::string& node,
                                                       std::chrono::milliseconds timeout = std::chrono::milliseconds(3000));

// Posts a Warning Event with `reason` and `message` about Node `node`, from component
// gpusched-agent. Errors: Unavailable (the API server's answer, named).
Status PostNodeEvent(ApiClient* client, const std::string& node, const std::string& reason, const std::string& message,
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(3000));

}  // namespace gpusched::kubeapi
