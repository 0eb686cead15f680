// File: dra_links.cc
//
// The NVLink choices of dra_links.h: the node's GPU devices mapped to its GPUs by UUID, and the
// connected sets of the free ones ranked as gpu_links.h ranks them.
#include "gpusched/placement/dra_links.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <map>
#include <utility>

namespace gpusched::placement {
namespace {

constexpr size_t kMaxSets = 256;

// The node's GPU devices by GPU position (driver empty where none maps there) and the free ones.
struct GpuDevices {
  std::vector<dra::DeviceId> by_position;
  GpuSet free = 0;
};

GpuDevices MapDevices(const NodeState& node, const dra::SliceIndex& slices, const dra::AllocatedDevices& held,
                      const std::vector<std::string>& gpu_drivers) {
  std::map<std::string, int, std::less<>> position;
  for (size_t p = 0; p < node.devices.size(); ++p) {
    if (!node.devices[p].uuid.empty()) position[node.devices[p].uuid] = static_cast<int>(p);
  }
  GpuDevices out;
  out.by_position.resize(node.devices.size());
  for (const dra::IndexedSlice* s : slices.PinnedTo(node.node.name)) {
    const dra::ResourceSlice& slice = s->slice();
    if (std::find(gpu_drivers.begin(), gpu_drivers.end(), slice.driver) == gpu_drivers.end()) continue;
    for (const dra::Device& d : slice.devices) {
      if (!dra::StringAttribute(d, slice.driver, "parentUUID").empty()) continue;  // a MIG device
      auto it = position.find(dra::StringAttribute(d, slice.driver, "uuid"));
      if (it == position.end()) continue;
      dra::DeviceId id{slice.driver, slice.pool, d.name};
      if (!held.Holds(id) && node.gpus[it->second].healthy) out.free |= GpuSet{1} << it->second;
      out.by_position[it->second] = std::move(id);
    }
  }
  return out;
}

// The connected sets of `k` GPUs among `free`, best first.
std::vector<GpuSet> Ranked(const GpuLinks& links, GpuSet free, int k) {
  std::vector<GpuSet> sets;
  ConnectedSets(links.nvlink, free, k, kMaxSets, &sets);
  std::vector<std::pair<std::pair<int, int>, GpuSet>> keyed;
  for (GpuSet set : sets) {
    keyed.push_back({{LargestConnected(links.nvlink, free & ~set), LinksInside(links.nvlink, set)}, set});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  sets.clear();
  for (const auto& [key, set] : keyed) sets.push_back(set);
  return sets;
}

void Restrict(const GpuDevices& devices, const dra::ResourceClaim* claim, const std::string& request, GpuSet set,
              dra::DeviceRestriction* out) {
  std::set<dra::DeviceId>& only = (*out)[{claim, request}];
  for (; set != 0; set &= set - 1) only.insert(devices.by_position[std::countr_zero(set)]);
}

// True if `r` asks an exact count of 2 to 64 devices of a class named after a GPU driver.
bool MultiGpu(const dra::ExactRequest& r, const std::vector<std::string>& gpu_drivers) {
  return std::find(gpu_drivers.begin(), gpu_drivers.end(), r.device_class) != gpu_drivers.end() &&
         r.allocation_mode == "ExactCount" && r.count >= 2 && r.count <= 64;
}

// The requests of `claims` that count (dra_links.h): an exact count of 2 to 64 devices of a class
// named after a GPU driver (the NVIDIA chart's gpu.nvidia.com).
std::vector<std::pair<const dra::ResourceClaim*, const dra::DeviceRequest*>> MultiGpuRequests(
    const std::vector<const dra::ResourceClaim*>& claims, const std::vector<std::string>& gpu_drivers) {
  std::vector<std::pair<const dra::ResourceClaim*, const dra::DeviceRequest*>> multi;
  for (const dra::ResourceClaim* claim : claims) {
    for (const dra::DeviceRequest& r : claim->requests) {
      if (r.exactly && MultiGpu(*r.exactly, gpu_drivers)) multi.push_back({claim, &r});
    }
  }
  return multi;
}

// The requests whose chosen devices LinksOfChoice judges, by claim position and the name their
// results carry: each multi-GPU `exactly` request, and each multi-GPU subrequest of a
// `firstAvailable` list ("request/subrequest"; only the one chosen has results).
std::vector<std::pair<size_t, std::string>> JudgedRequests(const std::vector<const dra::ResourceClaim*>& claims,
                                                           const std::vector<std::string>& gpu_drivers) {
  std::vector<std::pair<size_t, std::string>> out;
  for (size_t c = 0; c < claims.size(); ++c) {
    for (const dra::DeviceRequest& r : claims[c]->requests) {
      if (r.exactly && MultiGpu(*r.exactly, gpu_drivers)) out.emplace_back(c, r.name);
      for (const dra::ExactRequest& sub : r.first_available) {
        if (MultiGpu(sub, gpu_drivers)) out.emplace_back(c, r.name + "/" + sub.name);
      }
    }
  }
  return out;
}

// "GPU1+GPU2": the device indices of `set`'s positions.
std::string GpuNames(const NodeState& node, GpuSet set) {
  std::string out;
  for (; set != 0; set &= set - 1) {
    out += fmt::format("{}GPU{}", out.empty() ? "" : "+", node.devices[std::countr_zero(set)].index);
  }
  return out;
}

}  // namespace

bool HasMultiGpuRequest(const std::vector<const dra::ResourceClaim*>& claims, const std::vector<std::string>& gpu_drivers) {
  return !JudgedRequests(claims, gpu_drivers).empty();
}

ChosenLinks LinksOfChoice(const NodeState& node, const std::vector<const dra::ResourceClaim*>& claims,
                          const std::vector<dra::AllocationResult>& chosen, const dra::SliceIndex& slices,
                          const std::vector<std::string>& gpu_drivers) {
  if (node.links == nullptr || !node.links->islands || chosen.size() != claims.size()) return {};
  std::vector<std::pair<size_t, std::string>> judged = JudgedRequests(claims, gpu_drivers);
  if (judged.empty()) return {};
  GpuDevices devices = MapDevices(node, slices, dra::AllocatedDevices{}, gpu_drivers);
  std::map<dra::DeviceId, int> position;
  for (size_t p = 0; p < devices.by_position.size(); ++p) {
    if (!devices.by_position[p].driver.empty()) position[devices.by_position[p]] = static_cast<int>(p);
  }
  ChosenLinks out;
  for (const auto& [c, request] : judged) {
    GpuSet set = 0;
    for (const dra::DeviceResult& d : chosen[c].results) {
      if (d.request != request) continue;
      auto it = position.find(d.id);
      if (it == position.end()) return {};  // a device the agent does not describe: the links cannot judge it
      set |= GpuSet{1} << it->second;
    }
    if (set == 0) continue;  // a subrequest not chosen
    if (!Connected(node.links->nvlink, set)) {
      return ChosenLinks{.standing = LinkedStanding::kScattered, .claim = c, .request = request, .gpus = GpuNames(node, set)};
    }
    if (out.request.empty()) out = ChosenLinks{.standing = LinkedStanding::kConnected, .claim = c, .request = request, .gpus = GpuNames(node, set)};
  }
  return out;
}

std::string DescribeChosenLinks(const ChosenLinks& links, std::string_view claim_name) {
  return fmt::format("the devices allocated here for claim {} request {} would be {}, {}NVLink-connected", claim_name,
                     links.request, links.gpus, links.standing == LinkedStanding::kScattered ? "not " : "");
}

std::vector<dra::DeviceRestriction> LinkedChoices(const NodeState& node, const std::vector<const dra::ResourceClaim*>& claims,
                                                  const dra::SliceIndex& slices, const dra::AllocatedDevices& held,
                                                  const std::vector<std::string>& gpu_drivers, size_t max) {
  if (node.links == nullptr || !node.links->islands) return {};
  std::vector<std::pair<const dra::ResourceClaim*, const dra::DeviceRequest*>> multi = MultiGpuRequests(claims, gpu_drivers);
  if (multi.empty()) return {};
  GpuDevices devices = MapDevices(node, slices, held, gpu_drivers);
  auto count = [](const dra::DeviceRequest* r) { return static_cast<int>(r->exactly->count); };
  std::vector<dra::DeviceRestriction> out;
  for (GpuSet first : Ranked(*node.links, devices.free, count(multi[0].second))) {
    if (out.size() == max) break;
    dra::DeviceRestriction choice;
    Restrict(devices, multi[0].first, multi[0].second->name, first, &choice);
    GpuSet left = devices.free & ~first;
    bool whole = true;
    for (size_t i = 1; i < multi.size() && whole; ++i) {
      std::vector<GpuSet> sets = Ranked(*node.links, left, count(multi[i].second));
      whole = !sets.empty();
      if (!whole) break;
      Restrict(devices, multi[i].first, multi[i].second->name, sets.front(), &choice);
      left &= ~sets.front();
    }
    if (whole) out.push_back(std::move(choice));
  }
  return out;
}

}  // namespace gpusched::placement
