// File: dra_objects.h
//
// resource.k8s.io JSON (v1, v1beta2, v1beta1) into the DRA model (dra/types.h); the way back is
// dra_allocation_json.h. Quantities are parsed here, once. Errors name the field path and the value, e.g.
// `ResourceSlice gpu-node-07-slice.spec.devices[3].capacity["memory"].value: "12 apples" ...`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpusched/common/status.h"
#include "gpusched/dra/object_set.h"
#include "gpusched/dra/types.h"
#include "gpusched/json/json.h"

namespace gpusched::kubejson {

StatusOr<dra::ResourceSlice> DecodeResourceSlice(const rapidjson::Value& v);
StatusOr<dra::DeviceClass> DecodeDeviceClass(const rapidjson::Value& v);
StatusOr<dra::ResourceClaim> DecodeResourceClaim(const rapidjson::Value& v);
// A DeviceTaintRule (resource.k8s.io/v1, v1beta2 or v1alpha3; selecting by driver, pool and device).
StatusOr<dra::DeviceTaintRule> DecodeDeviceTaintRule(const rapidjson::Value& v);
// A Namespace: its name and whether it allows adminAccess (label resource.kubernetes.io/admin-access=true).
StatusOr<dra::NamespaceAccess> DecodeNamespaceAccess(const rapidjson::Value& v);
StatusOr<dra::AllocationResult> DecodeAllocationResult(const rapidjson::Value& v, std::string_view path);
// A ResourceClaimTemplate as the claim it makes: its spec.spec read as a ResourceClaim's spec,
// under the template's namespace and name (resource.k8s.io v1, v1beta2, v1beta1).
StatusOr<dra::ResourceClaim> DecodeClaimTemplate(const rapidjson::Value& v);

// The same, from JSON text.
StatusOr<dra::ResourceSlice> ParseResourceSlice(std::string_view text);
StatusOr<dra::DeviceClass> ParseDeviceClass(std::string_view text);
StatusOr<dra::ResourceClaim> ParseResourceClaim(std::string_view text);

// The DRA kind named `kind` ("ResourceSlice", ...), or nullopt.
std::optional<dra::ObjectKind> DraKind(std::string_view kind);

// Decodes one object of `kind` with its key and resourceVersion; one that does not decode comes
// back unreadable, with the error. An object without metadata.name has an empty key.
dra::DraObject DecodeDraObject(const rapidjson::Value& v, dra::ObjectKind kind);

// The key a DRA object of a watch is known by (namespace/name, or name), "" without a name.
std::string DraObjectKey(const rapidjson::Value& v);

}  // namespace gpusched::kubejson
