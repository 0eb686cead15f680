#include "cluster_json.h"

#include <fmt/format.h>
#include <cctype>
#include <random>
#include <fmt/ranges.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "gpusched/kubejson/objects.h"

namespace gpusched::testing {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void S(Writer& w, const std::string& s) { w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size())); }

void StringMap(Writer& w, const std::map<std::string, std::string>& m) {
  w.StartObject();
  for (const auto& [k, v] : m) {
    S(w, k);
    S(w, v);
  }
  w.EndObject();
}

// `json` with the raw members `extra` added at the start of its spec.
std::string WithSpecExtra(std::string json, const std::string& extra) {
  if (extra.empty()) return json;
  size_t at = json.find(R"("spec":{)");
  return json.insert(at + 8, extra + ",");
}

void Containers(Writer& w, const std::vector<ContainerJson>& list) {
  w.StartArray();
  for (const ContainerJson& c : list) {
    w.StartObject();
    S(w, "name");
    S(w, c.name);
    S(w, "image");
    S(w, "registry.example.com/app:1");
    if (!c.host_ports.empty()) {
      S(w, "ports");
      w.StartArray();
      for (int p : c.host_ports) {
        w.StartObject();
        S(w, "containerPort");
        w.Int(p);
        S(w, "hostPort");
        w.Int(p);
        S(w, "protocol");
        S(w, "TCP");
        w.EndObject();
      }
      w.EndArray();
    }
    S(w, "resources");
    w.StartObject();
    if (!c.limits.empty()) {
      S(w, "limits");
      StringMap(w, c.limits);
    }
    if (!c.requests.empty()) {
      S(w, "requests");
      StringMap(w, c.requests);
    }
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
}

std::string GpuDevicesJson(const std::vector<GpuJson>& gpus) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartArray();
  for (const GpuJson& g : gpus) {
    w.StartObject();
    S(w, "index");
    w.Int(g.index);
    S(w, "uuid");
    S(w, fmt::format("GPU-{:08x}-0000-4000-8000-{:012}", g.index * 7919, g.index));
    S(w, "model");
    S(w, g.model);
    S(w, "memoryMiB");
    w.Int64(g.memory_mib);
    S(w, "numa");
    w.Int(g.numa);
    S(w, "health");
    S(w, g.healthy ? "Healthy" : "Unhealthy");
    w.EndObject();
  }
  w.EndArray();
  return b.GetString();
}

}  // namespace

std::string NodeJson::ToJson() const {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  S(w, "kind");
  S(w, "Node");
  S(w, "apiVersion");
  S(w, "v1");
  S(w, "metadata");
  w.StartObject();
  S(w, "name");
  S(w, name);
  S(w, "uid");
  S(w, "uid-" + name);
  S(w, "resourceVersion");
  S(w, "1");
  std::map<std::string, std::string> labels{{"kubernetes.io/hostname", name}, {"kubernetes.io/os", "linux"}};
  if (label) labels["vke.node.gpu.schedule"] = *label;
  if (compute_policy) labels["vke.volcengine.com/mgpu-compute-policy"] = *compute_policy;
  for (const auto& [k, v] : extra_labels) labels[k] = v;
  S(w, "labels");
  StringMap(w, labels);
  std::map<std::string, std::string> annotations = extra_annotations;
  annotations.insert_or_assign("node.alpha.kubernetes.io/ttl", std::string("0"));
  if (gpus) annotations["gpusched.io/gpu-devices"] = GpuDevicesJson(*gpus);
  S(w, "annotations");
  StringMap(w, annotations);
  w.EndObject();
  S(w, "spec");
  w.StartObject();
  S(w, "podCIDR");
  S(w, "10.244.0.0/24");
  w.EndObject();
  std::map<std::string, std::string> alloc;
  if (lists_other_resources) alloc = {{"cpu", cpu}, {"memory", "250Gi"}, {"pods", "110"}};
  if (nvidia_gpus) alloc["nvidia.com/gpu"] = std::to_string(*nvidia_gpus);
  if (mgpu_core) alloc["vke.volcengine.com/mgpu-core"] = std::to_string(*mgpu_core);
  if (mgpu_memory) alloc["vke.volcengine.com/mgpu-memory"] = std::to_string(*mgpu_memory);
  for (const auto& [k, v] : extra_allocatable) alloc[k] = v;
  S(w, "status");
  w.StartObject();
  S(w, "capacity");
  StringMap(w, alloc);
  S(w, "allocatable");
  StringMap(w, alloc);
  if (!ready.empty()) {
    S(w, "conditions");
    w.StartArray();
    w.StartObject();
    for (const char* kv : {"type", "Ready", "reason", "KubeletReady", "lastHeartbeatTime", "2026-11-30T10:00:00Z"}) S(w, kv);
    S(w, "status");
    S(w, ready);
    w.EndObject();
    w.EndArray();
  }
  S(w, "daemonEndpoints");
  w.StartObject();
  S(w, "kubeletEndpoint");
  w.StartObject();
  S(w, "Port");
  w.Int(10250);
  w.EndObject();
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return WithSpecExtra(b.GetString(), spec_extra);
}

