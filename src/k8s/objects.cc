#include "gpusched/k8s/objects.h"

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "gpusched/common/quantity.h"
#include "gpusched/k8s/node_bookings.h"
#include "gpusched/model/names.h"
#include "gpusched/model/units.h"

namespace gpusched::k8s {
namespace {

using rapidjson::Value;

// Reads one of the three GPU resources from a ResourceList object.
Status ReadGpuResources(const Value& list, std::string_view path, GpuResources* out) {
  struct Field {
    std::string_view name;
    std::optional<int64_t> GpuResources::*dst;
    bool plain;  // the mGPU contract counts percent and MiB: no unit suffixes
  };
  static constexpr Field kFields[] = {{names::kNvidiaGpu, &GpuResources::nvidia_gpus, false},
                                      {names::kMgpuCore, &GpuResources::mgpu_core_percent, true},
                                      {names::kMgpuMemory, &GpuResources::mgpu_memory_mib, true}};
  for (const Field& f : kFields) {
    const Value* v = json::Find(list, f.name);
    if (v == nullptr) continue;
    std::string field = fmt::format("{}[\"{}\"]", path, f.name);
    int64_t value = 0;
    if (v->IsInt64()) {
      // Quantities are strings on the wire; accept a plain integer too.
      value = v->GetInt64();
    } else if (!v->IsString()) {
      return json::WrongType(field, "quantity string", *v);
    } else {
      std::string_view text = json::View(*v);
      if (f.plain && (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos)) {
        return InvalidArgumentError(fmt::format("{}: \"{}\" is not a plain integer ({} counts {})", field, text, f.name,
                                                f.dst == &GpuResources::mgpu_core_percent ? "percent of one GPU" : "MiB"));
      }
      StatusOr<int64_t> q = ParseQuantityWhole(text);
      if (!q.ok()) return q.status().WithContext(field);
      value = *q;
    }
    if (value < 0) return InvalidArgumentError(fmt::format("{}: negative quantity {}", field, value));
    if (value > kMaxGpuQuantity) {
      return InvalidArgumentError(fmt::format("{}: {} is above the largest accepted quantity {}", field, value, kMaxGpuQuantity));
    }
    out->*f.dst = value;
  }
  return OkStatus();
}

Status DecodeContainer(const Value& v, std::string_view path, bool init, Container* out) {
  if (!v.IsObject()) return json::WrongType(path, "object", v);
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(v, "name", path, &out->name));
  const Value* resources = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "resources", path, &resources));
  if (resources != nullptr) {
    std::string rpath = fmt::format("{}.resources", path);
    const Value* list = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindObject(*resources, "requests", rpath, &list));
    if (list != nullptr) GPUSCHED_RETURN_IF_ERROR(ReadGpuResources(*list, rpath + ".requests", &out->requests));
    GPUSCHED_RETURN_IF_ERROR(json::FindObject(*resources, "limits", rpath, &list));
    if (list != nullptr) GPUSCHED_RETURN_IF_ERROR(ReadGpuResources(*list, rpath + ".limits", &out->limits));
  }
  if (init) {
    std::string restart;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(v, "restartPolicy", path, &restart));
    out->sidecar = restart == "Always";
  }
  return OkStatus();
}

Status DecodeContainers(const Value& spec, std::string_view key, std::string_view path, bool init,
                        std::vector<Container>* out) {
  const Value* list = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(spec, key, path, &list));
  if (list == nullptr) return OkStatus();
  out->reserve(list->Size());
  for (rapidjson::SizeType i = 0; i < list->Size(); ++i) {
    Container c;
    GPUSCHED_RETURN_IF_ERROR(DecodeContainer((*list)[i], fmt::format("{}.{}[{}]", path, key, i), init, &c));
    out->push_back(std::move(c));
  }
  return OkStatus();
}

// Reads a map[string]string member; calls keep(key) to decide which entries to store.
template <typename Keep>
Status ReadStringMap(const Value& obj, std::string_view key, std::string_view path, Keep keep, AnnotationMap* out) {
  const Value* map = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(obj, key, path, &map));
  if (map == nullptr) return OkStatus();
  for (auto it = map->MemberBegin(); it != map->MemberEnd(); ++it) {
    std::string_view name = json::View(it->name);
    if (!keep(name)) continue;
    if (!it->value.IsString()) return json::WrongType(fmt::format("{}.{}[\"{}\"]", path, key, name), "string", it->value);
    out->emplace(std::string(name), std::string(json::View(it->value)));
  }
  return OkStatus();
}

PodPhase ParsePhase(std::string_view phase) {
  if (phase == "Running") return PodPhase::kRunning;
  if (phase == "Succeeded") return PodPhase::kSucceeded;
  if (phase == "Failed") return PodPhase::kFailed;
  if (phase == "Unknown") return PodPhase::kUnknown;
  return PodPhase::kPending;
}

