#include "gpusched/kubejson/node_bookings.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "gpusched/json/json.h"

namespace gpusched::kubejson {
namespace {

using rapidjson::Value;

// Largest index and amounts a booking may name: anything beyond is not a placement gpusched made.
constexpr int64_t kMaxGpuIndex = 1023;
constexpr int64_t kMaxAmount = int64_t{1} << 40;
constexpr int64_t kMaxContainers = 1 << 16;  // init positions

Status ReadBounded(const Value& obj, std::string_view key, std::string_view path, int64_t max, int64_t* out) {
  GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(obj, key, path, out));
  if (*out < 0 || *out > max) return InvalidArgumentError(fmt::format("{}.{}: {} is outside 0-{}", path, key, *out, max));
  return OkStatus();
}

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

StatusOr<NodeBooking> DecodeBooking(const Value& b, std::string_view uid, std::string_view node_name) {
  std::string path = fmt::format("bookings[\"{}\"]", uid);
  if (!b.IsObject()) return json::WrongType(path, "object", b);
  NodeBooking out;
  Allocation& a = out.allocation;
  a.pod_uid = std::string(uid);
  a.node_name = std::string(node_name);
  a.origin = AllocationOrigin::kBooked;
  std::string pod;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(b, "pod", path, &pod));
  size_t slash = pod.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == pod.size()) {
    return InvalidArgumentError(fmt::format("{}.pod: \"{}\" (want namespace/name)", path, pod));
  }
  a.pod_namespace = pod.substr(0, slash);
  a.pod_name = pod.substr(slash + 1);
  GPUSCHED_RETURN_IF_ERROR(ReadBounded(b, "at", path, kMaxAmount * 1000, &out.booked_at_ms));
  std::string mode;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(b, "mode", path, &mode));
  if (mode == ModeName(NodeMode::kNvidia)) {
    a.mode = NodeMode::kNvidia;
    a.placement.kind = RequestKind::kWholeGpu;
    GPUSCHED_RETURN_IF_ERROR(ReadBounded(b, "gpus", path, kMaxGpuIndex + 1, &a.placement.whole_gpus));
    if (a.placement.whole_gpus == 0) return InvalidArgumentError(path + ".gpus: missing");
  } else if (mode == ModeName(NodeMode::kMgpu)) {
    a.mode = NodeMode::kMgpu;
    a.placement.kind = RequestKind::kMgpu;
    const Value* containers = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindArray(b, "containers", path, &containers));
    if (containers == nullptr || containers->Empty()) return InvalidArgumentError(path + ".containers: missing");
    for (rapidjson::SizeType i = 0; i < containers->Size(); ++i) {
      ContainerAssignment c;
      GPUSCHED_RETURN_IF_ERROR(DecodeContainer((*containers)[i], fmt::format("{}.containers[{}]", path, i), &c));
      a.placement.containers.push_back(std::move(c));
    }
  } else {
    return InvalidArgumentError(fmt::format("{}.mode: \"{}\" (want nvidia or mgpu)", path, mode));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<NodeBooking>> ParseNodeBookings(std::string_view text, std::string_view node_name) {
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(text, &doc));
  if (!doc.IsObject()) return json::WrongType("bookings", "object", doc);
  std::vector<NodeBooking> out;
  for (const auto& member : std::as_const(doc).GetObject()) {
    std::string_view uid = json::View(member.name);
    if (uid.empty()) return InvalidArgumentError("bookings: empty pod UID");
    GPUSCHED_ASSIGN_OR_RETURN(NodeBooking b, DecodeBooking(member.value, uid, node_name));
    out.push_back(std::move(b));
  }
  std::sort(out.begin(), out.end(),
            [](const NodeBooking& x, const NodeBooking& y) { return x.allocation.pod_uid < y.allocation.pod_uid; });
  auto dup = std::adjacent_find(out.begin(), out.end(), [](const NodeBooking& x, const NodeBooking& y) {
    return x.allocation.pod_uid == y.allocation.pod_uid;
  });
  if (dup != out.end()) return InvalidArgumentError(fmt::format("bookings: pod UID \"{}\" twice", dup->allocation.pod_uid));
  return out;
}

std::string EncodeNodeBookings(const std::vector<NodeBooking>& bookings) {
  std::vector<const NodeBooking*> sorted;
  for (const NodeBooking& b : bookings) sorted.push_back(&b);
  std::sort(sorted.begin(), sorted.end(),
            [](const NodeBooking* x, const NodeBooking* y) { return x->allocation.pod_uid < y->allocation.pod_uid; });
  std::string out = "{";
  for (const NodeBooking* b : sorted) {
    const Allocation& a = b->allocation;
    if (out.size() > 1) out += ',';
    json::AppendString(&out, a.pod_uid);
    out += ":{\"pod\":";
    json::AppendString(&out, fmt::format("{}/{}", a.pod_namespace, a.pod_name));
    out += fmt::format(",\"at\":{},\"mode\":", b->booked_at_ms);
    json::AppendString(&out, ModeName(a.mode));
    if (a.placement.kind == RequestKind::kWholeGpu) {
      out += fmt::format(",\"gpus\":{}}}", a.placement.whole_gpus);
      continue;
    }
    out += ",\"containers\":[";
    for (size_t i = 0; i < a.placement.containers.size(); ++i) {
      const ContainerAssignment& c = a.placement.containers[i];
      if (i > 0) out += ',';
      out += "{\"name\":";
      json::AppendString(&out, c.container);
      out += fmt::format(",\"gpus\":[{}],\"milli\":{},\"mib\":{}", fmt::join(c.gpu_indices, ","), c.milli_per_gpu,
                         c.mib_per_gpu);
      if (c.exclusive) out += ",\"exclusive\":true";
      if (c.init_position > 0) out += fmt::format(",\"init\":{}", c.init_position);
      if (c.sidecar) out += ",\"sidecar\":true";
      out += '}';
    }
    out += "]}";
  }
  out += '}';
  return out;
}

}  // namespace gpusched::kubejson
