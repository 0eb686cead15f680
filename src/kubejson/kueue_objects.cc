// File: kueue_objects.cc
//
// kueue_objects.h: Workload, ResourceFlavor, AdmissionCheck and ClusterQueue JSON into the model.
#include "gpusched/kubejson/kueue_objects.h"

#include <fmt/format.h>

#include "gpusched/kubejson/objects.h"
#include "gpusched/kubejson/pod_constraints.h"

namespace gpusched::kubejson {
namespace {

using rapidjson::Value;

struct Meta {
  std::string name, namespace_name, uid, resource_version, api_version;
};

// metadata.name (required), namespace, uid, resourceVersion and apiVersion of object `v`.
Status ReadMeta(const Value& v, const std::string& path, Meta* out) {
  if (!v.IsObject()) return json::WrongType(path, "object", v);
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(v, "apiVersion", path, &out->api_version));
  const Value* meta = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "metadata", path, &meta));
  if (meta == nullptr) return InvalidArgumentError(path + ".metadata: missing");
  std::string mpath = path + ".metadata";
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "name", mpath, &out->name));
  if (out->name.empty()) return InvalidArgumentError(mpath + ".name: missing");
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "namespace", mpath, &out->namespace_name));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "uid", mpath, &out->uid));
  return json::ReadString(*meta, "resourceVersion", mpath, &out->resource_version);
}

// For each element of the array obj[key] (absent or null: none), read(element, its path).
template <typename Read>
Status ForEachItem(const Value& obj, std::string_view key, const std::string& path, Read read) {
  const Value* items = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(obj, key, path, &items));
  for (rapidjson::SizeType i = 0; items != nullptr && i < items->Size(); ++i) {
    std::string ipath = fmt::format("{}.{}[{}]", path, key, i);
    if (!(*items)[i].IsObject()) return json::WrongType(ipath, "object", (*items)[i]);
    GPUSCHED_RETURN_IF_ERROR(read((*items)[i], ipath));
  }
  return OkStatus();
}

// A count at obj[key]: a non-negative 32-bit integer (absent: *out unchanged).
Status ReadCount(const Value& obj, std::string_view key, const std::string& path, int32_t* out) {
  int64_t n = *out;
  GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(obj, key, path, &n));
  if (n < 0 || n > INT32_MAX) return InvalidArgumentError(fmt::format("{}.{}: {} is not a 32-bit count", path, key, n));
  *out = static_cast<int32_t>(n);
  return OkStatus();
}

Status ReadOptionalCount(const Value& obj, std::string_view key, const std::string& path, std::optional<int32_t>* out) {
  const Value* v = json::Find(obj, key);
  if (v == nullptr || v->IsNull()) return OkStatus();
  int32_t n = 0;
  GPUSCHED_RETURN_IF_ERROR(ReadCount(obj, key, path, &n));
  *out = n;
  return OkStatus();
}

// The pod set's template as a Pod object of namespace `ns` (metadata kept, name and UID
// placeholders for the check to fill), decoded as any pod is.
StatusOr<Pod> TemplatePod(const Value& tmpl, const std::string& ns, const std::string& path) {
  rapidjson::Document pod(rapidjson::kObjectType);
  auto& alloc = pod.GetAllocator();
  Value meta(rapidjson::kObjectType);
  const Value* given = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(tmpl, "metadata", path, &given));
  if (given != nullptr) meta.CopyFrom(*given, alloc);
  for (const char* key : {"name", "namespace", "uid"}) meta.RemoveMember(key);
  meta.AddMember("name", "pod-set-template", alloc);
  meta.AddMember("namespace", Value(ns.c_str(), alloc), alloc);
  meta.AddMember("uid", "pod-set-template", alloc);
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(tmpl, "spec", path, &spec));
  if (spec == nullptr) return InvalidArgumentError(path + ".spec: missing");
  Value spec_copy;
  spec_copy.CopyFrom(*spec, alloc);
  pod.AddMember("apiVersion", "v1", alloc);
  pod.AddMember("kind", "Pod", alloc);
  pod.AddMember("metadata", meta, alloc);
  pod.AddMember("spec", spec_copy, alloc);
  return DecodePod(pod, path);
}

