// File: dra_allocation_json.h
//
// DRA allocations written as the API server stores them: a ResourceClaimStatus.allocation
// object, and a whole claim with its allocation, finalizer and reservation (what
// kube-scheduler's PreBind writes). The inverse of dra_objects.h's decoding.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpusched/common/status.h"
#include "gpusched/dra/types.h"

namespace gpusched::k8s {

// Returns `claim_json` with the finalizer resource.kubernetes.io/delete-protection, `result` (if
// not null) as status.allocation, and `consumer` appended to status.reservedFor: what
// kube-scheduler's PreBind writes, for owner mode in snapshot mode.
StatusOr<std::string> ClaimWithAllocation(std::string_view claim_json, const dra::AllocationResult* result,
                                          const dra::ConsumerRef& consumer);

// Appends `r` as a ResourceClaimStatus.allocation object (results, config, nodeSelector).
void AppendAllocationResult(std::string* out, const dra::AllocationResult& r);
void AppendNodeSelector(std::string* out, const dra::NodeSelector& s);

// Formats a milli-unit quantity as Kubernetes would print it ("2", "500m", "81559Mi" stays
// as the exact decimal "85520809984").
std::string FormatMilli(int64_t milli);

}  // namespace gpusched::k8s