std::string Compact(const Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

Status AppendObject(const Value& item, std::string_view kind, std::string_view path, ClusterObjects* out) {
  if (kind == "Node") {
    GPUSCHED_ASSIGN_OR_RETURN(Node node, DecodeNode(item, path));
    out->nodes.push_back(std::move(node));
  } else if (kind == "Pod") {
    GPUSCHED_ASSIGN_OR_RETURN(Pod pod, DecodePod(item, path));
    // The ledger is keyed by UID: two pods without one would count as one.
    if (pod.uid.empty()) return InvalidArgumentError(fmt::format("{}.metadata.uid: missing", path));
    out->pods.push_back(std::move(pod));
  } else if (kind == "ResourceSlice") {
    out->resource_slices.push_back(Compact(item));
  } else if (kind == "ResourceClaim") {
    out->resource_claims.push_back(Compact(item));
  } else if (kind == "DeviceClass") {
    out->device_classes.push_back(Compact(item));
  }
  return OkStatus();
}

}  // namespace

StatusOr<Pod> DecodePod(const Value& v, std::string_view path) {
  if (!v.IsObject()) return json::WrongType(path, "object", v);
  Pod pod;
  const Value* meta = nullptr;
  std::string mpath = fmt::format("{}.metadata", path);
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "metadata", path, &meta));
  if (meta != nullptr) {
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "name", mpath, &pod.name));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "namespace", mpath, &pod.namespace_name));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "uid", mpath, &pod.uid));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "resourceVersion", mpath, &pod.resource_version));
    GPUSCHED_RETURN_IF_ERROR(ReadStringMap(*meta, "annotations", mpath, IsTrackedAnnotation, &pod.annotations));
  }
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &spec));
  if (spec != nullptr) {
    std::string spath = fmt::format("{}.spec", path);
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*spec, "nodeName", spath, &pod.node_name));
    GPUSCHED_RETURN_IF_ERROR(DecodeContainers(*spec, "containers", spath, false, &pod.containers));
    GPUSCHED_RETURN_IF_ERROR(DecodeContainers(*spec, "initContainers", spath, true, &pod.init_containers));
    const Value* claims = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindArray(*spec, "resourceClaims", spath, &claims));
    if (claims != nullptr) {
      for (rapidjson::SizeType i = 0; i < claims->Size(); ++i) {
        const Value& c = (*claims)[i];
        std::string cpath = fmt::format("{}.resourceClaims[{}]", spath, i);
        if (!c.IsObject()) return json::WrongType(cpath, "object", c);
        dra::PodClaimRef ref;
        GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "name", cpath, &ref.name));
        GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "resourceClaimName", cpath, &ref.claim_name));
        GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "resourceClaimTemplateName", cpath, &ref.template_name));
        if (ref.name.empty()) return InvalidArgumentError(cpath + ".name: missing");
        if (ref.claim_name.empty() == ref.template_name.empty()) {
          return InvalidArgumentError(
              fmt::format("{}: exactly one of resourceClaimName and resourceClaimTemplateName must be set", cpath));
        }
        pod.resource_claims.push_back(std::move(ref));
      }
    }
  }
  const Value* status = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "status", path, &status));
  if (status != nullptr) {
    std::string phase;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*status, "phase", fmt::format("{}.status", path), &phase));
    pod.phase = ParsePhase(phase);
    const Value* claim_statuses = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindArray(*status, "resourceClaimStatuses", fmt::format("{}.status", path), &claim_statuses));
    for (rapidjson::SizeType i = 0; claim_statuses != nullptr && i < claim_statuses->Size(); ++i) {
      const Value& c = (*claim_statuses)[i];
      std::string cpath = fmt::format("{}.status.resourceClaimStatuses[{}]", path, i);
      if (!c.IsObject()) return json::WrongType(cpath, "object", c);
      std::string name, generated;
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "name", cpath, &name));
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "resourceClaimName", cpath, &generated));
      for (dra::PodClaimRef& ref : pod.resource_claims) {
        if (ref.name == name) ref.generated = generated;
      }
    }
  }
  return pod;
}

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
    out.push_back(std::move(d));
  }
  return out;
}

