// File: node_bookings.cc
//
// gpusched.io/bookings both ways: each entry's pod and booking time, its placement through
// placement_fields.h, times bounded, keys written in sorted order.
#include "gpusched/kubejson/node_bookings.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "gpusched/json/json.h"
#include "placement_fields.h"

namespace gpusched::kubejson {
namespace {

using rapidjson::Value;

constexpr int64_t kMaxBookingMs = (int64_t{1} << 40) * 1000;

StatusOr<NodeBooking> DecodeBooking(const Value& b, std::string_view uid, std::string_view node_name) {
  std::string path = fmt::format("bookings[\"{}\"]", uid);
  if (!b.IsObject()) return json::WrongType(path, "object", b);
  NodeBooking out;
  Allocation& a = out.allocation;
  a.pod_uid = std::string(uid);
  a.node_name = std::string(node_name);
  a.origin = AllocationOrigin::kBooked;
  GPUSCHED_RETURN_IF_ERROR(placement_fields::ReadPod(b, path, &a));
  GPUSCHED_RETURN_IF_ERROR(placement_fields::ReadBounded(b, "at", path, kMaxBookingMs, &out.booked_at_ms));
  GPUSCHED_RETURN_IF_ERROR(placement_fields::DecodePlacement(b, path, /*devices_allowed=*/false, &a));
  return out;
}

}  // namespace

StatusOr<std::vector<NodeBooking>> ParseNodeBookings(std::string_view text, std::string_view node_name) {
  return placement_fields::ParseByUid<NodeBooking>(
      text, "bookings", [&](const Value& v, std::string_view uid) { return DecodeBooking(v, uid, node_name); },
      [](const NodeBooking& b) -> const std::string& { return b.allocation.pod_uid; });
}

std::string EncodeNodeBookings(const std::vector<NodeBooking>& bookings) {
  std::vector<const NodeBooking*> sorted;
  for (const NodeBooking& b : bookings) sorted.push_back(&b);
  std::sort(sorted.begin(), sorted.end(),
            [](const NodeBooking* x, const NodeBooking* y) { return x->allocation.pod_uid < y->allocation.pod_uid; });
  std::string out = "{";
  for (const NodeBooking* b : sorted) {
    const Allocation& a = b->allocation;
    if (out.size() > 1) out += ',';
    json::AppendString(&out, a.pod_uid);
    out += ":{";
    placement_fields::AppendPod(&out, a);
    out += fmt::format(",\"at\":{}", b->booked_at_ms);
    placement_fields::AppendPlacement(&out, a);
    out += '}';
  }
  out += '}';
  return out;
}

}  // namespace gpusched::kubejson
