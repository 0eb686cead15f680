// File: allocator.cc
//
// The allocator's entry point: the node's pools gathered (unless given), the claims prepared, the
// search run, and its outcome turned into results, an error, the step bound reached, or a diagnosis
// of why no device set fits.
#include "gpusched/dra/allocator.h"

#include <fmt/format.h>

#include "gpusched/dra/allocator/device_checks.h"
#include "gpusched/dra/allocator/diagnosis.h"
#include "gpusched/dra/allocator/pools.h"
#include "gpusched/dra/allocator/requests.h"
#include "gpusched/dra/allocator/results.h"
#include "gpusched/dra/allocator/search.h"

namespace gpusched::dra {
namespace {

AllocatorOutcome Allocated(const AllocatorInput& in, const std::vector<ClaimData>& claims, SearchOutcome* search,
                           const std::vector<Candidate>& candidates) {
  AllocatorOutcome out{.kind = AllocatorOutcome::Kind::kAllocated};
  for (size_t c = 0; c < claims.size(); ++c) {
    for (size_t i : search->chosen[c]) out.drivers.insert(candidates[i].slice->slice().driver);
    if (!in.want_results) continue;
    std::vector<const Candidate*> devices;
    for (size_t i : search->chosen[c]) devices.push_back(&candidates[i]);
    out.results.push_back(BuildResult(claims[c], std::move(search->results[c]), devices, in.node->name));
  }
  return out;
}

}  // namespace

AllocatorOutcome Allocate(const AllocatorInput& input) {
  NodePoolsPtr gathered;
  const NodePools* pools = input.pools;
  if (pools == nullptr) {
    gathered = GatherNodePools(*input.slices, *input.node, input.features);
    pools = gathered.get();
  }
  DeviceChecks checks(input, *pools);
  StatusOr<std::vector<ClaimData>> claims = PrepareClaims(input, *pools, checks);
  if (!claims.ok()) {
    return AllocatorOutcome{.kind = AllocatorOutcome::Kind::kError, .reason = std::string(claims.status().message()),
                            .invalid_pools = pools->invalid_pools};
  }
  SearchOutcome search = RunSearch(input, *pools, checks, &*claims);
  AllocatorOutcome out;
  switch (search.result) {
    case SearchOutcome::Result::kSuccess:
      out = Allocated(input, *claims, &search, pools->candidates);
      break;
    case SearchOutcome::Result::kError:
      out = AllocatorOutcome{.kind = AllocatorOutcome::Kind::kError, .reason = std::move(search.error)};
      break;
    case SearchOutcome::Result::kBound:
      out.reason = fmt::format("gave up after {} allocation steps (the search bound); no device set found yet", search.steps);
      break;
    default:
      out.reason = input.want_reason ? Diagnose(*claims, checks, input.features) : "no device set fits";
      if (pools->invalid_pools) out.reason += "; invalid resource pools were encountered";
      break;
  }
  out.steps = search.steps;
  out.invalid_pools = pools->invalid_pools;
  return out;
}

}  // namespace gpusched::dra
