// File: extended_resources.cc
//
// KEP 5004's pure rules: the DeviceClass that maps an extended resource (newest, then lower name),
// which of a pod's resources DRA serves on a node, and the special claim's requests and container
// mappings (init containers reusing later long-lived requests).
#include "gpusched/dra/extended_resources.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "gpusched/model/names.h"
#include "gpusched/model/node_mode.h"

namespace gpusched::dra {
namespace {

// True if `a` serves a resource better than `b`: newer, then the lower name.
bool Better(const DeviceClass& a, const DeviceClass& b) {
  if (a.creation_timestamp != b.creation_timestamp) return a.creation_timestamp > b.creation_timestamp;
  return a.name < b.name;
}

// Everything `c` requests, by name: its other resources and its GPU resources (the limit
// standing in for a missing request, as the API server defaults it).
std::vector<std::pair<std::string, int64_t>> Requested(const Container& c) {
  std::vector<std::pair<std::string, int64_t>> out = c.other_requests.items();
  auto gpu = [&](std::string_view name, const std::optional<int64_t>& request, const std::optional<int64_t>& limit) {
    if (request || limit) out.emplace_back(std::string(name), request ? *request : *limit);
  };
  gpu(names::kNvidiaGpu, c.requests.nvidia_gpus, c.limits.nvidia_gpus);
  gpu(names::kMgpuCore, c.requests.mgpu_core_percent, c.limits.mgpu_core_percent);
  gpu(names::kMgpuMemory, c.requests.mgpu_memory_mib, c.limits.mgpu_memory_mib);
  std::sort(out.begin(), out.end());
  return out;
}

// A pod's containers as request names count them: its init containers, then its containers.
struct PodContainers {
  explicit PodContainers(const Pod& pod) : init(pod.init_containers.size()) {
    for (const Container& c : pod.init_containers) all.push_back(&c);
    for (const Container& c : pod.containers) all.push_back(&c);
  }
  // True for an app container or a sidecar (runs as long as the pod), false for an init container
  // that runs to completion before the next one starts.
  bool LongLived(size_t i) const { return i >= init || all[i]->sidecar; }

