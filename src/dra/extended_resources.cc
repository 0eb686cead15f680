#include "gpusched/dra/extended_resources.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

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

// One container's ask for one resource served by DRA.
struct Ask {
  size_t container;  // init containers first, then the containers
  bool long_lived;   // an app container or a sidecar
  int64_t count;
  std::string request;  // container-<i>-request-<j>
};

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
  return ModeFromLabel(node.mode_label) == NodeMode::kNvidiaDra && !ServedOn(node, MappedResources(pod, classes)).empty();
}

std::optional<SpecialClaim> BuildSpecialClaim(const Pod& pod, const DeviceClasses& classes, std::span<const std::string> served) {
  std::vector<const Container*> all;
  for (const Container& c : pod.init_containers) all.push_back(&c);
  for (const Container& c : pod.containers) all.push_back(&c);
  SpecialClaim out;
  out.claim = ResourceClaim{.namespace_name = pod.namespace_name,
                            .name = fmt::format("{}{}", pod.name, kExtendedResourceClaimSuffix),
                            .owner_pod_uid = pod.uid};
  for (const std::string& resource : served) {
    const DeviceClass* cls = ClassFor(classes, resource);
    if (cls == nullptr) continue;
    std::vector<Ask> asks;
    for (size_t i = 0; i < all.size(); ++i) {
      std::vector<std::pair<std::string, int64_t>> requested = Requested(*all[i]);
      for (size_t j = 0; j < requested.size(); ++j) {
        if (requested[j].first != resource || requested[j].second <= 0) continue;
        asks.push_back(Ask{.container = i, .long_lived = i >= pod.init_containers.size() || all[i]->sidecar,
                           .count = requested[j].second, .request = fmt::format("container-{}-request-{}", i, j)});
      }
    }
    // Long-lived containers keep their requests; an init container reuses a later one's, or the
    // largest of the rest.
    std::vector<std::pair<size_t, std::string>> mapped;  // ask -> request it maps to
    const Ask* largest = nullptr;
    std::vector<size_t> unserved;
    for (size_t a = 0; a < asks.size(); ++a) {
      if (asks[a].long_lived) {
        mapped.emplace_back(a, asks[a].request);
        out.claim.requests.push_back(DeviceRequest{
            .name = asks[a].request, .exactly = ExactRequest{.device_class = cls->name, .count = asks[a].count}});
        continue;
      }
      auto later = std::find_if(asks.begin(), asks.end(), [&](const Ask& l) {
        return l.long_lived && l.container >= asks[a].container && l.count >= asks[a].count;
      });
      if (later != asks.end()) {
        mapped.emplace_back(a, later->request);
        continue;
      }
      unserved.push_back(a);
      if (largest == nullptr || asks[a].count > largest->count) largest = &asks[a];
    }
    if (largest != nullptr) {
      out.claim.requests.push_back(DeviceRequest{.name = largest->request,
                                                 .exactly = ExactRequest{.device_class = cls->name, .count = largest->count}});
      for (size_t a : unserved) mapped.emplace_back(a, largest->request);
    }
    auto order = [&](size_t a) { return std::make_pair(!asks[a].long_lived, asks[a].container); };  // long-lived first
    std::stable_sort(mapped.begin(), mapped.end(), [&](const auto& x, const auto& y) { return order(x.first) < order(y.first); });
    for (const auto& [a, request] : mapped) {
      out.mappings.push_back(RequestMapping{.container = all[asks[a].container]->name, .resource = resource, .request = request});
    }
  }
  if (out.claim.requests.empty()) return std::nullopt;
  std::sort(out.claim.requests.begin(), out.claim.requests.end(),
            [](const DeviceRequest& a, const DeviceRequest& b) { return a.name < b.name; });
  return out;
}

}  // namespace gpusched::dra
