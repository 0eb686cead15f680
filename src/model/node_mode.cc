// File: node_mode.cc
//
// The node-mode vocabulary as text: the label value to a mode (absent is nvidia, anything unknown
// invalid), each mode's name, the mode that serves each kind of request, and each kind's name.
#include "gpusched/model/node_mode.h"

#include <array>
#include <vector>

namespace gpusched {
namespace {

constexpr size_t kMaxKinds = 16;

// The rows: the built-in kinds first. A fixed array, so that the pointers the index holds stay
// valid when a kind is registered.
constinit DeviceKind rows[kMaxKinds] = {
    {.mode = NodeMode::kNvidia, .label = "nvidia", .request = RequestKind::kWholeGpu, .short_name = "whole",
     .asks = "nvidia.com/gpu", .payload = Payload::kCount},
    {.mode = NodeMode::kNvidiaDra, .label = "nvidia-dra", .request = RequestKind::kDra, .short_name = "dra",
     .asks = "DRA resource claims", .payload = Payload::kDevices},
    {.mode = NodeMode::kMgpu, .label = "mgpu", .request = RequestKind::kMgpu, .short_name = "mgpu",
     .asks = "vke.volcengine.com/mgpu-core", .payload = Payload::kShares},
};
constinit size_t row_count = 3;

std::span<const DeviceKind> Rows() { return {rows, row_count}; }

}  // namespace

namespace detail {

constinit KindIndex kind_index = [] {
  KindIndex index{};
  for (size_t i = 0; i < 3; ++i) {
    // The built-in rows' values, spelled out: a constant initializer may not read `rows`.
    constexpr NodeMode kModes[] = {NodeMode::kNvidia, NodeMode::kNvidiaDra, NodeMode::kMgpu};
    constexpr RequestKind kRequests[] = {RequestKind::kWholeGpu, RequestKind::kDra, RequestKind::kMgpu};
    index.by_mode[static_cast<uint8_t>(kModes[i])] = &rows[i];
    index.by_request[static_cast<uint8_t>(kRequests[i])] = &rows[i];
  }
  return index;
}();

}  // namespace detail

std::span<const DeviceKind> DeviceKinds() { return Rows(); }

bool AddDeviceKind(const DeviceKind& row) {
  if (row_count == kMaxKinds || row.mode == NodeMode::kInvalid || row.request == RequestKind::kNone ||
      static_cast<size_t>(row.request) >= kMaxKinds) {
    return false;
  }
  // "" and "invalid" name no mode (ModeFromLabel, ModeName); one kind serves claims (ClaimsKind).
  if (row.label.empty() || row.label == "invalid") return false;
  for (const DeviceKind& k : Rows()) {
    if (k.mode == row.mode || k.request == row.request || k.label == row.label) return false;
    if (k.payload == Payload::kDevices && row.payload == Payload::kDevices) return false;
  }
  rows[row_count] = row;
  detail::kind_index.by_mode[static_cast<uint8_t>(row.mode)] = &rows[row_count];
  detail::kind_index.by_request[static_cast<uint8_t>(row.request)] = &rows[row_count];
  ++row_count;
  return true;
}

RequestKind ClaimsKind() {
  for (const DeviceKind& k : Rows()) {
    if (k.payload == Payload::kDevices) return k.request;
  }
  return RequestKind::kNone;
}

NodeMode ClaimsMode() { return ModeServing(ClaimsKind()); }

std::string LabelValues(bool with_devices) {
  std::vector<std::string_view> labels;
  for (const DeviceKind& k : Rows()) {
    if (with_devices || k.payload != Payload::kDevices) labels.push_back(k.label);
  }
  std::string out;
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i > 0) out += i + 1 == labels.size() ? " or " : ", ";
    out += labels[i];
  }
  return out;
}

NodeMode ModeFromLabel(const std::optional<std::string>& label) {
  if (!label) return NodeMode::kNvidia;
  for (const DeviceKind& k : Rows()) {
    if (*label == k.label) return k.mode;
  }
  return NodeMode::kInvalid;
}

std::string_view ModeName(NodeMode mode) {
  const DeviceKind* k = KindServing(mode);
  return k != nullptr ? k->label : "invalid";
}

std::string_view RequestKindName(RequestKind kind) {
  const DeviceKind* k = KindOf(kind);
  return k != nullptr ? k->asks : "no GPU";
}

}  // namespace gpusched
