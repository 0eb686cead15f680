// File: claim_writer.h
//
// Owner mode of DRA (dra.md §5.3 C): gpusched, not kube-scheduler, writes the allocation of a
// pod's claims at bind, as kube-scheduler's PreBind would: the finalizer
// resource.kubernetes.io/delete-protection, status.allocation, and the pod in
// status.reservedFor, each with the claim's resourceVersion as precondition.
#pragma once

#include "gpusched/common/status.h"
#include "gpusched/dra/types.h"
#include "gpusched/model/pod.h"

namespace gpusched::extender {

class ClaimWriter {
 public:
  virtual ~ClaimWriter() = default;
  // Allocates `claim` with `*result` and reserves it for `pod`; with result == nullptr (a claim
  // allocated before, e.g. shared), only adds `pod` to reservedFor.
  // Errors: Aborted when the claim changed since it was read (someone else allocated or reserved
  // it: plan again on fresh state); anything else is final.
  virtual Status Write(const dra::ResourceClaim& claim, const dra::AllocationResult* result, const Pod& pod) = 0;
};

}  // namespace gpusched::extender
