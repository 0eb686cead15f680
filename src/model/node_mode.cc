// File: node_mode.cc
//
// The node-mode vocabulary as text: the label value to a mode (absent is nvidia, anything unknown
// invalid), each mode's name, the mode that serves each kind of request, and each kind's name.
#include "gpusched/model/node_mode.h"

#include <array>

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
  if (t.size == kMaxKinds || row.mode == NodeMode::kInvalid || row.request == RequestKind::kNone) return false;
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

std::string LabelValues() {
  std::string out;
  std::span<const DeviceKind> rows = Rows();
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i > 0) out += i + 1 == rows.size() ? " or " : ", ";
    out += rows[i].label;
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
