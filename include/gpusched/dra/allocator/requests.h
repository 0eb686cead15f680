// File: requests.h
//
// A pod's unallocated claims checked and expanded before the search (dra.md §2.3): each request
// (or each firstAvailable subrequest) with its class, its compiled selectors (a selector that does
// not compile is kept as an error the search reports when it first tests a device, as upstream),
// its count, and for allocationMode All the candidate devices it takes. Errors that stop the
// pod's allocation on every node (unknown class, disabled feature, bad count, over the 32-device
// claim limit, an All request over an incomplete or invalid pool) come back as a Status naming
// the claim and the request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/dra/allocator.h"
#include "gpusched/dra/allocator/pools.h"

namespace gpusched::dra {

// The most devices one claim may be allocated (resource.k8s.io's AllocationResultsMaxSize).
inline constexpr int64_t kMaxResults = 32;

// A compiled selector, or why it did not compile.
struct CompiledSelector {
  const cel::Program* program = nullptr;  // null: see error
  std::string error;
};

struct RequestData {
  std::string name;  // "req" or "req/sub"
  const DeviceRequest* parent = nullptr;
  const ExactRequest* req = nullptr;
  bool is_sub = false;
  const DeviceClass* device_class = nullptr;
  std::vector<CompiledSelector> class_selectors;    // the class's, in order
  std::vector<CompiledSelector> request_selectors;  // the request's, in order
  bool all_mode = false;
  int64_t num_devices = 0;
  std::vector<size_t> all_devices;  // candidate indices, All mode
  bool admin = false;
};

struct ClaimData {
  const ResourceClaim* claim = nullptr;
  std::vector<std::vector<RequestData>> requests;  // [request][subrequest]; exactly: one entry
  std::vector<size_t> chosen_sub;                  // per request, once allocated
};

class DeviceChecks;

// Checks and expands in.claims for the node whose pools `checks` judges.
StatusOr<std::vector<ClaimData>> PrepareClaims(const AllocatorInput& in, const NodePools& pools, const DeviceChecks& checks);

}  // namespace gpusched::dra
