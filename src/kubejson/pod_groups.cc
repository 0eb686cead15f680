// File: pod_groups.cc
//
// The group objects of scheduling.k8s.io (PodGroup, Workload) and scheduler-plugins'
// Coscheduling PodGroup, and a pod's reference to its group.
#include "gpusched/kubejson/pod_groups.h"

#include <fmt/format.h>

#include "gpusched/model/names.h"

namespace gpusched::kubejson {
namespace {

using rapidjson::Value;

// A PodGroupSchedulingPolicy (a union): `basic: {}` is no gang (0), `gang: {minCount}` its count.
Status ReadPolicy(const Value& parent, std::string_view key, const std::string& path, int32_t* min_count) {
  const Value* policy = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(parent, key, path, &policy));
  std::string ppath = fmt::format("{}.{}", path, key);
  if (policy == nullptr) return InvalidArgumentError(ppath + ": missing (want basic or gang)");
  const Value* gang = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(*policy, "gang", ppath, &gang));
  if (gang == nullptr) {
    if (json::Find(*policy, "basic") != nullptr) return OkStatus();
    return InvalidArgumentError(ppath + ": neither basic nor gang");
  }
  int32_t count = 0;
  GPUSCHED_RETURN_IF_ERROR(json::ReadCount(*gang, "minCount", ppath + ".gang", &count));
  if (count < 1) return InvalidArgumentError(fmt::format("{}.gang.minCount: {} is not a positive count", ppath, count));
  *min_count = count;
  return OkStatus();
}

// spec.schedulingConstraints.topology[0].key, "" when absent.
Status ReadTopologyKey(const Value& spec, const std::string& path, std::string* out) {
  const Value* constraints = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(spec, "schedulingConstraints", path, &constraints));
  if (constraints == nullptr) return OkStatus();
  const Value* topology = nullptr;
  std::string cpath = path + ".schedulingConstraints";
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(*constraints, "topology", cpath, &topology));
  if (topology == nullptr || topology->Empty()) return OkStatus();
  const Value& first = (*topology)[0];
  std::string tpath = cpath + ".topology[0]";
  if (!first.IsObject()) return json::WrongType(tpath, "object", first);
  return json::ReadString(first, "key", tpath, out);
}

Status DecodeSpec(const Value& spec, const std::string& path, PodGroup* g, std::vector<PodGroup>* out) {
  switch (g->api) {
    case GroupApi::kPodGroup:
      GPUSCHED_RETURN_IF_ERROR(ReadPolicy(spec, "schedulingPolicy", path, &g->min_count));
      GPUSCHED_RETURN_IF_ERROR(ReadTopologyKey(spec, path, &g->topology_key));
      out->push_back(*g);
      return OkStatus();
    case GroupApi::kCoscheduling:
      GPUSCHED_RETURN_IF_ERROR(json::ReadCount(spec, "minMember", path, &g->min_count));
      GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(spec, "scheduleTimeoutSeconds", path, &g->schedule_timeout_s));
      out->push_back(*g);
      return OkStatus();
    case GroupApi::kWorkload:
      break;
  }
  const Value* groups = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindArray(spec, "podGroups", path, &groups));
  for (rapidjson::SizeType i = 0; groups != nullptr && i < groups->Size(); ++i) {
    const Value& entry = (*groups)[i];
    std::string epath = fmt::format("{}.podGroups[{}]", path, i);
    if (!entry.IsObject()) return json::WrongType(epath, "object", entry);
    PodGroup member = *g;
    std::string name;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(entry, "name", epath, &name));
    if (name.empty()) return InvalidArgumentError(epath + ".name: missing");
    member.name = fmt::format("{}/{}", g->name, name);
    GPUSCHED_RETURN_IF_ERROR(ReadPolicy(entry, "policy", epath, &member.min_count));
    out->push_back(std::move(member));
  }
  return OkStatus();
}

}  // namespace

std::optional<GroupApi> GroupApiOf(std::string_view kind, std::string_view api_version) {
  if (kind == "PodGroup" && (api_version == "scheduling.k8s.io/v1beta1" || api_version == "scheduling.k8s.io/v1alpha2")) {
    return GroupApi::kPodGroup;
  }
  if (kind == "Workload" && api_version == "scheduling.k8s.io/v1alpha1") return GroupApi::kWorkload;
  if (kind == "PodGroup" && api_version == "scheduling.x-k8s.io/v1alpha1") return GroupApi::kCoscheduling;
  return std::nullopt;
}

StatusOr<std::vector<PodGroup>> DecodePodGroups(const Value& v, GroupApi api, std::string_view path) {
  if (!v.IsObject()) return json::WrongType(path, "object", v);
  PodGroup g{.api = api};
  const Value* meta = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "metadata", path, &meta));
  std::string mpath = fmt::format("{}.metadata", path);
  if (meta == nullptr) return InvalidArgumentError(mpath + ": missing");
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "namespace", mpath, &g.namespace_name));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "name", mpath, &g.name));
  if (g.name.empty()) return InvalidArgumentError(mpath + ".name: missing");
  const Value* annotations = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(*meta, "annotations", mpath, &annotations));
  if (annotations != nullptr) {
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*annotations, names::kTopologyRequired, mpath + ".annotations", &g.required_topology));
  }
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(v, "spec", path, &spec));
  std::string spath = fmt::format("{}.spec", path);
  if (spec == nullptr) return InvalidArgumentError(spath + ": missing");
  std::vector<PodGroup> out;
  GPUSCHED_RETURN_IF_ERROR(DecodeSpec(*spec, spath, &g, &out));
  return out;
}

Status ReadPodGroupRef(const Value& spec, const Labels& labels, const std::string& path, std::optional<PodGroupRef>* out) {
  const Value* group = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(spec, "schedulingGroup", path, &group));
  if (group != nullptr) {
    PodGroupRef ref{.api = GroupApi::kPodGroup};
    std::string gpath = path + ".schedulingGroup";
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*group, "podGroupName", gpath, &ref.name));
    if (ref.name.empty()) return InvalidArgumentError(gpath + ".podGroupName: missing");
    *out = std::move(ref);
    return OkStatus();
  }
  const Value* workload = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(spec, "workloadRef", path, &workload));
  if (workload != nullptr) {
    std::string wpath = path + ".workloadRef";
    std::string name, pod_group, replica;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*workload, "name", wpath, &name));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*workload, "podGroup", wpath, &pod_group));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*workload, "podGroupReplicaKey", wpath, &replica));
    if (name.empty()) return InvalidArgumentError(wpath + ".name: missing");
    if (pod_group.empty()) return InvalidArgumentError(wpath + ".podGroup: missing");
    *out = PodGroupRef{.api = GroupApi::kWorkload, .name = fmt::format("{}/{}", name, pod_group), .replica = std::move(replica)};
    return OkStatus();
  }
  if (auto label = labels.find(kCoschedulingLabel); label != labels.end() && !label->second.empty()) {
    *out = PodGroupRef{.api = GroupApi::kCoscheduling, .name = label->second};
  }
  return OkStatus();
}

}  // namespace gpusched::kubejson
