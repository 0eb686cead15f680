// File: dra_allocation_json.h
//
// DRA allocations written as the API server stores them: a ResourceClaimStatus.allocation
// object (what kube-scheduler's PreBind patches into a claim). The inverse of dra_objects.h's
// decoding of an allocation.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpusched/common/status.h"
#include "gpusched/dra/types.h"

namespace gpusched::kubejson {

// Appends `r` as a ResourceClaimStatus.allocation object (results, config, nodeSelector).
void AppendAllocationResult(std::string* out, const dra::AllocationResult& r);
void AppendNodeSelector(std::string* out, const dra::NodeSelector& s);

// Formats a milli-unit quantity as Kubernetes would print it ("2", "500m", "81559Mi" stays
// as the exact decimal "85520809984").
std::string FormatMilli(int64_t milli);

}  // namespace gpusched::kubejson
