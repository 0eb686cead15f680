// File: policy.cc
//
// The GPU-level placement policy's names, "binpack" and "spread", both ways.
#include "gpusched/placement/policy.h"

namespace gpusched::placement {

std::optional<Policy> ParsePolicy(std::string_view name) {
  if (name == "binpack") return Policy::kBinpack;
  if (name == "spread") return Policy::kSpread;
  return std::nullopt;
}

std::string_view PolicyName(Policy policy) {
  return policy == Policy::kBinpack ? "binpack" : "spread";
}

}  // namespace gpusched::placement
