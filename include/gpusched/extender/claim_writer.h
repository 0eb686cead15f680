// File: claim_writer.h
//
// Owner mode of DRA (dra.md §5.3 C): gpusched, not kube-scheduler, writes the allocation of a
// pod's claims at bind, as kube-scheduler's PreBind would: the finalizer
// resource.kubernetes.io/delete-protection, status.allocation, and the pod in
// status.reservedFor, each with the claim's resourceVersion as precondition. For extended
// resources served by DRA (KEP 5004) it also creates the pod's special claim and records it in the
// pod's status.extendedResourceClaimStatus.
#pragma once

#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/dra/extended_resources.h"
#include "gpusched/dra/types.h"
#include "gpusched/model/pod.h"

namespace gpusched::extender {

class ClaimWriter {
 public:
  virtual ~ClaimWriter() = default;
  // Allocates `claim` with `*result` and reserves it for `pod`; with result == nullptr (a claim
  // allocated before, e.g. shared), only adds `pod` to reservedFor. Returns the claim as written
  // (its new resourceVersion).
  // Errors: Aborted when the claim changed since it was read (someone else allocated or reserved
  // it: plan again on fresh state); anything else is final.
  virtual StatusOr<dra::ResourceClaim> Write(const dra::ResourceClaim& claim, const dra::AllocationResult* result,
                                             const Pod& pod) = 0;
  // Creates `special` (its name is the generateName to complete) owned by `pod`, with the
  // finalizer and the annotation resource.kubernetes.io/extended-resource-claim: "true",
  // allocated with `result` and reserved for `pod`, then sets the pod's
  // status.extendedResourceClaimStatus (claim name and request mappings). Returns the claim as
  // created (its name and uid). All or nothing: on an error after the claim was created, the
  // claim is released and deleted again (best effort; the error says if that failed too).
  // Removes `pods` (UIDs) from `claim`'s status.reservedFor and, with `deallocate`, also clears
  // status.allocation and removes the finalizer, as kube-scheduler's Unreserve does for a claim it
  // allocated in the failed attempt. Errors: Aborted when the claim changed since it was read.
  virtual Status Unreserve(const dra::ResourceClaim& claim, const std::vector<std::string>& pods, bool deallocate) = 0;
  virtual StatusOr<dra::ResourceClaim> CreateSpecial(const dra::SpecialClaim& special, const dra::AllocationResult& result,
                                                     const Pod& pod) = 0;
};

}  // namespace gpusched::extender
