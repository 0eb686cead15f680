// File: gpu_devices_json.cc
//
// objects.h's gpu-devices half: the node annotation gpusched.io/gpu-devices both ways (index, UUID,
// model, memory, health; the agent's MIG, peers and drift). objects.cc decodes the Pods, Nodes,
// budgets and Lists around it.
#include "gpusched/kubejson/objects.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>

#include "gpusched/json/json.h"
#include "gpusched/model/units.h"

// The node annotation gpusched.io/gpu-devices (objects.h): what the node agent publishes per GPU.

namespace gpusched::kubejson {

using rapidjson::Value;

namespace {

constexpr std::string_view kDriftNames[] = {"", "UsedBeyondBooking", "UsedWithoutBooking"};

// Reads the optional array of GPU indices obj[key].
Status ReadIndexList(const Value& obj, std::string_view key, std::string_view path, std::vector<int>* out) {
  const Value* list = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(obj, key, path, &list));
  if (list == nullptr) return OkStatus();
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const Value& v = (*list)[i];
    if (!v.IsInt() || v.GetInt() < 0 || v.GetInt() > 1023) {
      return InvalidArgumentError(fmt::format("{}.{}[{}]: want a GPU index 0-1023", path, key, i));
    }
    out->push_back(v.GetInt());
  }
  return OkStatus();
}

// Reads the optional MIG fields: migEnabled, migSlices, migInstances [{profile, profileId, id,
// start, size, memoryMiB}].
Status ReadMig(const Value& g, std::string_view path, GpuDevice* d) {
  GPUSCHED_RETURN_IF_ERROR(json::ReadBool(g, "migEnabled", path, &d->mig_enabled));
  int64_t slices = 0;
  GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(g, "migSlices", path, &slices));
  if (slices < 0 || slices > 64) return InvalidArgumentError(fmt::format("{}.migSlices: {} is outside 0-64", path, slices));
  d->mig_slices = static_cast<int>(slices);
  const Value* list = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(g, "migInstances", path, &list));
  if (list == nullptr) return OkStatus();
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    std::string ipath = fmt::format("{}.migInstances[{}]", path, i);
    const Value& v = (*list)[i];
    if (!v.IsObject()) return json::WrongType(ipath, "object", v);
    MigInstance m;
    int64_t profile_id = 0, id = 0, start = 0, size = 0;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(v, "profile", ipath, &m.profile));
    GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(v, "profileId", ipath, &profile_id));
    GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(v, "id", ipath, &id));
    GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(v, "start", ipath, &start));
    GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(v, "size", ipath, &size));
    GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(v, "memoryMiB", ipath, &m.memory_mib));
    if (start < 0 || start > 64 || size < 1 || size > 64) {
      return InvalidArgumentError(fmt::format("{}: placement {}:{} is outside 0-64 slices", ipath, start, size));
    }
    if (m.profile.empty()) return InvalidArgumentError(fmt::format("{}.profile: missing", ipath));
    if (m.memory_mib < 0 || m.memory_mib > kMaxGpuQuantity) {
      return InvalidArgumentError(fmt::format("{}.memoryMiB: {} is outside 0-{}", ipath, m.memory_mib, kMaxGpuQuantity));
    }
    m.profile_id = static_cast<int>(std::clamp<int64_t>(profile_id, 0, 1 << 16));
    m.instance_id = static_cast<int>(std::clamp<int64_t>(id, 0, 1 << 16));
    m.start = static_cast<int>(start);
    m.size = static_cast<int>(size);
    d->mig_instances.push_back(std::move(m));
  }
  return OkStatus();
}

// Reads the optional list of pod keys "pods" (GpuDevice::pods: present, even empty, when the agent
// read the kubelet's PodResources).
Status ReadPods(const Value& g, std::string_view path, GpuDevice* d) {
  const Value* list = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(g, "pods", path, &list));
  if (list == nullptr) return OkStatus();
  d->pods.emplace();
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    const Value& v = (*list)[i];
    if (!v.IsString() || std::string_view(v.GetString(), v.GetStringLength()).find('/') == std::string_view::npos) {
      return InvalidArgumentError(fmt::format("{}.pods[{}]: want \"namespace/name\"", path, i));
    }
    d->pods->emplace_back(v.GetString(), v.GetStringLength());
  }
  return OkStatus();
}

// Reads the optional fields the node agent adds: MIG, peers, pods and drift.
Status ReadAgentFields(const Value& g, std::string_view path, GpuDevice* d) {
  GPUSCHED_RETURN_IF_ERROR(ReadMig(g, path, d));
  GPUSCHED_RETURN_IF_ERROR(ReadIndexList(g, "nvlinkPeers", path, &d->nvlink_peers));
  GPUSCHED_RETURN_IF_ERROR(ReadIndexList(g, "pcieSwitchPeers", path, &d->pcie_peers));
  GPUSCHED_RETURN_IF_ERROR(ReadPods(g, path, d));
  std::string drift;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(g, "drift", path, &drift));
  if (drift.empty()) return OkStatus();
  for (size_t k = 1; k < std::size(kDriftNames); ++k) {
    if (drift == kDriftNames[k]) d->drift = static_cast<GpuDriftKind>(k);
  }
  if (d->drift == GpuDriftKind::kNone) {
    return InvalidArgumentError(fmt::format("{}.drift: \"{}\" (want UsedBeyondBooking or UsedWithoutBooking)", path, drift));
  }
  return OkStatus();
}

