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

// The rows in a fixed array, so that the pointers KindOf and KindServing return stay valid when a
// kind is registered.
struct Table {
  std::array<DeviceKind, kMaxKinds> rows{{
      {.mode = NodeMode::kNvidia, .label = "nvidia", .request = RequestKind::kWholeGpu, .short_name = "whole",
       .asks = "nvidia.com/gpu", .payload = Payload::kCount},
      {.mode = NodeMode::kNvidiaDra, .label = "nvidia-dra", .request = RequestKind::kDra, .short_name = "dra",
       .asks = "DRA resource claims", .payload = Payload::kDevices},
      {.mode = NodeMode::kMgpu, .label = "mgpu", .request = RequestKind::kMgpu, .short_name = "mgpu",
       .asks = "vke.volcengine.com/mgpu-core", .payload = Payload::kShares},
  }};
  size_t size = 3;
};

Table& Kinds() {
  static Table table;
  return table;
}

std::span<const DeviceKind> Rows() { return {Kinds().rows.data(), Kinds().size}; }

}  // namespace

std::span<const DeviceKind> DeviceKinds() { return Rows(); }

bool AddDeviceKind(const DeviceKind& row) {
  Table& t = Kinds();
  if (t.size == kMaxKinds || row.mode == NodeMode::kInvalid || row.request == RequestKind::kNone ||
      static_cast<size_t>(row.request) >= kMaxKinds) {
    return false;
  }
  for (const DeviceKind& k : Rows()) {
    if (k.mode == row.mode || k.request == row.request || k.label == row.label) return false;
  }
  t.rows[t.size++] = row;
  return true;
}

const DeviceKind* KindOf(RequestKind kind) {
  for (const DeviceKind& k : Rows()) {
    if (k.request == kind) return &k;
  }
  return nullptr;
}

const DeviceKind* KindServing(NodeMode mode) {
  for (const DeviceKind& k : Rows()) {
    if (k.mode == mode) return &k;
  }
  return nullptr;
}

bool HasPayload(NodeMode mode, Payload payload) {
  const DeviceKind* k = KindServing(mode);
  return k != nullptr && k->payload == payload;
}

bool HasPayload(RequestKind kind, Payload payload) {
  const DeviceKind* k = KindOf(kind);
  return k != nullptr && k->payload == payload;
}

bool HasDevicePlugin(NodeMode mode) {
  const DeviceKind* k = KindServing(mode);
  return k != nullptr && k->payload != Payload::kDevices;
}

bool HasDevicePlugin(RequestKind kind) {
  const DeviceKind* k = KindOf(kind);
  return k != nullptr && k->payload != Payload::kDevices;
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

NodeMode ModeServing(RequestKind kind) {
  const DeviceKind* k = KindOf(kind);
  return k != nullptr ? k->mode : NodeMode::kInvalid;
}

std::string_view RequestKindName(RequestKind kind) {
  const DeviceKind* k = KindOf(kind);
  return k != nullptr ? k->asks : "no GPU";
}

}  // namespace gpusched
