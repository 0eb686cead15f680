// File: policy.h
//
// Placement policies and the options that carry them. Node level decides which node a pod goes
// to; GPU level decides which GPUs inside the chosen node. Both default to binpack, which keeps
// whole idle GPUs and whole idle nodes free for larger pods.
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
  Policy node_policy = Policy::kBinpack;  // Default: binpack.
  Policy gpu_policy = Policy::kBinpack;   // Default: binpack.
  // Upper bound on GPU choices tried while fitting a multi-container pod onto one node; hitting it
  // is reported as a reason on that node. Default: 4096.
  int search_budget = 4096;
};

}  // namespace gpusched::placement