  std::vector<const Container*> all;
  size_t init;
};

// A request of the special claim for one resource: its name and count.
struct Ask {
  std::string request;  // container-<i>-request-<r>
  int64_t count = 0;
};

// Returns what container `i` of `pc` asks of `resource` (all of it, in a request of its own), or
// nullopt if it asks none.
std::optional<Ask> AskOf(const PodContainers& pc, size_t i, std::string_view resource) {
  std::vector<std::pair<std::string, int64_t>> requested = Requested(*pc.all[i]);
  for (size_t r = 0; r < requested.size(); ++r) {
    if (requested[r].first != resource) continue;
    if (requested[r].second <= 0) return std::nullopt;
    return Ask{.request = fmt::format("container-{}-request-{}", i, r), .count = requested[r].second};
  }
  return std::nullopt;
}

// The long-lived containers' requests for `resource`, by container index; nullopt for a
// short-lived container or one that asks none.
std::vector<std::optional<Ask>> LongLivedAsks(const PodContainers& pc, std::string_view resource) {
  std::vector<std::optional<Ask>> out(pc.all.size());
  for (size_t i = 0; i < pc.all.size(); ++i) {
    if (pc.LongLived(i)) out[i] = AskOf(pc, i, resource);
  }
  return out;
}

// Maps short-lived init container `i`, asking `count` of `resource`, to the long-lived requests
// after it (`long_lived`, LongLivedAsks) in container order, until their counts add up to `count`;
// appends those mappings to `mappings`. Returns the count they leave uncovered (0 if none).
int64_t Reuse(const PodContainers& pc, size_t i, int64_t count, const std::string& resource,
              const std::vector<std::optional<Ask>>& long_lived, std::vector<RequestMapping>* mappings) {
  int64_t covered = 0;  // at most `count`
  for (size_t j = i + 1; j < long_lived.size() && covered < count; ++j) {
    if (!long_lived[j]) continue;
    covered += std::min(long_lived[j]->count, count - covered);
    mappings->push_back(RequestMapping{.container = pc.all[i]->name, .resource = resource, .request = long_lived[j]->request});
  }
  return count - covered;
}

// Maps the short-lived init containers asking `resource`, in container order: each to the later
// long-lived requests it reuses (Reuse), then, for the count those leave uncovered, to its own
// request. They run one after another, so they all share the own request with the largest count:
// every mapping to an own request names that one. Appends the mappings to `mappings`; returns the
// shared request, or nullopt if the long-lived requests cover every init container.
std::optional<Ask> ShortLivedAsks(const PodContainers& pc, const std::string& resource,
                                  const std::vector<std::optional<Ask>>& long_lived, std::vector<RequestMapping>* mappings) {
  size_t first = mappings->size();
  std::set<std::string> own;
  std::optional<Ask> largest;
  for (size_t i = 0; i < pc.all.size(); ++i) {
    std::optional<Ask> ask = pc.LongLived(i) ? std::nullopt : AskOf(pc, i, resource);
    if (!ask) continue;
    int64_t uncovered = Reuse(pc, i, ask->count, resource, long_lived, mappings);
    if (uncovered == 0) continue;
    mappings->push_back(RequestMapping{.container = pc.all[i]->name, .resource = resource, .request = ask->request});
    own.insert(ask->request);
    if (!largest || largest->count < uncovered) largest = Ask{.request = ask->request, .count = uncovered};
  }
  for (size_t m = first; m < mappings->size(); ++m) {
    if (own.contains((*mappings)[m].request)) (*mappings)[m].request = largest->request;
  }
  return largest;
}

// Adds `resource`'s requests (of class `device_class`) and mappings to `out`: the long-lived
// containers' mappings in container order, then the short-lived init containers'.
void AddResource(const PodContainers& pc, const std::string& resource, const std::string& device_class, SpecialClaim* out) {
  auto add = [&](const Ask& a) {
    out->claim.requests.push_back(
        DeviceRequest{.name = a.request, .exactly = ExactRequest{.device_class = device_class, .count = a.count}});
  };
  std::vector<std::optional<Ask>> long_lived = LongLivedAsks(pc, resource);
  for (size_t i = 0; i < long_lived.size(); ++i) {
    if (!long_lived[i]) continue;
    add(*long_lived[i]);
    out->mappings.push_back(RequestMapping{.container = pc.all[i]->name, .resource = resource, .request = long_lived[i]->request});
  }
  if (std::optional<Ask> shared = ShortLivedAsks(pc, resource, long_lived, &out->mappings)) add(*shared);
}

}  // namespace

const DeviceClass* ClassFor(const DeviceClasses& classes, std::string_view resource) {
  if (resource.starts_with(kImplicitExtendedResourcePrefix)) {
    auto it = classes.find(resource.substr(kImplicitExtendedResourcePrefix.size()));
    if (it != classes.end()) return &it->second;
  }
  const DeviceClass* best = nullptr;
  for (const auto& [name, c] : classes) {
    if (c.extended_resource_name == resource && (best == nullptr || Better(c, *best))) best = &c;
  }
  return best;
}

std::vector<std::string> MappedResources(const Pod& pod, const DeviceClasses& classes) {
  std::vector<std::string> out;
  auto add = [&](const Container& c) {
    for (const auto& [name, amount] : Requested(c)) {
      if (amount > 0 && std::find(out.begin(), out.end(), name) == out.end() && ClassFor(classes, name) != nullptr) out.push_back(name);
    }
  };
  for (const Container& c : pod.init_containers) add(c);
  for (const Container& c : pod.containers) add(c);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> ServedOn(const Node& node, std::span<const std::string> mapped) {
  std::vector<std::string> out;
  for (const std::string& r : mapped) {
    int64_t listed = r == names::kNvidiaGpu   ? node.allocatable.nvidia_gpus
                     : r == names::kMgpuCore   ? node.allocatable.mgpu_core_percent
                     : r == names::kMgpuMemory ? node.allocatable.mgpu_memory_mib
                                               : node.other_allocatable.Get(r);
    if (listed == 0) out.push_back(r);
  }
  return out;
}

bool ServedThroughDra(const Pod& pod, const Node& node, const DeviceClasses& classes) {
  return HasPayload(ModeFromLabel(node.mode_label), Payload::kDevices) && !ServedOn(node, MappedResources(pod, classes)).empty();
}

std::optional<SpecialClaim> BuildSpecialClaim(const Pod& pod, const DeviceClasses& classes, std::span<const std::string> served) {
  SpecialClaim out;
  out.claim = ResourceClaim{.namespace_name = pod.namespace_name,
                            .name = fmt::format("{}{}", pod.name, kExtendedResourceClaimSuffix),
                            .owner_pod_uid = pod.uid};
  PodContainers pc(pod);
  std::vector<std::string> resources(served.begin(), served.end());
  std::sort(resources.begin(), resources.end());
  for (const std::string& resource : resources) {
    if (const DeviceClass* cls = ClassFor(classes, resource); cls != nullptr) AddResource(pc, resource, cls->name, &out);
  }
  if (out.claim.requests.empty()) return std::nullopt;
  std::sort(out.claim.requests.begin(), out.claim.requests.end(),
            [](const DeviceRequest& a, const DeviceRequest& b) { return a.name < b.name; });
  return out;
}

}  // namespace gpusched::dra
