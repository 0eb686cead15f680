// File: node_mode.h
//
// A node's GPU scheduling mode, read from the label vke.node.gpu.schedule, and the kind of GPU a
// pod asks for, tied together by one table of device kinds (DeviceKinds()). The mapping is total:
// every label value, absent included, yields a mode.
#pragma once

#include <optional>
#include <span>
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
  // Devices from DRA. A pod's request: spec.resourceClaims alone (a pod with both asks by its
  // GPUs' kind). A placement: what DRA allocated, KEP 5004 extended resources included.
  kDra,
};

// One row per kind of GPU gpusched places: the node mode (and its label value) that serves it,
// the kind of request a pod of it makes, and the names people read. Every name and mapping below
// is read from this table; a new mode starts with a row here.
struct DeviceKind {
  NodeMode mode;
  std::string_view label;       // the vke.node.gpu.schedule value that selects `mode`
  RequestKind request;
  std::string_view short_name;  // explain's request "kind": "whole", "mgpu", "dra"
  std::string_view asks;        // what a pod of the kind requests, as reasons name it
};

// The rows, one per mode that takes GPU pods.
std::span<const DeviceKind> DeviceKinds();
// Returns the row of a request kind, or nullptr for kNone.
const DeviceKind* KindOf(RequestKind kind);
// Returns the row of a node mode, or nullptr for kInvalid.
const DeviceKind* KindServing(NodeMode mode);

// Returns the mode a label value selects; std::nullopt means the label is absent.
NodeMode ModeFromLabel(const std::optional<std::string>& label);

// Returns "nvidia", "nvidia-dra", "mgpu" or "invalid".
std::string_view ModeName(NodeMode mode);

// Returns the mode that serves `kind`. REQUIRES: kind != kNone.
NodeMode ModeServing(RequestKind kind);

// Returns how a reason names what a pod of `kind` requests, e.g. "nvidia.com/gpu".
std::string_view RequestKindName(RequestKind kind);

}  // namespace gpusched
