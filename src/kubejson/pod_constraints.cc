// File: pod_constraints.cc
//
// The scheduling constraints of a pod and a node from Kubernetes JSON: nodeSelector, node affinity,
// pod affinity and anti-affinity terms, tolerations, topology spread, host ports and the volumes
// filters read; a node's unschedulable flag, taints and Ready condition.
#include "gpusched/kubejson/pod_constraints.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "gpusched/kubejson/objects.h"

namespace gpusched::kubejson {
namespace {

using rapidjson::Value;

Status ReadRequirements(const Value& term, std::string_view key, std::string_view path, std::vector<NodeRequirement>* out) {
  return json::ForEachObject(term, key, path, [&](const Value& e, const std::string& epath) {
    NodeRequirement r;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(e, "key", epath, &r.key));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(e, "operator", epath, &r.op));
    GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(e, "values", epath, &r.values));
    out->push_back(std::move(r));
    return OkStatus();
  });
}

Status ReadNodeAffinity(const Value& affinity, const std::string& path, PodConstraints* out) {
  const Value* node = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(affinity, "nodeAffinity", path, &node));
  if (node == nullptr) return OkStatus();
  std::string npath = path + ".nodeAffinity";
  const Value* required = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(*node, "requiredDuringSchedulingIgnoredDuringExecution", npath, &required));
  if (required == nullptr) return OkStatus();
  std::string rpath = npath + ".requiredDuringSchedulingIgnoredDuringExecution";
  out->node_affinity.emplace();
  return json::ForEachObject(*required, "nodeSelectorTerms", rpath, [&](const Value& t, const std::string& tpath) {
    NodeTerm term;
    GPUSCHED_RETURN_IF_ERROR(ReadRequirements(t, "matchExpressions", tpath, &term.expressions));
    GPUSCHED_RETURN_IF_ERROR(ReadRequirements(t, "matchFields", tpath, &term.fields));
    out->node_affinity->push_back(std::move(term));
    return OkStatus();
  });
}

// A label selector member `key` of `obj`, if present and not null.
Status ReadOptionalSelector(const Value& obj, std::string_view key, const std::string& path, std::optional<LabelSelector>* out) {
  const Value* selector = json::Find(obj, key);
  if (selector == nullptr || selector->IsNull()) return OkStatus();
  std::string spath = fmt::format("{}.{}", path, key);
  if (!selector->IsObject()) return json::WrongType(spath, "object", *selector);
  out->emplace();
  return ReadLabelSelector(*selector, spath, &**out);
}

Status ReadPodTerms(const Value& affinity, std::string_view kind, const std::string& path, std::vector<PodTerm>* out) {
  const Value* relation = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(affinity, kind, path, &relation));
  if (relation == nullptr) return OkStatus();
  return json::ForEachObject(*relation, "requiredDuringSchedulingIgnoredDuringExecution", fmt::format("{}.{}", path, kind),
                 [&](const Value& t, const std::string& tpath) {
                   PodTerm term;
                   GPUSCHED_RETURN_IF_ERROR(ReadOptionalSelector(t, "labelSelector", tpath, &term.selector));
                   GPUSCHED_RETURN_IF_ERROR(json::ReadStrings(t, "namespaces", tpath, &term.namespaces));
                   const Value* ns = json::Find(t, "namespaceSelector");
                   term.namespace_selector = ns != nullptr && !ns->IsNull();
                   GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "topologyKey", tpath, &term.topology_key));
                   out->push_back(std::move(term));
                   return OkStatus();
                 });
}

Status ReadHostPorts(const Value& spec, std::string_view key, const std::string& path, std::vector<HostPort>* out) {
  return json::ForEachObject(spec, key, path, [&](const Value& c, const std::string& cpath) {
    return json::ForEachObject(c, "ports", cpath, [&](const Value& p, const std::string& ppath) {
      int64_t host_port = 0;
      GPUSCHED_RETURN_IF_ERROR(json::ReadInt64(p, "hostPort", ppath, &host_port));
      if (host_port <= 0) return OkStatus();
      HostPort hp{.port = static_cast<int32_t>(host_port)};
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(p, "protocol", ppath, &hp.protocol));
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(p, "hostIP", ppath, &hp.host_ip));
      if (hp.protocol.empty()) hp.protocol = "TCP";
      out->push_back(std::move(hp));
      return OkStatus();
    });
  });
}

