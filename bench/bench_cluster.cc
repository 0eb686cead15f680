#include "bench_cluster.h"

#include <fmt/format.h>

#include <functional>
#include <random>

#include "cluster_json.h"

namespace gpusched::bench {
namespace {

constexpr int kGpusPerNode = 8;
constexpr int64_t kMibPerGpu = 81920;

// A running pod of a ReplicaSet (one of 64), as workloads' pods are: defrag may move it.
Pod BoundPod(std::string uid, const std::string& node) {
  std::string controller = fmt::format("rs-{}", std::hash<std::string>{}(uid) % 64);
  return Pod{.uid = uid, .namespace_name = "bench", .name = uid, .node_name = node, .phase = PodPhase::kRunning,
             .controller_uid = std::move(controller), .controller_kind = "ReplicaSet"};
}

}  // namespace

ClusterObjects MakeCluster(Kind kind, int nodes, double fill, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  ClusterObjects c;
  int pod_id = 0;
  for (int n = 0; n < nodes; ++n) {
    std::string name = fmt::format("gpu-node-{:05}", n);
    if (kind == Kind::kWhole) {
      c.nodes.push_back(Node{.name = name, .mode_label = "nvidia", .allocatable = {.nvidia_gpus = kGpusPerNode}});
      // Each GPU is busy with probability `fill`; busy GPUs are grouped into 1-, 2- and 4-GPU pods.
      int busy = 0;
      for (int g = 0; g < kGpusPerNode; ++g) busy += unit(rng) < fill ? 1 : 0;
      while (busy > 0) {
        int size = busy >= 4 && unit(rng) < 0.3 ? 4 : busy >= 2 && unit(rng) < 0.4 ? 2 : 1;
        Pod pod = BoundPod(fmt::format("pod-{}", pod_id++), name);
        Container ctr{.name = "main"};
        ctr.limits.nvidia_gpus = size;
        pod.containers.push_back(ctr);
        c.pods.push_back(std::move(pod));
        busy -= size;
      }
      continue;
    }
    c.nodes.push_back(Node{.name = name,
                           .mode_label = "mgpu",
                           .compute_policy_label = "fixed-share",
                           .allocatable = {.mgpu_core_percent = 100 * kGpusPerNode,
                                           .mgpu_memory_mib = kMibPerGpu * kGpusPerNode}});
    // Each GPU gets shared instances until it reaches its random target around `fill`.
    for (int g = 0; g < kGpusPerNode; ++g) {
      double target = std::clamp(fill + (unit(rng) - 0.5) * 0.8, 0.0, 1.0);
      int64_t core = 0;
      while (true) {
        int64_t add = 10 * (1 + static_cast<int64_t>(unit(rng) * 4));  // 10-40%
        if (core + add > static_cast<int64_t>(target * 100)) break;
        core += add;
        Pod pod = BoundPod(fmt::format("pod-{}", pod_id++), name);
        Container ctr{.name = "main"};
        ctr.limits.mgpu_core_percent = add;
        ctr.limits.mgpu_memory_mib = add * kMibPerGpu / 100;
        pod.containers.push_back(ctr);
        pod.annotations["vke.volcengine.com/gpu-index-container-main"] = std::to_string(g);
        c.pods.push_back(std::move(pod));
      }
    }
  }
  return c;
}

std::vector<GangJson> MakeGangs(Kind kind, int count, int min_members, int max_members, bool coscheduling, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<GangJson> out;
  for (int g = 0; g < count; ++g) {
    int n = min_members + static_cast<int>(rng() % static_cast<uint32_t>(max_members - min_members + 1));
    int64_t core = 30 + 10 * static_cast<int64_t>(rng() % 5);
    int64_t gpus = 1 + static_cast<int64_t>(rng() % 2);
    std::string name = fmt::format("gang-{}", g);
    GangJson gang;
    gang.group = coscheduling
                     ? fmt::format(R"({{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{{"name":"{}",)"
                                   R"("namespace":"bench","uid":"{}-group"}},"spec":{{"minMember":{}}}}})",
                                   name, name, n)
                     : fmt::format(R"({{"apiVersion":"scheduling.k8s.io/v1beta1","kind":"PodGroup","metadata":{{"name":"{}",)"
                                   R"("namespace":"bench","uid":"{}-group"}},"spec":{{"schedulingPolicy":{{"gang":{{"minCount":{}}}}}}}}})",
                                   name, name, n);
    for (int i = 0; i < n; ++i) {
      testing::PodJson p{.name = fmt::format("{}-{}", name, i), .namespace_name = "bench", .uid = fmt::format("{}-{}", name, i),
                         .resource_version = "81240001", .phase = "Pending"};
      p.containers = {kind == Kind::kWhole ? testing::WholeGpus("main", gpus) : testing::Mgpu("main", core, 4096)};
      if (coscheduling) {
        p.labels = {{"scheduling.x-k8s.io/pod-group", name}};
      } else {
        p.spec_extra = fmt::format(R"("schedulingGroup":{{"podGroupName":"{}"}})", name);
      }
      gang.members.push_back(p.ToJson());
    }
    out.push_back(std::move(gang));
  }
  return out;
}

std::string ClusterListJson(const ClusterObjects& cluster) { return ClusterListJson(cluster, {}); }

std::string ClusterListJson(const ClusterObjects& cluster, const std::vector<GangJson>& gangs) {
  std::vector<std::string> items;
  items.reserve(cluster.nodes.size() + cluster.pods.size());
  for (const Node& n : cluster.nodes) {
    testing::NodeJson j{.name = n.name, .label = n.mode_label, .compute_policy = n.compute_policy_label};
    if (n.allocatable.nvidia_gpus > 0) j.nvidia_gpus = n.allocatable.nvidia_gpus;
    if (n.allocatable.mgpu_core_percent > 0) {
      j.mgpu_core = n.allocatable.mgpu_core_percent;
      j.mgpu_memory = n.allocatable.mgpu_memory_mib;
    }
    items.push_back(j.ToJson());
  }
  for (const Pod& p : cluster.pods) {
    testing::PodJson j{.name = p.name, .namespace_name = p.namespace_name, .uid = p.uid, .node = p.node_name,
                       .phase = "Running", .controller_uid = p.controller_uid};
    for (const auto& [k, v] : p.annotations) j.annotations[k] = v;
    for (const Container& c : p.containers) {
      testing::ContainerJson cj{.name = c.name};
      if (c.limits.nvidia_gpus) cj.limits["nvidia.com/gpu"] = std::to_string(*c.limits.nvidia_gpus);
      if (c.limits.mgpu_core_percent) cj.limits["vke.volcengine.com/mgpu-core"] = std::to_string(*c.limits.mgpu_core_percent);
      if (c.limits.mgpu_memory_mib) cj.limits["vke.volcengine.com/mgpu-memory"] = std::to_string(*c.limits.mgpu_memory_mib);
      j.containers.push_back(std::move(cj));
    }
    items.push_back(j.ToJson());
  }
  for (const GangJson& g : gangs) {
    items.push_back(g.group);
    items.insert(items.end(), g.members.begin(), g.members.end());
  }
  return testing::ListJson(items);
}

std::vector<std::string> NodeNames(const ClusterObjects& cluster) {
  std::vector<std::string> out;
  for (const Node& n : cluster.nodes) out.push_back(n.name);
  return out;
}

std::string PendingPodJson(Kind kind, const std::string& uid) {
  testing::PodJson pod{.name = uid, .namespace_name = "bench", .uid = uid, .resource_version = "81240001"};
  pod.containers = {kind == Kind::kWhole ? testing::WholeGpus("main", 1) : testing::Mgpu("main", 30, 8192)};
  return pod.ToJson();
}

}  // namespace gpusched::bench