Status ReadPodSets(const Value& spec, const std::string& path, kueue::Workload* w) {
  return ForEachItem(spec, "podSets", path, [&](const Value& s, const std::string& spath) {
    kueue::PodSet set;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(s, "name", spath, &set.name));
    if (set.name.empty()) set.name = "main";  // Kueue's default
    GPUSCHED_RETURN_IF_ERROR(ReadCount(s, "count", spath, &set.count));
    GPUSCHED_RETURN_IF_ERROR(ReadOptionalCount(s, "minCount", spath, &set.min_count));
    const Value* tmpl = nullptr;
    GPUSCHED_RETURN_IF_ERROR(json::FindObject(s, "template", spath, &tmpl));
    if (tmpl == nullptr) return InvalidArgumentError(spath + ".template: missing");
    StatusOr<Pod> pod = TemplatePod(*tmpl, w->namespace_name, spath + ".template");
    if (!pod.ok()) return pod.status();
    set.prototype = *std::move(pod);
    w->pod_sets.push_back(std::move(set));
    return OkStatus();
  });
}

Status ReadConditions(const Value& status, const std::string& path, kueue::Workload* w) {
  return ForEachItem(status, "conditions", path, [&](const Value& c, const std::string& cpath) {
    std::string type, value;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "type", cpath, &type));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "status", cpath, &value));
    bool on = value == "True";
    if (type == "QuotaReserved") w->quota_reserved = on;
    else if (type == "Admitted") w->admitted = on;
    else if (type == "Finished") w->finished = on;
    else if (type == "Evicted") w->evicted = on;
    return OkStatus();
  });
}

Status ReadAdmission(const Value& status, const std::string& path, kueue::Workload* w) {
  const Value* admission = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(status, "admission", path, &admission));
  if (admission == nullptr) return OkStatus();
  std::string apath = path + ".admission";
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*admission, "clusterQueue", apath, &w->cluster_queue));
  return ForEachItem(*admission, "podSetAssignments", apath, [&](const Value& a, const std::string& ppath) {
    kueue::PodSetAssignment out;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(a, "name", ppath, &out.name));
    GPUSCHED_RETURN_IF_ERROR(ReadOptionalCount(a, "count", ppath, &out.count));
    Labels flavors;
    GPUSCHED_RETURN_IF_ERROR(DecodeStringMap(a, "flavors", ppath, &flavors));
    out.flavors.insert(flavors.begin(), flavors.end());
    const Value* topology = json::Find(a, "topologyAssignment");
    out.topology_assigned = topology != nullptr && !topology->IsNull();
    w->assignments.push_back(std::move(out));
    return OkStatus();
  });
}

StatusOr<kueue::CheckState> ParseCheckState(const std::string& text, const std::string& path) {
  for (kueue::CheckState s : {kueue::CheckState::kPending, kueue::CheckState::kReady, kueue::CheckState::kRetry,
                              kueue::CheckState::kRejected}) {
    if (text == kueue::CheckStateName(s)) return s;
  }
  return InvalidArgumentError(fmt::format("{}: \"{}\" is not a check state (Pending, Ready, Retry, Rejected)", path, text));
}

Status ReadChecks(const Value& status, const std::string& path, kueue::Workload* w) {
  return ForEachItem(status, "admissionChecks", path, [&](const Value& c, const std::string& cpath) {
    kueue::CheckStatus check;
    std::string state;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "name", cpath, &check.name));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "state", cpath, &state));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "message", cpath, &check.message));
    StatusOr<kueue::CheckState> parsed = ParseCheckState(state, cpath + ".state");
    if (!parsed.ok()) return parsed.status();
    check.state = *parsed;
    w->checks.push_back(std::move(check));
    return OkStatus();
  });
}

}  // namespace

bool IsKueueApiVersion(std::string_view api_version) {
  return api_version == "kueue.x-k8s.io/v1beta2" || api_version == "kueue.x-k8s.io/v1beta1";
}

