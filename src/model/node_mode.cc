// File: node_mode.cc
//
// The node-mode vocabulary as text: the label value to a mode (absent is nvidia, anything unknown
// invalid), each mode's name, the mode that serves each kind of request, and each kind's name.
#include "gpusched/model/node_mode.h"

namespace gpusched {

NodeMode ModeFromLabel(const std::optional<std::string>& label) {
  if (!label) return NodeMode::kNvidia;
  if (*label == "nvidia") return NodeMode::kNvidia;
  if (*label == "nvidia-dra") return NodeMode::kNvidiaDra;
  if (*label == "mgpu") return NodeMode::kMgpu;
  return NodeMode::kInvalid;
}

std::string_view ModeName(NodeMode mode) {
  switch (mode) {
    case NodeMode::kNvidia:
      return "nvidia";
    case NodeMode::kNvidiaDra:
      return "nvidia-dra";
    case NodeMode::kMgpu:
      return "mgpu";
    case NodeMode::kInvalid:
      return "invalid";
  }
  return "invalid";
}

NodeMode ModeServing(RequestKind kind) {
  switch (kind) {
    case RequestKind::kWholeGpu:
      return NodeMode::kNvidia;
    case RequestKind::kMgpu:
      return NodeMode::kMgpu;
    case RequestKind::kDra:
      return NodeMode::kNvidiaDra;
    case RequestKind::kNone:
      break;
  }
  return NodeMode::kInvalid;
}

std::string_view RequestKindName(RequestKind kind) {
  switch (kind) {
    case RequestKind::kNone:
      return "no GPU";
    case RequestKind::kWholeGpu:
      return "nvidia.com/gpu";
    case RequestKind::kMgpu:
      return "vke.volcengine.com/mgpu-core";
    case RequestKind::kDra:
      return "DRA resource claims";
  }
  return "no GPU";
}

}  // namespace gpusched
