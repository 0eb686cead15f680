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

// An object of a cluster-scoped kind: its metadata (ReadMeta), its spec (null when absent) and
// the path errors about the spec name ("<path> <name>.spec").
struct Named {
  Meta meta;
  const Value* spec = nullptr;
  std::string spec_path;
};
Status ReadNamed(const Value& v, const std::string& path, Named* out) {
  GPUSCHED_RETURN_IF_ERROR(ReadMeta(v, path, &out->meta));
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &out->spec));
  out->spec_path = fmt::format("{} {}.spec", path, out->meta.name);
  return OkStatus();
}

Status ReadOptionalCount(const Value& obj, std::string_view key, const std::string& path, std::optional<int32_t>* out) {
  const Value* v = json::Find(obj, key);
  if (v == nullptr || v->IsNull()) return OkStatus();
  int32_t n = 0;
  GPUSCHED_RETURN_IF_ERROR(json::ReadCount(obj, key, path, &n));
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
  return json::ForEachObject(spec, "podSets", path, [&](const Value& s, const std::string& spath) {
    kueue::PodSet set;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(s, "name", spath, &set.name));
    if (set.name.empty()) set.name = "main";  // Kueue's default
    GPUSCHED_RETURN_IF_ERROR(json::ReadCount(s, "count", spath, &set.count));
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
  return json::ForEachObject(status, "conditions", path, [&](const Value& c, const std::string& cpath) {
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

// One level's values in a v1beta2 slice of `count` domains: "universal" (one for all), or
// "individual" {prefix, suffix, roots} (prefix + root + suffix each); Kueue 0.15's flat spelling
// (universalValue, or prefix/suffix/roots) too.
Status ReadSliceValues(const Value& level, int32_t count, const std::string& path, std::vector<std::string>* out) {
  if (!level.IsObject()) return json::WrongType(path, "object", level);
  std::string universal;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(level, json::Find(level, "universal") ? "universal" : "universalValue", path, &universal));
  const Value* individual = json::Find(level, "individual");
  const Value& parts = individual != nullptr && individual->IsObject() ? *individual : level;
  std::vector<std::string> roots;
  std::string prefix, suffix;
  GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(parts, "roots", path, &roots));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(parts, "prefix", path, &prefix));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(parts, "suffix", path, &suffix));
  if (roots.empty()) {
    if (universal.empty()) return InvalidArgumentError(path + ": neither universal nor individual values");
    out->assign(static_cast<size_t>(count), universal);
    return OkStatus();
  }
  if (roots.size() != static_cast<size_t>(count)) {
    return InvalidArgumentError(fmt::format("{}.roots: {} values for domainCount {}", path, roots.size(), count));
  }
  for (const std::string& r : roots) out->push_back(prefix + r + suffix);
  return OkStatus();
}

// A v1beta2 slice's pod counts: podCounts {universal | individual} (Kueue 0.15: universalPodCount,
// or podCounts as a list).
Status ReadSliceCounts(const Value& slice, int32_t count, const std::string& path, std::vector<int32_t>* out) {
  const Value* counts = json::Find(slice, "podCounts");
  std::optional<int32_t> universal;
  GPUSCHED_RETURN_IF_ERROR(ReadOptionalCount(slice, "universalPodCount", path, &universal));
  if (counts != nullptr && counts->IsObject()) {
    GPUSCHED_RETURN_IF_ERROR(ReadOptionalCount(*counts, "universal", path + ".podCounts", &universal));
    counts = json::Find(*counts, "individual");
  }
  if (counts != nullptr && counts->IsArray()) {
    if (counts->Size() != static_cast<rapidjson::SizeType>(count)) {
      return InvalidArgumentError(fmt::format("{}.podCounts: {} counts for domainCount {}", path, counts->Size(), count));
    }
    for (const Value& c : counts->GetArray()) {
      if (!c.IsInt() || c.GetInt() < 0) return json::WrongType(path + ".podCounts[]", "a count", c);
      out->push_back(c.GetInt());
    }
    return OkStatus();
  }
  if (!universal) return InvalidArgumentError(path + ": no pod counts");
  out->assign(static_cast<size_t>(count), *universal);
  return OkStatus();
}