StatusOr<kueue::Workload> DecodeKueueWorkload(const Value& v, std::string_view path_view) {
  std::string path(path_view);
  Meta meta;
  GPUSCHED_RETURN_IF_ERROR(ReadMeta(v, path, &meta));
  if (meta.namespace_name.empty()) return InvalidArgumentError(path + ".metadata.namespace: missing");
  kueue::Workload w{.namespace_name = meta.namespace_name, .name = meta.name, .uid = meta.uid,
                    .resource_version = meta.resource_version, .api_version = meta.api_version};
  path += fmt::format(" {}/{}", w.namespace_name, w.name);
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &spec));
  if (spec == nullptr) return InvalidArgumentError(path + ".spec: missing");
  std::string spath = path + ".spec";
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*spec, "queueName", spath, &w.queue_name));
  int64_t priority = 0;
  GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(*spec, "priority", spath, &priority));
  if (priority < INT32_MIN || priority > INT32_MAX) return InvalidArgumentError(fmt::format("{}.priority: {} is not a 32-bit number", spath, priority));
  w.priority = static_cast<int32_t>(priority);
  GPUSCHED_RETURN_IF_ERROR(json::ReadBool(*spec, "active", spath, &w.active));
  GPUSCHED_RETURN_IF_ERROR(ReadPodSets(*spec, spath, &w));
  if (w.pod_sets.empty()) return InvalidArgumentError(spath + ".podSets: none (Kueue requires 1 to 8)");
  const Value* status = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "status", path, &status));
  if (status == nullptr) return w;
  std::string tpath = path + ".status";
  GPUSCHED_RETURN_IF_ERROR(ReadConditions(*status, tpath, &w));
  GPUSCHED_RETURN_IF_ERROR(ReadAdmission(*status, tpath, &w));
  GPUSCHED_RETURN_IF_ERROR(ReadChecks(*status, tpath, &w));
  return w;
}

StatusOr<kueue::ResourceFlavor> DecodeResourceFlavor(const Value& v, std::string_view path_view) {
  std::string path(path_view);
  Meta meta;
  GPUSCHED_RETURN_IF_ERROR(ReadMeta(v, path, &meta));
  kueue::ResourceFlavor f{.name = meta.name};
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &spec));
  if (spec == nullptr) return f;
  std::string spath = fmt::format("{} {}.spec", path, f.name);
  GPUSCHED_RETURN_IF_ERROR(DecodeStringMap(*spec, "nodeLabels", spath, &f.node_labels));
  GPUSCHED_RETURN_IF_ERROR(DecodeTolerations(*spec, spath, &f.tolerations));
  return f;
}

StatusOr<kueue::AdmissionCheck> DecodeAdmissionCheck(const Value& v, std::string_view path_view) {
  std::string path(path_view);
  Meta meta;
  GPUSCHED_RETURN_IF_ERROR(ReadMeta(v, path, &meta));
  kueue::AdmissionCheck c{.name = meta.name};
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &spec));
  if (spec == nullptr) return InvalidArgumentError(fmt::format("{} {}.spec: missing", path, c.name));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*spec, "controllerName", fmt::format("{} {}.spec", path, c.name), &c.controller_name));
  const Value* status = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "status", path, &status));
  if (status == nullptr) return c;
  GPUSCHED_RETURN_IF_ERROR(ForEachItem(*status, "conditions", fmt::format("{} {}.status", path, c.name),
                                       [&](const Value& cond, const std::string& cpath) {
                                         std::string type, value;
                                         GPUSCHED_RETURN_IF_ERROR(json::ReadString(cond, "type", cpath, &type));
                                         GPUSCHED_RETURN_IF_ERROR(json::ReadString(cond, "status", cpath, &value));
                                         if (type == "Active") c.active = value == "True";
                                         return OkStatus();
                                       }));
  return c;
}

StatusOr<kueue::ClusterQueue> DecodeClusterQueue(const Value& v, std::string_view path_view) {
  std::string path(path_view);
  Meta meta;
  GPUSCHED_RETURN_IF_ERROR(ReadMeta(v, path, &meta));
  kueue::ClusterQueue q{.name = meta.name};
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &spec));
  if (spec == nullptr) return q;
  std::string spath = fmt::format("{} {}.spec", path, q.name);
  std::vector<std::string> names;
  GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(*spec, "admissionChecks", spath, &names));
  for (std::string& n : names) q.checks.push_back(kueue::QueueCheck{.name = std::move(n)});
  const Value* strategy = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(*spec, "admissionChecksStrategy", spath, &strategy));
  if (strategy == nullptr) return q;
  if (!names.empty()) return InvalidArgumentError(spath + ": admissionChecks and admissionChecksStrategy are both set (Kueue allows one)");
  GPUSCHED_RETURN_IF_ERROR(ForEachItem(*strategy, "admissionChecks", spath + ".admissionChecksStrategy",
                                       [&](const Value& c, const std::string& cpath) {
                                         kueue::QueueCheck check;
                                         GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "name", cpath, &check.name));
                                         GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(c, "onFlavors", cpath, &check.on_flavors));
                                         q.checks.push_back(std::move(check));
                                         return OkStatus();
                                       }));
  return q;
}

}  // namespace gpusched::kubejson
