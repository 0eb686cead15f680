// File: dra_objects.h
//
// resource.k8s.io/v1 JSON into the DRA model (dra/types.h) and allocation results back into
// JSON. Quantities are parsed here, once. Errors name the field path and the value, e.g.
// `ResourceSlice gpu-node-07-slice.spec.devices[3].capacity["memory"].value: "12 apples" ...`.
#pragma once

#include <string>
#include <string_view>

#include "gpusched/common/status.h"
#include "gpusched/dra/cluster_state.h"
#include "gpusched/dra/types.h"
#include "gpusched/model/cluster_objects.h"
#include "gpusched/json/json.h"

namespace gpusched::k8s {

StatusOr<dra::ResourceSlice> DecodeResourceSlice(const rapidjson::Value& v);
StatusOr<dra::DeviceClass> DecodeDeviceClass(const rapidjson::Value& v);
StatusOr<dra::ResourceClaim> DecodeResourceClaim(const rapidjson::Value& v);
StatusOr<dra::AllocationResult> DecodeAllocationResult(const rapidjson::Value& v, std::string_view path);

// The same, from compact JSON text (as the inventory keeps the objects).
StatusOr<dra::ResourceSlice> ParseResourceSlice(std::string_view text);
StatusOr<dra::DeviceClass> ParseDeviceClass(std::string_view text);
StatusOr<dra::ResourceClaim> ParseResourceClaim(std::string_view text);

// Decodes the DRA objects of `objects` into the allocator's state (InventoryOptions::dra_decoder).
// Objects that fail to decode are left out and listed in the state's errors().
dra::ClusterStatePtr DecodeDraObjects(const ClusterObjects& objects);

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