// status.admission.podSetAssignments[].topologyAssignment: levels, and domains (v1beta1) or
// slices (v1beta2), as one domain per entry.
Status ReadTopology(const Value& t, const std::string& path, std::vector<kueue::TopologyDomain>* out) {
  std::vector<std::string> levels;
  GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(t, "levels", path, &levels));
  auto add = [&](const std::vector<std::string>& values, int32_t count, const std::string& dpath) {
    if (values.size() != levels.size()) {
      return InvalidArgumentError(fmt::format("{}: {} values for {} levels", dpath, values.size(), levels.size()));
    }
    kueue::TopologyDomain d{.count = count};
    for (size_t i = 0; i < levels.size(); ++i) d.node_labels[levels[i]] = values[i];
    out->push_back(std::move(d));
    return OkStatus();
  };
  GPUSCHED_RETURN_IF_ERROR(json::ForEachObject(t, "domains", path, [&](const Value& d, const std::string& dpath) {
    std::vector<std::string> values;
    int32_t count = 0;
    GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(d, "values", dpath, &values));
    GPUSCHED_RETURN_IF_ERROR(json::ReadCount(d, "count", dpath, &count));
    return add(values, count, dpath);
  }));
  return json::ForEachObject(t, "slices", path, [&](const Value& slice, const std::string& spath) {
    int32_t n = 0;
    GPUSCHED_RETURN_IF_ERROR(json::ReadCount(slice, "domainCount", spath, &n));
    std::vector<std::vector<std::string>> per_level;
    GPUSCHED_RETURN_IF_ERROR(json::ForEachObject(slice, "valuesPerLevel", spath, [&](const Value& level, const std::string& lpath) {
      return ReadSliceValues(level, n, lpath, &per_level.emplace_back());
    }));
    std::vector<int32_t> counts;
    GPUSCHED_RETURN_IF_ERROR(ReadSliceCounts(slice, n, spath, &counts));
    for (int32_t i = 0; i < n; ++i) {
      std::vector<std::string> values;
      for (const std::vector<std::string>& level : per_level) values.push_back(level[static_cast<size_t>(i)]);
      GPUSCHED_RETURN_IF_ERROR(add(values, counts[static_cast<size_t>(i)], fmt::format("{} domain {}", spath, i)));
    }
    return OkStatus();
  });
}

Status ReadAdmission(const Value& status, const std::string& path, kueue::Workload* w) {
  const Value* admission = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(status, "admission", path, &admission));
  if (admission == nullptr) return OkStatus();
  std::string apath = path + ".admission";
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*admission, "clusterQueue", apath, &w->cluster_queue));
  return json::ForEachObject(*admission, "podSetAssignments", apath, [&](const Value& a, const std::string& ppath) {
    kueue::PodSetAssignment out;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(a, "name", ppath, &out.name));
    if (out.name.empty()) out.name = "main";  // Kueue's default, as for pod sets
    GPUSCHED_RETURN_IF_ERROR(ReadOptionalCount(a, "count", ppath, &out.count));
    Labels flavors;
    GPUSCHED_RETURN_IF_ERROR(DecodeStringMap(a, "flavors", ppath, &flavors));
    out.flavors.insert(flavors.begin(), flavors.end());
    const Value* topology = json::Find(a, "topologyAssignment");
    out.topology_assigned = topology != nullptr && !topology->IsNull();
    if (out.topology_assigned) GPUSCHED_RETURN_IF_ERROR(ReadTopology(*topology, ppath + ".topologyAssignment", &out.topology));
    std::string delayed;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(a, "delayedTopologyRequest", ppath, &delayed));
    out.topology_delayed = delayed == "Pending";
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
  return json::ForEachObject(status, "admissionChecks", path, [&](const Value& c, const std::string& cpath) {
    kueue::CheckStatus check;
    std::string state;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "name", cpath, &check.name));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "state", cpath, &state));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "message", cpath, &check.message));
    StatusOr<kueue::CheckState> parsed = ParseCheckState(state, cpath + ".state");
    if (!parsed.ok()) return parsed.status();
    check.state = *parsed;
    GPUSCHED_RETURN_IF_ERROR(json::ForEachObject(c, "podSetUpdates", cpath, [&](const Value& u, const std::string& upath) {
      kueue::CheckPodSetUpdate update;
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(u, "name", upath, &update.name));
      GPUSCHED_RETURN_IF_ERROR(DecodeStringMap(u, "nodeSelector", upath, &update.node_selector));
      GPUSCHED_RETURN_IF_ERROR(DecodeTolerations(u, upath, &update.tolerations));
      check.updates.push_back(std::move(update));
      return OkStatus();
    }));
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

