// File: node_mode.h
//
// A node's GPU scheduling mode, read from the label vke.node.gpu.schedule, and the kind of GPU a
// pod asks for. The mapping is total: every label value, absent included, yields a mode.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpusched {

enum class NodeMode {
  kNvidia,     // label absent or "nvidia": whole GPUs, nvidia.com/gpu
  kNvidiaDra,  // "nvidia-dra": Dynamic Resource Allocation
  kMgpu,       // "mgpu": shared GPUs (VKE mGPU)
  kInvalid,    // any other value, "" included: no GPU pods
};

// What a pod asks for. kNone pods pass every node untouched.
enum class RequestKind {
  kNone,
  kWholeGpu,  // nvidia.com/gpu
  kMgpu,      // vke.volcengine.com/mgpu-core / mgpu-memory
  kDra,       // spec.resourceClaims alone (a pod with both asks by its GPUs' kind)
};

// Returns the mode a label value selects; std::nullopt means the label is absent.
NodeMode ModeFromLabel(const std::optional<std::string>& label);

// Returns "nvidia", "nvidia-dra", "mgpu" or "invalid".
std::string_view ModeName(NodeMode mode);

// Returns the mode that serves `kind`. REQUIRES: kind != kNone.
NodeMode ModeServing(RequestKind kind);

// Returns how a reason names what a pod of `kind` requests, e.g. "nvidia.com/gpu".
std::string_view RequestKindName(RequestKind kind);

}  // namespace gpusched
