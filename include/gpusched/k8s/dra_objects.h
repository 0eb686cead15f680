// File: dra_objects.h
//
// resource.k8s.io JSON (v1, v1beta2, v1beta1) into the DRA model (dra/types.h); the way back is
// dra_allocation_json.h. Quantities are parsed here, once. Errors name the field path and the value, e.g.
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

}  // namespace gpusched::k8s
