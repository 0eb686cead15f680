// File: diagnosis.h
//
// Why the search found no device set, in words an operator can act on: the first request that
// lacks devices on its own, counted as the allocator sees them ("1 of 2 devices available (8 of
// 8 devices match class gpu.nvidia.com and 1 selector, 1 of those free)"), or, when every
// request has enough alone, the rules that no combination satisfies (constraints, shared
// counters, distinct devices across requests).
#pragma once

#include <string>
#include <vector>

#include "gpusched/dra/allocator/device_checks.h"
#include "gpusched/dra/allocator/requests.h"
#include "gpusched/dra/features.h"

namespace gpusched::dra {

std::string Diagnose(const std::vector<ClaimData>& claims, const DeviceChecks& checks, const Features& features);

}  // namespace gpusched::dra
