// File: policy.h
//
// GPU-level placement policy and the planner's options. Which node a pod goes to is a scoring
// policy (scoring/scorer.h); which GPUs inside that node it gets is decided here: binpack (default)
// keeps whole idle GPUs free for larger pods, spread evens the load.
#pragma once

#include <optional>
#include <string_view>

namespace gpusched::placement {

enum class Policy {
  kBinpack,  // prefer the most used node / GPU that still fits
  kSpread,   // prefer the least used
};

// Returns the policy named `name` ("binpack" or "spread"), or nullopt.
std::optional<Policy> ParsePolicy(std::string_view name);
std::string_view PolicyName(Policy policy);

struct PlacementOptions {
  Policy gpu_policy = Policy::kBinpack;  // Default: binpack.
  // Upper bound on GPU choices tried while fitting a multi-container pod onto one node; hitting it
  // is reported as a reason on that node. Default: 4096.
  int search_budget = 4096;
};

}  // namespace gpusched::placement
