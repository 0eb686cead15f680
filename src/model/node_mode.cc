// File: node_mode.cc
//
// The node-mode vocabulary as text: the label value to a mode (absent is nvidia, anything unknown
// invalid), each mode's name, the mode that serves each kind of request, and each kind's name.
#include "gpusched/model/node_mode.h"

namespace gpusched {
namespace {

constexpr DeviceKind kKinds[] = {
    {.mode = NodeMode::kNvidia, .label = "nvidia", .request = RequestKind::kWholeGpu, .short_name = "whole",
     .asks = "nvidia.com/gpu"},
    {.mode = NodeMode::kNvidiaDra, .label = "nvidia-dra", .request = RequestKind::kDra, .short_name = "dra",
     .asks = "DRA resource claims"},
    {.mode = NodeMode::kMgpu, .label = "mgpu", .request = RequestKind::kMgpu, .short_name = "mgpu",
     .asks = "vke.volcengine.com/mgpu-core"},
};

}  // namespace

std::span<const DeviceKind> DeviceKinds() { return kKinds; }

const DeviceKind* KindOf(RequestKind kind) {
  for (const DeviceKind& k : kKinds) {
    if (k.request == kind) return &k;
  }
  return nullptr;
}

const DeviceKind* KindServing(NodeMode mode) {
  for (const DeviceKind& k : kKinds) {
    if (k.mode == mode) return &k;
  }
  return nullptr;
}

NodeMode ModeFromLabel(const std::optional<std::string>& label) {
  if (!label) return NodeMode::kNvidia;
  for (const DeviceKind& k : kKinds) {
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
