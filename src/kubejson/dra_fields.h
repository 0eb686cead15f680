// File: dra_fields.h (private to kubejson)
//
// The field readers the resource.k8s.io decoders share (dra_objects.cc: slices, classes, taint
// rules; dra_claims.cc: claims and allocations). Each names the field path of a value it refuses.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/dra/types.h"
#include "gpusched/json/json.h"

namespace gpusched::kubejson::dra_fields {

// Kubernetes 1.32's version: device fields under "basic", request fields on the request.
inline constexpr std::string_view kV1beta1 = "resource.k8s.io/v1beta1";

// Reads a quantity (a string; a plain integer is accepted too) in milli-units; its text too.
Status ReadQuantity(const rapidjson::Value& v, std::string_view path, int64_t* out, std::string* text = nullptr);
Status DecodeNodeSelector(const rapidjson::Value& obj, std::string_view key, std::string_view path,
                          std::optional<dra::NodeSelector>* out);
Status DecodeTolerations(const rapidjson::Value& obj, std::string_view path, std::vector<dra::DeviceToleration>* out);
// apiVersion: one of the resource.k8s.io versions read (empty: v1).
Status ReadDraVersion(const rapidjson::Value& v, std::string_view path, std::string* version);
// metadata.name (and namespace), and the path that names the object in errors.
Status ReadMeta(const rapidjson::Value& v, std::string_view kind, std::string* name, std::string* ns, std::string* path);
// An exactly request, or a firstAvailable subrequest (`sub`: with its name).
Status DecodeExact(const rapidjson::Value& r, std::string_view path, bool sub, dra::ExactRequest* out);
Status DecodeOpaque(const rapidjson::Value& c, std::string_view path, dra::OpaqueConfig* out);

}  // namespace gpusched::kubejson::dra_fields
