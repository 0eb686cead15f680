// File: placement_fields.h (private to kubejson)
//
// The placement fields gpusched's node annotations share (node_bookings.cc, node_holds.cc): a
// mode and what the pod holds under it,
//
//   "mode": "nvidia",     "gpus": 2
//   "mode": "mgpu",       "containers": [{"name": "main", "gpus": [0, 1], "milli": 500, "mib": 8192}]
//   "mode": "nvidia-dra", "devices": ["gpu.nvidia.com/node-a/gpu-0"]
//
// (a container may add "exclusive": true, "init": k and "sidecar": true).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/json/json.h"
#include "gpusched/model/allocation.h"

namespace gpusched::kubejson::placement_fields {

// Reads the integer `key` of `obj` (0 when absent) into *out, refusing values outside 0-`max`.
Status ReadBounded(const rapidjson::Value& obj, std::string_view key, std::string_view path, int64_t max, int64_t* out);

// Reads "pod": "namespace/name" into a->pod_namespace and a->pod_name.
Status ReadPod(const rapidjson::Value& obj, const std::string& path, Allocation* a);
// Appends "pod":"namespace/name" (the inverse of ReadPod).
void AppendPod(std::string* out, const Allocation& a);

// Reads the mode and placement fields of `obj` into a->mode and a->placement. Devices (mode
// nvidia-dra) are accepted only with `devices_allowed`. Errors name `path` and the field.
Status DecodePlacement(const rapidjson::Value& obj, const std::string& path, bool devices_allowed, Allocation* a);

// Appends `,"mode":...` and the placement fields of `a` (the inverse of DecodePlacement).
void AppendPlacement(std::string* out, const Allocation& a);

// Parses `text`, a JSON object keyed by pod UID (the annotation `what`: "bookings", "holds"),
// decoding each entry with `decode(value, uid)` (StatusOr<T>); sorted by `uid_of`, refusing a UID
// twice.
template <typename T, typename Decode, typename UidOf>
StatusOr<std::vector<T>> ParseByUid(std::string_view text, std::string_view what, Decode decode, UidOf uid_of) {
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(text, &doc));
  if (!doc.IsObject()) return json::WrongType(what, "object", doc);
  std::vector<T> out;
  for (const auto& member : std::as_const(doc).GetObject()) {
    std::string_view uid = json::View(member.name);
    if (uid.empty()) return InvalidArgumentError(fmt::format("{}: empty pod UID", what));
    GPUSCHED_ASSIGN_OR_RETURN(T entry, decode(member.value, uid));
    out.push_back(std::move(entry));
  }
  std::sort(out.begin(), out.end(), [&](const T& x, const T& y) { return uid_of(x) < uid_of(y); });
  auto dup = std::adjacent_find(out.begin(), out.end(), [&](const T& x, const T& y) { return uid_of(x) == uid_of(y); });
  if (dup != out.end()) return InvalidArgumentError(fmt::format("{}: pod UID \"{}\" twice", what, uid_of(*dup)));
  return out;
}

}  // namespace gpusched::kubejson::placement_fields
