// File: search.h
//
// The depth-first search of upstream's allocator (dra.md §2.4): claims in pod order, requests in
// claim order, for each request its subrequests in order (firstAvailable), and for each device
// slot the candidates in canonical order, each tried with allocateDevice (not in use, shared
// counters fit, taints tolerated, constraints hold, capacity fits) and undone on backtrack. The
// first complete assignment wins, so the answer is the one kube-scheduler would write.
//
// Not thread-safe: one search per (pod, node) attempt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/dra/allocator.h"
#include "gpusched/dra/allocator/device_checks.h"
#include "gpusched/dra/allocator/pools.h"
#include "gpusched/dra/allocator/requests.h"

namespace gpusched::dra {

struct SearchOutcome {
  enum class Result { kSuccess, kFail, kMaxSize, kError, kBound };
  Result result = Result::kFail;
  int64_t steps = 0;   // allocateOne calls, as upstream counts them
  std::string error;   // kError: why
  // kSuccess: per claim, the device results (empty unless in.want_results) and the candidate of
  // each, in allocation order.
  std::vector<std::vector<DeviceResult>> results;
  std::vector<std::vector<size_t>> chosen;
};

// Runs the search once. kBound: in.max_steps ran out. Sets each claim's chosen_sub.
// REQUIRES: claims come from PrepareClaims with the same input, pools and checks.
SearchOutcome RunSearch(const AllocatorInput& in, const NodePools& pools, const DeviceChecks& checks, std::vector<ClaimData>* claims);

}  // namespace gpusched::dra