StatusOr<Node> DecodeNode(const Value& v, std::string_view path) {
  if (!v.IsObject()) return json::WrongType(path, "object", v);
  Node node;
  const Value* meta = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "metadata", path, &meta));
  std::string mpath = fmt::format("{}.metadata", path);
  if (meta != nullptr) GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "name", mpath, &node.name));
  if (node.name.empty()) return InvalidArgumentError(mpath + ".name: missing");

  // From here on, a problem with the node's GPU fields marks the node, not the whole input.
  auto note = [&](const Status& s) {
    if (!s.ok() && node.spec_error.empty()) node.spec_error = s.message();
  };
  note(json::ReadString(*meta, "uid", mpath, &node.uid));
  note(json::ReadString(*meta, "resourceVersion", mpath, &node.resource_version));
  AnnotationMap& labels = node.labels;  // all of them: DRA node selectors match on any label
  note(ReadStringMap(*meta, "labels", mpath, [](std::string_view) { return true; }, &labels));
  if (auto it = labels.find(names::kScheduleModeLabel); it != labels.end()) node.mode_label = it->second;
  if (auto it = labels.find(names::kComputePolicy); it != labels.end()) node.compute_policy_label = it->second;
  if (auto it = labels.find("nvidia.com/gpu.product"); it != labels.end()) node.gpu_product = it->second;

  AnnotationMap annotations;
  note(ReadStringMap(
      *meta, "annotations", mpath,
      [](std::string_view k) { return k == names::kGpuDevicesAnnotation || k == names::kBookingsAnnotation; },
      &annotations));
  if (auto it = annotations.find(names::kBookingsAnnotation); it != annotations.end()) {
    // Unreadable bookings leave what is booked here unknown: the node then takes no GPU pods.
    StatusOr<std::vector<NodeBooking>> bookings = ParseNodeBookings(it->second, node.name);
    if (bookings.ok()) {
      node.bookings = std::move(bookings).value();
    } else {
      note(bookings.status().WithContext(fmt::format("annotation {}", names::kBookingsAnnotation)));
    }
  }
  if (auto it = annotations.find(names::kGpuDevicesAnnotation); it != annotations.end()) {
    StatusOr<std::vector<GpuDevice>> gpus = ParseGpuDevices(it->second);
    if (gpus.ok()) {
      node.published_gpus = std::move(gpus).value();
    } else {
      note(gpus.status().WithContext(fmt::format("annotation {}", names::kGpuDevicesAnnotation)));
    }
  }

  const Value* status = nullptr;
  note(json::FindObject(v, "status", path, &status));
  const Value* allocatable = nullptr;
  if (status != nullptr) note(json::FindObject(*status, "allocatable", fmt::format("{}.status", path), &allocatable));
  if (allocatable != nullptr) {
    GpuResources r;
    note(ReadGpuResources(*allocatable, fmt::format("{}.status.allocatable", path), &r));
    node.allocatable.nvidia_gpus = r.nvidia_gpus.value_or(0);
    node.allocatable.mgpu_core_percent = r.mgpu_core_percent.value_or(0);
    node.allocatable.mgpu_memory_mib = r.mgpu_memory_mib.value_or(0);
  }
  return node;
}

StatusOr<std::vector<std::string>> ObjectsOfKind(std::string_view text, std::string_view kind) {
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(text, &doc));
  if (!doc.IsObject()) return json::WrongType("document", "object", doc);
  std::string doc_kind;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(doc, "kind", "document", &doc_kind));
  std::vector<std::string> out;
  const Value* items = json::Find(doc, "items");
  if (items == nullptr) {
    if (doc_kind == kind) out.push_back(Compact(doc));
    return out;
  }
  if (!items->IsArray()) return json::WrongType("items", "array", *items);
  std::string list_kind = doc_kind.ends_with("List") && doc_kind != "List" ? doc_kind.substr(0, doc_kind.size() - 4) : "";
  for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
    const Value& item = (*items)[i];
    if (!item.IsObject()) return json::WrongType(fmt::format("items[{}]", i), "object", item);
    std::string k = list_kind;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(item, "kind", fmt::format("items[{}]", i), &k));
    if (k == kind) out.push_back(Compact(item));
  }
  return out;
}

Status AppendClusterJson(std::string_view text, ClusterObjects* out) {
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(text, &doc));
  if (!doc.IsObject()) return json::WrongType("document", "object", doc);
  std::string kind;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(doc, "kind", "document", &kind));
  const Value* items = json::Find(doc, "items");
  if (kind.ends_with("List") || (kind.empty() && items != nullptr)) {
    if (items == nullptr) return OkStatus();
    if (!items->IsArray()) return json::WrongType("items", "array", *items);
    std::string item_kind = kind == "List" ? "" : kind.substr(0, kind.size() - 4);
    for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
      const Value& item = (*items)[i];
      std::string path = fmt::format("items[{}]", i);
      if (!item.IsObject()) return json::WrongType(path, "object", item);
      std::string k = item_kind;
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(item, "kind", path, &k));
      if (k.empty()) return InvalidArgumentError(path + ".kind: missing");
      GPUSCHED_RETURN_IF_ERROR(AppendObject(item, k, fmt::format("{} ({})", path, k), out));
    }
    return OkStatus();
  }
  if (kind.empty()) return InvalidArgumentError("document.kind: missing");
  return AppendObject(doc, kind, kind, out);
}

}  // namespace gpusched::k8s
