// File: results.h
//
// A claim's AllocationResult once the search has chosen its devices: the device results, the
// configs (each class's once, listing the requests that use it, then the claim's own for the
// requests they name), and the nodeSelector (pinned to the node when any device is node-local,
// else the union of the slices' and devices' single-term selectors, else none).
#pragma once

#include <string_view>
#include <vector>

#include "gpusched/dra/allocator/pools.h"
#include "gpusched/dra/allocator/requests.h"
#include "gpusched/dra/types.h"

namespace gpusched::dra {

// REQUIRES: devices[k] is the candidate of results[k]; claim.chosen_sub is set.
AllocationResult BuildResult(const ClaimData& claim, std::vector<DeviceResult> results, const std::vector<const Candidate*>& devices,
                             std::string_view node);

}  // namespace gpusched::dra