std::string PodJson::ToJson() const {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  S(w, "kind");
  S(w, "Pod");
  S(w, "apiVersion");
  S(w, "v1");
  S(w, "metadata");
  w.StartObject();
  S(w, "name");
  S(w, name);
  S(w, "namespace");
  S(w, namespace_name);
  S(w, "uid");
  S(w, uid);
  if (!resource_version.empty()) {
    S(w, "resourceVersion");
    S(w, resource_version);
  }
  S(w, "creationTimestamp");
  S(w, creation_timestamp);
  if (!deletion_timestamp.empty()) {
    S(w, "deletionTimestamp");
    S(w, deletion_timestamp);
    S(w, "deletionGracePeriodSeconds");
    w.Int(30);
  }
  if (!annotations.empty()) {
    S(w, "annotations");
    StringMap(w, annotations);
  }
  if (!labels.empty()) {
    S(w, "labels");
    StringMap(w, labels);
  }
  if (!controller_uid.empty()) {
    S(w, "ownerReferences");
    w.StartArray();
    w.StartObject();
    for (const std::string& kv : {std::string("apiVersion"), std::string("apps/v1"), std::string("kind"), controller_kind,
                                  std::string("name"), std::string("owner")}) {
      S(w, kv);
    }
    S(w, "uid");
    S(w, controller_uid);
    S(w, "controller");
    w.Bool(true);
    S(w, "blockOwnerDeletion");
    w.Bool(true);
    w.EndObject();
    w.EndArray();
  }
  w.EndObject();
  S(w, "spec");
  w.StartObject();
  if (!node.empty()) {
    S(w, "nodeName");
    S(w, node);
  }
  S(w, "schedulerName");
  S(w, scheduler);
  if (priority) {
    S(w, "priorityClassName");
    S(w, std::string(*priority > 0 ? "high" : "low"));
    S(w, "priority");
    w.Int(*priority);
  }
  S(w, "containers");
  Containers(w, containers);
  if (!init_containers.empty()) {
    S(w, "initContainers");
    Containers(w, init_containers);
  }
  if (!claims.empty()) {
    S(w, "resourceClaims");
    w.StartArray();
    for (const std::string& c : claims) {
      w.StartObject();
      S(w, "name");
      S(w, c);
      S(w, "resourceClaimName");
      S(w, c);
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
  S(w, "status");
  w.StartObject();
  if (!phase.empty()) {
    S(w, "phase");
    S(w, phase);
  }
  if (!nominated_node.empty()) {
    S(w, "nominatedNodeName");
    S(w, nominated_node);
  }
  S(w, "conditions");
  w.StartArray();
  w.StartObject();
  S(w, "type");
  S(w, "PodScheduled");
  S(w, "lastProbeTime");
  w.Null();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return WithSpecExtra(b.GetString(), spec_extra);
}

ContainerJson WholeGpus(std::string name, int64_t n) {
  std::string v = std::to_string(n);
  return ContainerJson{.name = std::move(name), .limits = {{"nvidia.com/gpu", v}}, .requests = {{"nvidia.com/gpu", v}}};
}

ContainerJson Mgpu(std::string name, int64_t core, std::optional<int64_t> memory_mib) {
  ContainerJson c{.name = std::move(name)};
  c.limits["vke.volcengine.com/mgpu-core"] = std::to_string(core);
  if (memory_mib) c.limits["vke.volcengine.com/mgpu-memory"] = std::to_string(*memory_mib);
  c.requests = c.limits;
  return c;
}

NodeJson NvidiaNode(std::string name, int64_t gpus, std::optional<std::string> label) {
  return NodeJson{.name = std::move(name), .label = std::move(label), .nvidia_gpus = gpus};
}

NodeJson MgpuNode(std::string name, int64_t gpus, int64_t mib_per_gpu, std::string policy) {
  return NodeJson{.name = std::move(name),
                  .label = "mgpu",
                  .compute_policy = std::move(policy),
                  .mgpu_core = gpus * 100,
                  .mgpu_memory = gpus * mib_per_gpu};
}

std::string LinkedGpusAnnotation(const std::string& node, const std::vector<std::vector<int>>& peers,
                                 const std::optional<std::map<int, std::string>>& pods) {
  std::string out = "[";
  for (size_t i = 0; i < peers.size(); ++i) {
    out += fmt::format(R"({}{{"index":{},"uuid":"GPU-{}-{}","model":"NVIDIA-A100","memoryMiB":81920,"health":"Healthy","nvlinkPeers":[{}])",
                       i > 0 ? "," : "", i, node, i, fmt::join(peers[i], ","));
    if (pods) {
      auto it = pods->find(static_cast<int>(i));
      out += it == pods->end() ? R"(,"pods":[])" : fmt::format(R"(,"pods":["default/{}"])", it->second);
    }
    out += "}";
  }
  return out + "]";
}

std::vector<std::string> CliqueNodes(const std::vector<std::string>& names, int64_t gpus) {
  std::vector<std::string> out;
  for (const std::string& name : names) {
    NodeJson n = NvidiaNode(name, gpus);
    n.extra_labels["nvidia.com/gpu.clique"] = fmt::format("c.{}", static_cast<char>(std::toupper(name[0])));
    out.push_back(n.ToJson());
  }
  return out;
}

std::vector<std::string> GangJson(const std::string& ns, const std::string& group, int min_count, int members, int64_t gpus) {
  std::vector<std::string> out = {
      fmt::format(R"({{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{{"name":"{}","namespace":"{}"}},)"
                  R"("spec":{{"schedulingPolicy":{{"gang":{{"minCount":{}}}}}}}}})",
                  group, ns, min_count)};
  for (int i = 0; i < members; ++i) {
    std::string name = fmt::format("{}-{}", group, i);
    out.push_back(PodJson{.name = name, .namespace_name = ns, .uid = name, .containers = {WholeGpus("c", gpus)},
                          .spec_extra = fmt::format(R"("schedulingGroup":{{"podGroupName":"{}"}})", group)}
                      .ToJson());
  }
  return out;
}

std::string ListJson(const std::vector<std::string>& items) {
  return fmt::format("{{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[{}]}}", fmt::join(items, ","));
}

std::string ArgsWithNames(const std::string& pod_json, const std::vector<std::string>& names) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartArray();
  for (const std::string& n : names) S(w, n);
  w.EndArray();
  return fmt::format("{{\"Pod\":{},\"Nodes\":null,\"NodeNames\":{}}}", pod_json, b.GetString());
}

std::string ArgsWithNodes(const std::string& pod_json, const std::vector<std::string>& node_jsons) {
  return fmt::format("{{\"Pod\":{},\"Nodes\":{{\"metadata\":{{}},\"items\":[{}]}},\"NodeNames\":null}}", pod_json,
                     fmt::join(node_jsons, ","));
}

std::string PreemptMetaJson(const std::string& pod_json, const std::map<std::string, std::vector<std::string>>& victims) {
  std::vector<std::string> nodes;
  for (const auto& [node, uids] : victims) {
    std::vector<std::string> pods;
    for (const std::string& u : uids) pods.push_back(fmt::format(R"({{"UID":"{}"}})", u));
    nodes.push_back(fmt::format(R"("{}":{{"Pods":[{}],"NumPDBViolations":0}})", node, fmt::join(pods, ",")));
  }
  return fmt::format(R"({{"Pod":{},"NodeNameToVictims":null,"NodeNameToMetaVictims":{{{}}}}})", pod_json, fmt::join(nodes, ","));
}

std::string PreemptFullJson(const std::string& pod_json, const std::map<std::string, std::vector<std::string>>& victims) {
  std::vector<std::string> nodes;
  for (const auto& [node, pods] : victims) {
    nodes.push_back(fmt::format(R"("{}":{{"Pods":[{}],"NumPDBViolations":0}})", node, fmt::join(pods, ",")));
  }
  return fmt::format(R"({{"Pod":{},"NodeNameToVictims":{{{}}},"NodeNameToMetaVictims":null}})", pod_json, fmt::join(nodes, ","));
}

std::string BudgetJson(const std::string& ns, const std::string& name, const std::map<std::string, std::string>& match_labels,
                       int allowed) {
  rapidjson::StringBuffer b;
  Writer w(b);
  StringMap(w, match_labels);
  return fmt::format(R"({{"kind":"PodDisruptionBudget","apiVersion":"policy/v1","metadata":{{"name":"{}","namespace":"{}",)"
                     R"("uid":"pdb-{}","resourceVersion":"1"}},"spec":{{"minAvailable":1,"selector":{{"matchLabels":{}}}}},)"
                     R"("status":{{"observedGeneration":1,"disruptionsAllowed":{},"currentHealthy":2,"desiredHealthy":1,)"
                     R"("expectedPods":2}}}})",
                     name, ns, name, b.GetString(), allowed);
}

std::string BindJson(const std::string& name, const std::string& ns, const std::string& uid, const std::string& node) {
  return fmt::format(R"({{"PodName":"{}","PodNamespace":"{}","PodUID":"{}","Node":"{}"}})", name, ns, uid, node);
}

std::vector<std::string> KeptNodes(const std::string& reply) {
  rapidjson::Document d;
  d.Parse(reply.data(), reply.size());
  std::vector<std::string> out;
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("NodeNames") || !d["NodeNames"].IsArray()) return out;
  for (const auto& n : d["NodeNames"].GetArray()) out.emplace_back(n.GetString());
  return out;
}