// True if a volume entry is of a kind some kube-scheduler filter reads (pod_constraints.h).
bool FilterReads(const Value& volume) {
  static constexpr std::array<std::string_view, 7> kUnread = {"name",     "configMap", "secret",  "projected",
                                                              "downwardAPI", "emptyDir", "hostPath"};
  for (auto it = volume.MemberBegin(); it != volume.MemberEnd(); ++it) {
    std::string_view key = json::View(it->name);
    if (std::find(kUnread.begin(), kUnread.end(), key) == kUnread.end()) return true;
  }
  return false;
}

}  // namespace

Status DecodeStringMap(const Value& obj, std::string_view key, const std::string& path, Labels* out) {
  const Value* map = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(obj, key, path, &map));
  for (auto it = map != nullptr ? map->MemberBegin() : obj.MemberEnd(); map != nullptr && it != map->MemberEnd(); ++it) {
    if (!it->value.IsString()) return json::WrongType(fmt::format("{}.{}[\"{}\"]", path, key, json::View(it->name)), "string", it->value);
    out->insert_or_assign(std::string(json::View(it->name)), std::string(json::View(it->value)));
  }
  return OkStatus();
}

Status DecodeTolerations(const Value& obj, const std::string& path, std::vector<Toleration>* out) {
  return json::ForEachObject(obj, "tolerations", path, [&](const Value& t, const std::string& tpath) {
    Toleration tol;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "key", tpath, &tol.key));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "operator", tpath, &tol.op));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "value", tpath, &tol.value));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "effect", tpath, &tol.effect));
    out->push_back(std::move(tol));
    return OkStatus();
  });
}

Status DecodePodConstraints(const Value& spec, const std::string& path, PodConstraints* out) {
  GPUSCHED_RETURN_IF_ERROR(DecodeStringMap(spec, "nodeSelector", path, &out->node_selector));
  const Value* affinity = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(spec, "affinity", path, &affinity));
  if (affinity != nullptr) {
    std::string apath = path + ".affinity";
    GPUSCHED_RETURN_IF_ERROR(ReadNodeAffinity(*affinity, apath, out));
    GPUSCHED_RETURN_IF_ERROR(ReadPodTerms(*affinity, "podAffinity", apath, &out->affinity));
    GPUSCHED_RETURN_IF_ERROR(ReadPodTerms(*affinity, "podAntiAffinity", apath, &out->anti_affinity));
  }
  GPUSCHED_RETURN_IF_ERROR(DecodeTolerations(spec, path, &out->tolerations));
  GPUSCHED_RETURN_IF_ERROR(json::ForEachObject(spec, "topologySpreadConstraints", path, [&](const Value& c, const std::string& cpath) {
    SpreadConstraint sc;
    GPUSCHED_RETURN_IF_ERROR(ReadOptionalSelector(c, "labelSelector", cpath, &sc.selector));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "topologyKey", cpath, &sc.topology_key));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "whenUnsatisfiable", cpath, &sc.when_unsatisfiable));
    out->spread.push_back(std::move(sc));
    return OkStatus();
  }));
  GPUSCHED_RETURN_IF_ERROR(ReadHostPorts(spec, "containers", path, &out->host_ports));
  GPUSCHED_RETURN_IF_ERROR(ReadHostPorts(spec, "initContainers", path, &out->host_ports));
  return json::ForEachObject(spec, "volumes", path, [&](const Value& v, const std::string&) {
    out->filter_volumes = out->filter_volumes || FilterReads(v);
    return OkStatus();
  });
}

Status DecodeNodeSchedulability(const Value& node, const std::string& path, NodeSchedulability* out) {
  const Value* spec = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(node, "spec", path, &spec));
  if (spec != nullptr) {
    std::string spath = path + ".spec";
    GPUSCHED_RETURN_IF_ERROR(json::ReadBool(*spec, "unschedulable", spath, &out->unschedulable));
    GPUSCHED_RETURN_IF_ERROR(json::ForEachObject(*spec, "taints", spath, [&](const Value& t, const std::string& tpath) {
      Taint taint;
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "key", tpath, &taint.key));
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "value", tpath, &taint.value));
      GPUSCHED_RETURN_IF_ERROR(json::ReadString(t, "effect", tpath, &taint.effect));
      out->taints.push_back(std::move(taint));
      return OkStatus();
    }));
  }
  const Value* status = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(node, "status", path, &status));
  if (status == nullptr) return OkStatus();
  return json::ForEachObject(*status, "conditions", path + ".status", [&](const Value& c, const std::string& cpath) {
    std::string type, value;
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "type", cpath, &type));
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(c, "status", cpath, &value));
    if (type == "Ready") out->ready = value == "True";
    return OkStatus();
  });
}

}  // namespace gpusched::kubejson
