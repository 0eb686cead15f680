// File: cluster_json.h
//
// Builders of real Kubernetes JSON (Nodes, Pods, Lists) and extender request bodies for tests and
// benchmarks. Output is what kubectl / kube-scheduler would send: quantities as strings, camelCase
// object keys, PascalCase envelope keys.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/model/pod.h"

namespace gpusched::testing {

struct GpuJson {
  int index = 0;
  int64_t memory_mib = 0;
  std::string model;
  int numa = -1;
  bool healthy = true;
};

struct NodeJson {
  std::string name;
  std::optional<std::string> label;           // vke.node.gpu.schedule
  std::optional<std::string> compute_policy;  // vke.volcengine.com/mgpu-compute-policy
  std::optional<int64_t> nvidia_gpus;
  std::optional<int64_t> mgpu_core;
  std::optional<int64_t> mgpu_memory;
  std::optional<std::vector<GpuJson>> gpus;   // gpusched.io/gpu-devices
  std::map<std::string, std::string> extra_annotations;
  std::map<std::string, std::string> extra_labels;
  std::map<std::string, std::string> extra_allocatable;  // status.capacity and allocatable
  std::string spec_extra;       // raw JSON members added to spec ("unschedulable":true,"taints":[...])
  std::string cpu = "63";       // status.allocatable cpu
  std::string ready = "True";   // status of the Ready condition; empty = no conditions
  bool lists_other_resources = true;  // false: allocatable lists the GPU resources only (by hand)

  std::string ToJson() const;
};

struct ContainerJson {
  std::string name;
  std::map<std::string, std::string> limits;
  std::map<std::string, std::string> requests;
  std::vector<int> host_ports;  // ports[]: containerPort and hostPort, TCP
};

struct PodJson {
  std::string name;
  std::string namespace_name = "default";
  std::string uid;
  std::string resource_version;  // metadata.resourceVersion; empty = omitted
  std::string node;    // spec.nodeName; empty = pending
  std::string phase;   // status.phase; empty = omitted
  std::vector<ContainerJson> containers;
  std::vector<ContainerJson> init_containers;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> claims;  // spec.resourceClaims names
  std::map<std::string, std::string> labels;
  std::optional<int32_t> priority;  // spec.priority (with a priorityClassName), as admission sets it
  std::string creation_timestamp = "2026-11-30T10:00:00Z";  // metadata.creationTimestamp
  std::string deletion_timestamp;   // metadata.deletionTimestamp; empty = omitted
  std::string nominated_node;       // status.nominatedNodeName; empty = omitted
  std::string controller_uid;       // metadata.ownerReferences: a controller of this uid; empty = none
  std::string controller_kind = "ReplicaSet";  // ... and kind (apps/v1)
  std::string spec_extra;           // raw JSON members added to spec ("affinity":{...},"volumes":[...])
  std::string scheduler = "gpu-scheduler";  // spec.schedulerName (the shipped profile's)

  std::string ToJson() const;
};

// A PodDisruptionBudget (policy/v1) selecting `match_labels`, with status.disruptionsAllowed.
std::string BudgetJson(const std::string& ns, const std::string& name, const std::map<std::string, std::string>& match_labels,
                       int allowed);

// Containers.
ContainerJson WholeGpus(std::string name, int64_t n);
ContainerJson Mgpu(std::string name, int64_t core, std::optional<int64_t> memory_mib);

// Nodes.
NodeJson NvidiaNode(std::string name, int64_t gpus, std::optional<std::string> label = std::nullopt);
NodeJson MgpuNode(std::string name, int64_t gpus, int64_t mib_per_gpu, std::string policy = "fixed-share");

// nvidia nodes of `gpus` GPUs each, `names`, each in the NVLink clique of its first letter
// (label nvidia.com/gpu.clique: "a1" is in "c.A").
std::vector<std::string> CliqueNodes(const std::vector<std::string>& names, int64_t gpus);
// A PodGroup `ns`/`group` whose gang needs `min_count` members, and `members` pending members of
// `gpus` whole GPUs each, "<group>-<i>" (UID the same), created at PodJson's default time.
std::vector<std::string> GangJson(const std::string& ns, const std::string& group, int min_count, int members, int64_t gpus);

std::string ListJson(const std::vector<std::string>& items);
// The node annotation gpusched.io/gpu-devices as the agent publishes it for GPUs 0..n-1 of `node`
// (UUID "GPU-<node>-<i>", 81920 MiB, healthy), GPU i with NVLink peers `peers[i]` and, where
// `pods` is given, the pods the kubelet gave it (PodResources; "default/<name>", none elsewhere).
std::string LinkedGpusAnnotation(const std::string& node, const std::vector<std::vector<int>>& peers,
                                 const std::optional<std::map<int, std::string>>& pods = std::nullopt);
// ExtenderArgs with NodeNames (nodeCacheCapable: true).
std::string ArgsWithNames(const std::string& pod_json, const std::vector<std::string>& names);
// The node names a filter reply (ExtenderFilterResult, nodeCacheCapable) kept; empty if none or
// the reply cannot be read.
std::vector<std::string> KeptNodes(const std::string& reply);
// ExtenderArgs with Nodes (nodeCacheCapable: false).
std::string ArgsWithNodes(const std::string& pod_json, const std::vector<std::string>& node_jsons);
// ExtenderPreemptionArgs with NodeNameToMetaVictims (nodeCacheCapable: true): victims' UIDs by
// node; an empty list is a placeholder candidate.
std::string PreemptMetaJson(const std::string& pod_json, const std::map<std::string, std::vector<std::string>>& victims);
// ExtenderPreemptionArgs with NodeNameToVictims (nodeCacheCapable: false): victims' Pod JSON by node.
std::string PreemptFullJson(const std::string& pod_json, const std::map<std::string, std::vector<std::string>>& victims);
std::string BindJson(const std::string& name, const std::string& ns, const std::string& uid, const std::string& node);
// The Pod of `pod_json` as the watch decodes it. REQUIRES: it decodes.
Pod DecodedPod(const std::string& pod_json);

// Nodes partly used, drawn with `seed`: `mgpu` mGPU nodes "m<i>" of 4 GPUs (24576 MiB), each GPU
// 0, 30, 50 or 70% used by a pod of namespace "base"; `whole` whole-GPU nodes "w<i>" of 8 GPUs,
// 0-6 of them used by one pod. The objects, for ListJson.
std::vector<std::string> PartlyUsedNodes(int mgpu, int whole, uint32_t seed);

}  // namespace gpusched::testing