void AppendIndexList(std::string* out, std::string_view key, const std::vector<int>& list) {
  if (!list.empty()) *out += fmt::format(R"(,"{}":[{}])", key, fmt::join(list, ","));
}

// Appends the fields ReadAgentFields reads, those that are set.
void AppendAgentFields(std::string* out, const GpuDevice& g) {
  if (g.mig_enabled) *out += R"(,"migEnabled":true)";
  if (!g.mig_instances.empty()) {
    *out += R"(,"migInstances":[)";
    for (size_t i = 0; i < g.mig_instances.size(); ++i) {
      const MigInstance& m = g.mig_instances[i];
      *out += fmt::format(R"({}{{"profile":)", i > 0 ? "," : "");
      json::AppendString(out, m.profile);
      *out += fmt::format(R"(,"profileId":{},"id":{},"start":{},"size":{},"memoryMiB":{}}})", m.profile_id,
                          m.instance_id, m.start, m.size, m.memory_mib);
    }
    *out += "]";
  }
  if (g.mig_slices > 0) *out += fmt::format(R"(,"migSlices":{})", g.mig_slices);
  AppendIndexList(out, "nvlinkPeers", g.nvlink_peers);
  AppendIndexList(out, "pcieSwitchPeers", g.pcie_peers);
  if (g.pods) {
    *out += R"(,"pods":[)";
    for (size_t i = 0; i < g.pods->size(); ++i) {
      if (i > 0) *out += ',';
      json::AppendString(out, (*g.pods)[i]);
    }
    *out += "]";
  }
  if (g.drift != GpuDriftKind::kNone) *out += fmt::format(R"(,"drift":"{}")", kDriftNames[static_cast<int>(g.drift)]);
}

}  // namespace

std::string_view GpuDriftName(GpuDriftKind kind) { return kDriftNames[static_cast<int>(kind)]; }

StatusOr<std::vector<GpuDevice>> ParseGpuDevices(std::string_view text) {
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(text, &doc));
  if (!doc.IsArray()) return json::WrongType("value", "array", doc);
  std::vector<GpuDevice> out;
  for (rapidjson::SizeType i = 0; i < doc.Size(); ++i) {
    const Value& g = doc[i];
    std::string path = fmt::format("[{}]", i);
    if (!g.IsObject()) return json::WrongType(path, "object", g);
    GpuDevice d;
    int64_t index = -1;
    if (json::Find(g, "index") == nullptr) return InvalidArgumentError(path + ".index: missing");
    GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(g, "index", path, &index));
    if (index < 0 || index > 1023) return InvalidArgumentError(fmt::format("{}.index: {} is outside 0-1023", path, index));
    d.index = static_cast<int>(index);
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(g, "uuid", path, &d.uuid));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(g, "model", path, &d.model));
    GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(g, "memoryMiB", path, &d.memory_mib));
    if (d.memory_mib < 0 || d.memory_mib > kMaxGpuQuantity) {
      return InvalidArgumentError(fmt::format("{}.memoryMiB: {} is outside 0-{}", path, d.memory_mib, kMaxGpuQuantity));
    }
    int64_t numa = -1;
    GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(g, "numa", path, &numa));
    d.numa_node = static_cast<int>(std::clamp<int64_t>(numa, -1, 1 << 16));
    std::string health = "Healthy";
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(g, "health", path, &health));
    if (health != "Healthy" && health != "Unhealthy") {
      return InvalidArgumentError(fmt::format("{}.health: \"{}\" (want Healthy or Unhealthy)", path, health));
    }
    d.healthy = health == "Healthy";
    GPUSCHED_RETURN_IF_ERROR(ReadAgentFields(g, path, &d));
    out.push_back(std::move(d));
  }
  return out;
}

std::string EncodeGpuDevices(const std::vector<GpuDevice>& gpus) {
  std::string out = "[";
  for (const GpuDevice& g : gpus) {
    out += fmt::format(R"({}{{"index":{},"uuid":)", out.size() > 1 ? "," : "", g.index);
    json::AppendString(&out, g.uuid);
    out += R"(,"model":)";
    json::AppendString(&out, g.model);
    out += fmt::format(R"(,"memoryMiB":{},"numa":{},"health":"{}")", g.memory_mib, g.numa_node,
                       g.healthy ? "Healthy" : "Unhealthy");
    AppendAgentFields(&out, g);
    out += "}";
  }
  return out + "]";
}

}  // namespace gpusched::kubejson
