// File: node_holds.cc
//
// gpusched.io/holds both ways: each hold's holder, pod, time, duration and present pods, its
// placement through placement_fields.h (devices allowed), keys written in sorted order.
#include "gpusched/kubejson/node_holds.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <utility>

#include "gpusched/json/json.h"
#include "placement_fields.h"

namespace gpusched::kubejson {
namespace {

using rapidjson::Value;

constexpr int64_t kMaxHoldMs = (int64_t{1} << 40) * 1000;
constexpr int64_t kMaxSeconds = int64_t{1} << 32;

Status ReadPresent(const Value& h, const std::string& path, std::vector<std::string>* out) {
  const Value* present = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(h, "present", path, &present));
  if (present == nullptr) return OkStatus();
  for (rapidjson::SizeType i = 0; i < present->Size(); ++i) {
    const Value& uid = (*present)[i];
    if (!uid.IsString() || uid.GetStringLength() == 0) {
      return InvalidArgumentError(fmt::format("{}.present[{}]: want a pod UID", path, i));
    }
    out->emplace_back(json::View(uid));
  }
  std::sort(out->begin(), out->end());
  return OkStatus();
}

StatusOr<NodeHold> DecodeHold(const Value& h, std::string_view uid, std::string_view node_name) {
  std::string path = fmt::format("holds[\"{}\"]", uid);
  if (!h.IsObject()) return json::WrongType(path, "object", h);
  NodeHold out{.about_uid = std::string(uid)};
  Allocation& a = out.hold;
  a.node_name = std::string(node_name);
  a.origin = AllocationOrigin::kHeld;
  a.priority = INT32_MAX;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(h, "for", path, &a.pod_uid));
  if (a.pod_uid.empty()) return InvalidArgumentError(path + ".for: missing");
  GPUSCHED_RETURN_IF_ERROR(placement_fields::ReadPod(h, path, &a));
  GPUSCHED_RETURN_IF_ERROR(placement_fields::ReadBounded(h, "at", path, kMaxHoldMs, &out.at_ms));
  GPUSCHED_RETURN_IF_ERROR(placement_fields::ReadBounded(h, "seconds", path, kMaxSeconds, &out.ttl_s));
  if (out.ttl_s == 0) return InvalidArgumentError(path + ".seconds: missing");
  GPUSCHED_RETURN_IF_ERROR(placement_fields::DecodePlacement(h, path, /*devices_allowed=*/true, &a));
  GPUSCHED_RETURN_IF_ERROR(ReadPresent(h, path, &out.present));
  return out;
}

}  // namespace

StatusOr<std::vector<NodeHold>> ParseNodeHolds(std::string_view text, std::string_view node_name) {
  return placement_fields::ParseByUid<NodeHold>(
      text, "holds", [&](const Value& v, std::string_view uid) { return DecodeHold(v, uid, node_name); },
      [](const NodeHold& h) -> const std::string& { return h.about_uid; });
}

std::string EncodeNodeHolds(const std::vector<NodeHold>& holds) {
  std::vector<const NodeHold*> sorted;
  for (const NodeHold& h : holds) sorted.push_back(&h);
  std::sort(sorted.begin(), sorted.end(), [](const NodeHold* x, const NodeHold* y) { return x->about_uid < y->about_uid; });
  std::string out = "{";
  for (const NodeHold* h : sorted) {
    if (out.size() > 1) out += ',';
    json::AppendString(&out, h->about_uid);
    out += ":{\"for\":";
    json::AppendString(&out, h->hold.pod_uid);
    out += ',';
    placement_fields::AppendPod(&out, h->hold);
    out += fmt::format(",\"at\":{},\"seconds\":{}", h->at_ms, h->ttl_s);
    placement_fields::AppendPlacement(&out, h->hold);
    if (!h->present.empty()) {
      out += ",\"present\":[";
      for (size_t i = 0; i < h->present.size(); ++i) {
        if (i > 0) out += ',';
        json::AppendString(&out, h->present[i]);
      }
      out += ']';
    }
    out += '}';
  }
  out += '}';
  return out;
}

}  // namespace gpusched::kubejson
