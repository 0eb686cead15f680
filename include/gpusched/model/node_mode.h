// File: node_mode.h
//
// A node's GPU scheduling mode, read from the label vke.node.gpu.schedule, and the kind of GPU a
// pod asks for, tied together by one table of device kinds (DeviceKinds()). The mapping is total:
// every label value, absent included, yields a mode.
//
// The table holds the three built-in kinds and any kind registered at startup
// (placement/kinds.h); a registered kind's mode and request kind are values beyond the named ones.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpusched {

enum class NodeMode : uint8_t {
  kNvidia,     // label absent or "nvidia": whole GPUs, nvidia.com/gpu
  kNvidiaDra,  // "nvidia-dra": Dynamic Resource Allocation
  kMgpu,       // "mgpu": shared GPUs (VKE mGPU)
  kInvalid,    // any other value, "" included: no GPU pods
};

// What a pod asks for. kNone pods pass every node untouched.
enum class RequestKind : uint8_t {
  kNone,
  kWholeGpu,  // nvidia.com/gpu
  kMgpu,      // vke.volcengine.com/mgpu-core / mgpu-memory
  // Devices from DRA. A pod's request: spec.resourceClaims alone (a pod with both asks by its
  // GPUs' kind). A placement: what DRA allocated, KEP 5004 extended resources included.
  kDra,
};

// What a placement of a kind holds (model/allocation.h): a count of interchangeable devices the
// device plugin picks (whole GPUs), shares of numbered GPUs per container (mGPU), or named
// devices allocated through claims (DRA). Codecs and descriptions follow the payload, not the kind.
enum class Payload : uint8_t { kCount, kShares, kDevices };

// One row per kind of GPU gpusched places: the node mode (and its label value) that serves it,
// the kind of request a pod of it makes, and the names people read. Every name and mapping below
// is read from this table; a new mode starts with a row here.
struct DeviceKind {
  NodeMode mode;
  std::string_view label;       // the vke.node.gpu.schedule value that selects `mode`
  RequestKind request;
  std::string_view short_name;  // explain's request "kind": "whole", "mgpu", "dra"
  std::string_view asks;        // what a pod of the kind requests, as reasons name it
  Payload payload;
};

// The rows, one per mode that takes GPU pods: the built-in kinds, then those registered.
std::span<const DeviceKind> DeviceKinds();
// Adds a row for a kind registered at startup (placement::RegisterKind calls it). Returns false,
// adding nothing, if its mode, request kind or label is taken, its label is "" or "invalid", it
// is a second kind of named devices (one kind serves claims), it reuses kNone or kInvalid, its
// request kind's value is 16 or more (PodUse keeps it in four bits), or the table is full (16
// rows). Not thread-safe: register before anything reads the table.
bool AddDeviceKind(const DeviceKind& row);

namespace detail {
// The rows by mode and by request kind, for lookups in constant time on the filter path;
// constant-initialized with the built-in rows (node_mode.cc), so valid before any code runs.
struct KindIndex {
  std::array<const DeviceKind*, 256> by_mode;
  std::array<const DeviceKind*, 256> by_request;
};
extern KindIndex kind_index;
}  // namespace detail

// Returns the row of a request kind, or nullptr for kNone.
inline const DeviceKind* KindOf(RequestKind kind) { return detail::kind_index.by_request[static_cast<uint8_t>(kind)]; }
// Returns the row of a node mode, or nullptr for kInvalid.
inline const DeviceKind* KindServing(NodeMode mode) { return detail::kind_index.by_mode[static_cast<uint8_t>(mode)]; }

// Returns true if the kind that `mode` serves (or `kind` names) holds `payload`; false for
// kInvalid and kNone.
inline bool HasPayload(NodeMode mode, Payload payload) {
  const DeviceKind* k = KindServing(mode);
  return k != nullptr && k->payload == payload;
}
inline bool HasPayload(RequestKind kind, Payload payload) {
  const DeviceKind* k = KindOf(kind);
  return k != nullptr && k->payload == payload;
}

// Returns true if pods of the kind ask a device plugin for GPUs and gpusched books what they hold
// (payload kCount or kShares), as opposed to devices allocated through claims (kDevices).
inline bool HasDevicePlugin(NodeMode mode) {
  const DeviceKind* k = KindServing(mode);
  return k != nullptr && k->payload != Payload::kDevices;
}
inline bool HasDevicePlugin(RequestKind kind) {
  const DeviceKind* k = KindOf(kind);
  return k != nullptr && k->payload != Payload::kDevices;
}
// Returns the request kind of pods that carry only claims (spec.resourceClaims), and the mode
// that serves it: the kind whose payload is named devices.
RequestKind ClaimsKind();
NodeMode ClaimsMode();
// Returns true unless `kind` is kNone (no GPU).
constexpr bool IsGpuKind(RequestKind kind) { return kind != RequestKind::kNone; }

// Returns the label values that select a mode, as a reason lists them: "nvidia, nvidia-dra or
// mgpu"; without the kinds whose payload is named devices unless `with_devices`.
std::string LabelValues(bool with_devices = true);

// Returns the mode a label value selects; std::nullopt means the label is absent.
NodeMode ModeFromLabel(const std::optional<std::string>& label);

// Returns "nvidia", "nvidia-dra", "mgpu" or "invalid".
std::string_view ModeName(NodeMode mode);

// Returns the mode that serves `kind`; kInvalid for kNone.
inline NodeMode ModeServing(RequestKind kind) {
  const DeviceKind* k = KindOf(kind);
  return k != nullptr ? k->mode : NodeMode::kInvalid;
}

// Returns how a reason names what a pod of `kind` requests, e.g. "nvidia.com/gpu".
std::string_view RequestKindName(RequestKind kind);

}  // namespace gpusched
