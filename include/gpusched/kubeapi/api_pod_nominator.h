// File: api_pod_nominator.h
//
// The live PodNominator (extender/pod_nominator.h): a merge PATCH of the pod's status
// subresource, {"metadata":{"uid"},"status":{"nominatedNodeName"}} (null to clear), the UID as
// precondition: for a pod replaced under the same name the patch would change metadata.uid,
// which validation refuses (422).
//
// Thread-safe.
#pragma once

#include <chrono>
#include <string>

#include "gpusched/extender/pod_nominator.h"
#include "gpusched/kubeapi/api_client.h"

namespace gpusched::kubeapi {

class ApiPodNominator : public extender::PodNominator {
 public:
  // REQUIRES: `client` outlives the nominator.
  explicit ApiPodNominator(ApiClient* client, std::chrono::milliseconds request_timeout = std::chrono::milliseconds(3000))
      : client_(client), request_timeout_(request_timeout) {}

  Status Nominate(const Pod& pod, const std::string& node) override;

 private:
  ApiClient* const client_;
  const std::chrono::milliseconds request_timeout_;
};

}  // namespace gpusched::kubeapi