Pod DecodedPod(const std::string& pod_json) {
  rapidjson::Document d;
  d.Parse(pod_json.c_str());
  return kubejson::DecodePod(d, "Pod").value();
}

std::vector<std::string> PartlyUsedNodes(int mgpu, int whole, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> objects;
  for (int n = 0; n < mgpu; ++n) {
    std::string node = fmt::format("m{}", n);
    objects.push_back(MgpuNode(node, 4, 24576).ToJson());
    for (int g = 0; g < 4; ++g) {
      int used = std::vector<int>{0, 30, 50, 70}[rng() % 4];
      if (used == 0) continue;
      objects.push_back(PodJson{.name = fmt::format("busy-{}-{}", node, g), .namespace_name = "base",
                                .uid = fmt::format("busy-{}-{}", node, g), .node = node, .phase = "Running",
                                .containers = {Mgpu("s", used, 4096)},
                                .annotations = {{"vke.volcengine.com/gpu-index-container-s", std::to_string(g)}}}
                            .ToJson());
    }
  }
  for (int n = 0; n < whole; ++n) {
    std::string node = fmt::format("w{}", n);
    objects.push_back(NvidiaNode(node, 8).ToJson());
    if (int used = static_cast<int>(rng() % 7); used > 0) {
      objects.push_back(PodJson{.name = "busy-" + node, .namespace_name = "base", .uid = "busy-" + node, .node = node,
                                .phase = "Running", .containers = {WholeGpus("c", used)}}
                            .ToJson());
    }
  }
  return objects;
}

}  // namespace gpusched::testing
