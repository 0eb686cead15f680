// File: api_evictor.h
//
// The live eviction: POST pods/<name>/eviction (policy/v1 Eviction) with the pod's UID as
// precondition. The API server checks the PodDisruptionBudgets that cover the pod and answers 429
// when one allows no disruption now; otherwise it deletes the pod gracefully.
//
// Thread-safe.
#pragma once

#include <chrono>

#include "gpusched/extender/pod_evictor.h"
#include "gpusched/kubeapi/api_client.h"

namespace gpusched::kubeapi {

class ApiEvictor : public extender::PodEvictor {
 public:
  // REQUIRES: `client` outlives the evictor.
  explicit ApiEvictor(ApiClient* client, std::chrono::milliseconds timeout = std::chrono::milliseconds(3000))
      : client_(client), timeout_(timeout) {}

  Status Evict(const std::string& ns, const std::string& name, const std::string& uid, bool dry_run) override;

 private:
  ApiClient* const client_;
  const std::chrono::milliseconds timeout_;
};

}  // namespace gpusched::kubeapi
