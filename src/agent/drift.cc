// File: drift.cc
//
// The drift check over one node's GPUs: memory used beyond what the mGPU containers booked on a GPU
// allow, and GPUs in use that no booking covers beyond the node's whole-GPU pod count. MIG GPUs,
// and GPUs a ResourceClaim holds (matched by UUID through the node's slices), are skipped.
#include "gpusched/agent/drift.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>

#include "gpusched/dra/allocated_devices.h"
#include "gpusched/placement/allocation_record.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::agent {
namespace {

// What the ledger books on one GPU: the memory of the mGPU containers there, and their pods.
struct Booked {
  int64_t mib = 0;
  bool exclusive = false;
  std::vector<std::string> pods;
};

std::map<int, Booked> BookedByGpu(const std::vector<Allocation>& booked, int64_t* whole_gpus) {
  std::map<int, Booked> out;
  for (const Allocation& a : booked) {
    if (HasPayload(a.placement.kind, Payload::kCount)) *whole_gpus += a.placement.whole_gpus;
    if (!HasPayload(a.placement.kind, Payload::kShares)) continue;
    for (const ContainerAssignment& c : a.placement.containers) {
      for (int index : c.gpu_indices) {
        Booked& b = out[index];
        b.mib += c.mib_per_gpu;
        b.exclusive |= c.exclusive;
        std::string pod = a.pod_namespace + "/" + a.pod_name;
        if (std::find(b.pods.begin(), b.pods.end(), pod) == b.pods.end()) b.pods.push_back(pod);
      }
    }
  }
  return out;
}

// The memory the processes on a GPU are known to use, and how many use an amount nobody can tell.
struct ProcessUse {
  int64_t mib = 0;
  int unknown = 0;
};

ProcessUse UseOf(const PhysicalGpu& g) {
  ProcessUse use;
  for (const GpuProcess& p : g.processes) {
    if (p.used_mib) {
      use.mib += *p.used_mib;
    } else {
      ++use.unknown;
    }
  }
  return use;
}

// The finding for `g` when its processes are known to use more than `b` allows; a process of
// unknown memory is no evidence either way.
std::optional<GpuDrift> BeyondBooking(const PhysicalGpu& g, const Booked& b, const DriftOptions& options) {
  ProcessUse use = UseOf(g);
  int64_t allowed = b.mib + std::max(options.tolerance_mib, static_cast<int64_t>(options.tolerance_fraction * static_cast<double>(b.mib)));
  if (b.exclusive || use.mib <= allowed) return std::nullopt;
  std::string used = use.unknown == 0 ? fmt::format("{} MiB", use.mib)
                                      : fmt::format("at least {} MiB ({} of unknown memory)", use.mib, use.unknown);
  return GpuDrift{.index = g.index,
                  .kind = GpuDriftKind::kUsedBeyondBooking,
                  .gpus = {g.index},
                  .reason = fmt::format("GPU {} ({}): processes use {}, {} MiB booked by {}", g.index, g.uuid, used, b.mib,
                                        fmt::join(b.pods, ", "))};
}

}  // namespace

std::vector<Allocation> BookedBy(const std::vector<Pod>& pods) {
  std::vector<Allocation> out;
  for (const Pod& pod : pods) {
    if (!pod.bound() || pod.terminal()) continue;
    placement::PodRequest request = placement::AnalyzePod(pod);
    if (!request.device_plugin()) continue;
    out.push_back(placement::RecordedAllocation(pod, request));
  }
  return out;
}

std::set<std::string> ClaimedGpuUuids(const std::vector<dra::ResourceClaim>& claims, const std::vector<dra::ResourceSlice>& slices) {
  dra::AllocatedDevices held;
  for (const dra::ResourceClaim& c : claims) {
    if (c.allocation) held.Add(*c.allocation);
  }
  std::set<std::string> out;
  for (const dra::ResourceSlice& slice : slices) {
    for (const dra::Device& d : slice.devices) {
      if (!held.Holds(dra::DeviceId{.driver = slice.driver, .pool = slice.pool, .device = d.name})) continue;
      std::string parent = dra::StringAttribute(d, slice.driver, "parentUUID");
      std::string uuid = parent.empty() ? dra::StringAttribute(d, slice.driver, "uuid") : parent;
      if (!uuid.empty()) out.insert(uuid);
    }
  }
  return out;
}

std::vector<GpuDrift> FindDrift(const std::vector<PhysicalGpu>& gpus, const std::vector<Allocation>& booked,
                                const std::set<std::string>& claimed, const DriftOptions& options) {
  int64_t whole_gpus = 0;
  std::map<int, Booked> by_gpu = BookedByGpu(booked, &whole_gpus);
  std::vector<GpuDrift> out;
  std::vector<int> unbooked_in_use;
  for (const PhysicalGpu& g : gpus) {
    // A MIG-enabled GPU's slices serve pods of nvidia.com/mig-* or DRA, which gpusched does not
    // book here; a GPU a claim holds is its pods' (drift.h).
    if (g.mig_enabled || claimed.contains(g.uuid)) continue;
    auto it = by_gpu.find(g.index);
    if (it == by_gpu.end()) {
      if (!g.processes.empty()) unbooked_in_use.push_back(g.index);
      continue;
    }
    if (std::optional<GpuDrift> d = BeyondBooking(g, it->second, options)) out.push_back(std::move(*d));
  }
  if (static_cast<int64_t>(unbooked_in_use.size()) > whole_gpus) {
    out.push_back(GpuDrift{.index = -1,
                           .kind = GpuDriftKind::kUsedWithoutBooking,
                           // Which are the whole-GPU pods' is unknown: marked only when there are none.
                           .gpus = whole_gpus == 0 ? unbooked_in_use : std::vector<int>{},
                           .reason = fmt::format("GPUs {} run processes but no mGPU container is booked on them, and the "
                                                 "node's whole-GPU pods hold {} GPU{}",
                                                 fmt::join(unbooked_in_use, ", "), whole_gpus, whole_gpus == 1 ? "" : "s")});
  }
  return out;
}

}  // namespace gpusched::agent
