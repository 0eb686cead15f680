// File: placement_fields.cc
//
// The placement fields of gpusched's node annotations both ways: "mode" with whole GPUs, mGPU
// containers or DRA devices, and "pod" as namespace/name; indices and amounts bounded to what
// gpusched could have written.
#include "placement_fields.h"

#include <fmt/format.h>

#include <optional>

#include "gpusched/dra/cluster_state.h"
#include "gpusched/model/node_mode.h"

namespace gpusched::kubejson::placement_fields {
namespace {

using rapidjson::Value;

// Largest index and amounts a placement may name: anything beyond is not one gpusched made.
constexpr int64_t kMaxGpuIndex = 1023;
constexpr int64_t kMaxAmount = int64_t{1} << 40;
constexpr int64_t kMaxContainers = 1 << 16;  // init positions

Status DecodeContainer(const Value& c, const std::string& path, ContainerAssignment* out) {
  if (!c.IsObject()) return json::WrongType(path, "object", c);
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "name", path, &out->container));
  if (out->container.empty()) return InvalidArgumentError(path + ".name: missing");
  const Value* gpus = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(c, "gpus", path, &gpus));
  if (gpus == nullptr || gpus->Empty()) return InvalidArgumentError(path + ".gpus: missing");
  for (rapidjson::SizeType i = 0; i < gpus->Size(); ++i) {
    const Value& g = (*gpus)[i];
    if (!g.IsInt64() || g.GetInt64() < 0 || g.GetInt64() > kMaxGpuIndex) {
      return InvalidArgumentError(fmt::format("{}.gpus[{}]: want a GPU index 0-{}", path, i, kMaxGpuIndex));
    }
    out->gpu_indices.push_back(static_cast<int>(g.GetInt64()));
  }
  GPUSCHED_RETURN_IF_ERROR(ReadBounded(c, "milli", path, 1000, &out->milli_per_gpu));
  GPUSCHED_RETURN_IF_ERROR(ReadBounded(c, "mib", path, kMaxAmount, &out->mib_per_gpu));
  GPUSCHED_RETURN_IF_ERROR(json::ReadBool(c, "exclusive", path, &out->exclusive));
  int64_t init = 0;
  GPUSCHED_RETURN_IF_ERROR(ReadBounded(c, "init", path, kMaxContainers, &init));
  out->init_position = static_cast<int>(init);
  GPUSCHED_RETURN_IF_ERROR(json::ReadBool(c, "sidecar", path, &out->sidecar));
  return OkStatus();
}

Status DecodeDevices(const Value& obj, const std::string& path, Placement* p) {
  const Value* devices = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(obj, "devices", path, &devices));
  if (devices == nullptr || devices->Empty()) return InvalidArgumentError(path + ".devices: missing");
  for (rapidjson::SizeType i = 0; i < devices->Size(); ++i) {
    const Value& d = (*devices)[i];
    std::string_view name = d.IsString() ? json::View(d) : std::string_view{};
    std::optional<dra::DeviceId> id = dra::ParseDeviceName(name);
    if (!id || id->driver.empty() || id->device.empty()) {
      return InvalidArgumentError(fmt::format("{}.devices[{}]: want \"driver/pool/device\"", path, i));
    }
    p->devices.emplace_back(name);
  }
  return OkStatus();
}

}  // namespace

Status ReadBounded(const Value& obj, std::string_view key, std::string_view path, int64_t max, int64_t* out) {
  GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(obj, key, path, out));
  if (*out < 0 || *out > max) return InvalidArgumentError(fmt::format("{}.{}: {} is outside 0-{}", path, key, *out, max));
  return OkStatus();
}

Status ReadPod(const Value& obj, const std::string& path, Allocation* a) {
  std::string pod;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(obj, "pod", path, &pod));
  size_t slash = pod.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == pod.size()) {
    return InvalidArgumentError(fmt::format("{}.pod: \"{}\" (want namespace/name)", path, pod));
  }
  a->pod_namespace = pod.substr(0, slash);
  a->pod_name = pod.substr(slash + 1);
  return OkStatus();
}

void AppendPod(std::string* out, const Allocation& a) {
  *out += "\"pod\":";
  json::AppendString(out, fmt::format("{}/{}", a.pod_namespace, a.pod_name));
}

namespace {

Status DecodeShares(const Value& obj, const std::string& path, Placement* p) {
  const Value* containers = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(obj, "containers", path, &containers));
  if (containers == nullptr || containers->Empty()) return InvalidArgumentError(path + ".containers: missing");
  for (rapidjson::SizeType i = 0; i < containers->Size(); ++i) {
    ContainerAssignment c;
    GPUSCHED_RETURN_IF_ERROR(DecodeContainer((*containers)[i], fmt::format("{}.containers[{}]", path, i), &c));
    p->containers.push_back(std::move(c));
  }
  return OkStatus();
}

}  // namespace

Status DecodePlacement(const Value& obj, const std::string& path, bool devices_allowed, Allocation* a) {
  std::string mode;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(obj, "mode", path, &mode));
  const DeviceKind* kind = KindServing(ModeFromLabel(mode));  // named devices only if devices_allowed
  if (kind != nullptr && kind->payload == Payload::kDevices && !devices_allowed) kind = nullptr;
  if (kind == nullptr) return InvalidArgumentError(fmt::format("{}.mode: \"{}\" (want {})", path, mode, LabelValues(devices_allowed)));
  a->mode = kind->mode;
  a->placement.kind = kind->request;
  switch (kind->payload) {
    case Payload::kCount:
      GPUSCHED_RETURN_IF_ERROR(ReadBounded(obj, "gpus", path, kMaxGpuIndex + 1, &a->placement.whole_gpus));
      if (a->placement.whole_gpus == 0) return InvalidArgumentError(path + ".gpus: missing");
      return OkStatus();
    case Payload::kDevices:
      return DecodeDevices(obj, path, &a->placement);
    case Payload::kShares:
      return DecodeShares(obj, path, &a->placement);
  }
  return OkStatus();
}

void AppendPlacement(std::string* out, const Allocation& a) {
  *out += ",\"mode\":";
  json::AppendString(out, ModeName(a.mode));
  if (HasPayload(a.placement.kind, Payload::kCount)) {
    *out += fmt::format(",\"gpus\":{}", a.placement.whole_gpus);
    return;
  }
  if (HasPayload(a.placement.kind, Payload::kDevices)) {
    *out += ",\"devices\":[";
    for (size_t i = 0; i < a.placement.devices.size(); ++i) {
      if (i > 0) *out += ',';
      json::AppendString(out, a.placement.devices[i]);
    }
    *out += ']';
    return;
  }
  *out += ",\"containers\":[";
  for (size_t i = 0; i < a.placement.containers.size(); ++i) {
    const ContainerAssignment& c = a.placement.containers[i];
    if (i > 0) *out += ',';
    *out += "{\"name\":";
    json::AppendString(out, c.container);
    *out += fmt::format(",\"gpus\":[{}],\"milli\":{},\"mib\":{}", fmt::join(c.gpu_indices, ","), c.milli_per_gpu, c.mib_per_gpu);
    if (c.exclusive) *out += ",\"exclusive\":true";
    if (c.init_position > 0) *out += fmt::format(",\"init\":{}", c.init_position);
    if (c.sidecar) *out += ",\"sidecar\":true";
    *out += '}';
  }
  *out += ']';
}

}  // namespace gpusched::kubejson::placement_fields