StatusOr<kueue::ResourceFlavor> DecodeResourceFlavor(const Value& v, std::string_view path) {
  Named o;
  GPUSCHED_RETURN_IF_ERROR(ReadNamed(v, std::string(path), &o));
  kueue::ResourceFlavor f{.name = o.meta.name};
  if (o.spec == nullptr) return f;
  GPUSCHED_RETURN_IF_ERROR(DecodeStringMap(*o.spec, "nodeLabels", o.spec_path, &f.node_labels));
  GPUSCHED_RETURN_IF_ERROR(DecodeTolerations(*o.spec, o.spec_path, &f.tolerations));
  return f;
}

StatusOr<kueue::AdmissionCheck> DecodeAdmissionCheck(const Value& v, std::string_view path_view) {
  std::string path(path_view);
  Named o;
  GPUSCHED_RETURN_IF_ERROR(ReadNamed(v, path, &o));
  kueue::AdmissionCheck c{.name = o.meta.name};
  if (o.spec == nullptr) return InvalidArgumentError(o.spec_path + ": missing");
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*o.spec, "controllerName", o.spec_path, &c.controller_name));
  const Value* status = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "status", path, &status));
  if (status == nullptr) return c;
  GPUSCHED_RETURN_IF_ERROR(json::ForEachObject(*status, "conditions", fmt::format("{} {}.status", path, c.name),
                                       [&](const Value& cond, const std::string& cpath) {
                                         std::string type, value;
                                         GPUSCHED_RETURN_IF_ERROR(json::ReadString(cond, "type", cpath, &type));
                                         GPUSCHED_RETURN_IF_ERROR(json::ReadString(cond, "status", cpath, &value));
                                         if (type == "Active") c.active = value == "True";
                                         return OkStatus();
                                       }));
  return c;
}

StatusOr<kueue::ClusterQueue> DecodeClusterQueue(const Value& v, std::string_view path) {
  Named o;
  GPUSCHED_RETURN_IF_ERROR(ReadNamed(v, std::string(path), &o));
  kueue::ClusterQueue q{.name = o.meta.name};
  if (o.spec == nullptr) return q;
  const Value* spec = o.spec;
  const std::string& spath = o.spec_path;
  std::vector<std::string> names;
  GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(*spec, "admissionChecks", spath, &names));
  for (std::string& n : names) q.checks.push_back(kueue::QueueCheck{.name = std::move(n)});
  const Value* strategy = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(*spec, "admissionChecksStrategy", spath, &strategy));
  if (strategy == nullptr) return q;
  if (!names.empty()) return InvalidArgumentError(spath + ": admissionChecks and admissionChecksStrategy are both set (Kueue allows one)");
  GPUSCHED_RETURN_IF_ERROR(json::ForEachObject(*strategy, "admissionChecks", spath + ".admissionChecksStrategy",
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
