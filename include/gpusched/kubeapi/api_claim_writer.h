// File: api_claim_writer.h
//
// Owner mode against the API server (dra.md §5.4): for a claim to allocate, a merge-PATCH adding
// the finalizer resource.kubernetes.io/delete-protection with the claim's resourceVersion as
// precondition, then a merge-PATCH of the status subresource with status.allocation and the pod
// appended to status.reservedFor, with the resourceVersion the first write returned. A 409 at
// either step is Aborted (someone else changed the claim: plan again); status.devices is never
// written (it belongs to drivers).
//
// A special claim (extended resources served by DRA) is POSTed with its finalizer already on,
// then allocated and reserved as above, then named in the pod's status (a merge patch of
// pods/<name>/status with the pod's UID as precondition), as kube-scheduler's PreBind does. If a
// step after the POST fails, the claim is released (status cleared, finalizer removed) and
// deleted, so that no device stays held by a claim no pod names.
//
// Unreserve writes the status (reservedFor without the pods; to deallocate, allocation and the
// drivers' devices null)
// at the claim's resourceVersion, then the finalizers without delete-protection at the version
// that returned.
#pragma once

#include <chrono>

#include "gpusched/extender/claim_writer.h"
#include "gpusched/kubeapi/api_client.h"

namespace gpusched::kubeapi {

class ApiClaimWriter : public extender::ClaimWriter {
 public:
  // REQUIRES: `client` outlives the writer.
  explicit ApiClaimWriter(ApiClient* client, std::chrono::milliseconds request_timeout = std::chrono::seconds(3))
      : client_(client), request_timeout_(request_timeout) {}
  StatusOr<dra::ResourceClaim> Write(const dra::ResourceClaim& claim, const dra::AllocationResult* result,
                                     const Pod& pod) override;
  Status Unreserve(const dra::ResourceClaim& claim, const std::vector<std::string>& pods, bool deallocate) override;
  StatusOr<dra::ResourceClaim> CreateSpecial(const dra::SpecialClaim& special, const dra::AllocationResult& result,
                                             const Pod& pod) override;

 private:
  static std::string ClaimPath(const dra::ResourceClaim& claim);
  // Undoes CreateSpecial's writes to `claim` and deletes it.
  Status Delete(const dra::ResourceClaim& claim);

  ApiClient* const client_;
  const std::chrono::milliseconds request_timeout_;
};

}  // namespace gpusched::kubeapi
