// File: gpu_publisher.h
//
// The node agent's write: the annotation gpusched.io/gpu-devices on its own Node. It reads the
// Node and merge-PATCHes the annotation only when its value differs, so an agent that polls every
// few seconds writes only when a GPU changed (a new card, a GPU turned unhealthy). The
// ValidatingAdmissionPolicy in deploy/agent/ limits the agent to this annotation of the node its
// token is bound to.
#pragma once

#include <chrono>
#include <string>

#include "gpusched/common/status.h"
#include "gpusched/kubeapi/api_client.h"

namespace gpusched::kubeapi {

// Sets the annotation of node `node` to `value` if it is not that already. Returns true if it
// wrote. Errors: NotFound (no such node), Unavailable (the API server's answer, named).
StatusOr<bool> PublishGpuDevices(ApiClient* client, const std::string& node, const std::string& value,
                                 std::chrono::milliseconds timeout = std::chrono::milliseconds(3000));

}  // namespace gpusched::kubeapi
