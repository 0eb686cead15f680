// File: gpu_devices.cc
//
// The published GPU description assembled from what the agent read: model names from product names,
// NUMA nodes through sysfs from the PCI bus id (nvidia-smi's 8-digit domain cut to Linux's 4), MIG
// instances from nvidia-smi's tables, and the drift findings.
#include "gpusched/agent/gpu_devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>

#include "gpusched/dra/mig.h"

namespace gpusched::agent {

std::string ModelName(std::string_view product) {
  std::string out(product);
  std::replace(out.begin(), out.end(), ' ', '-');
  return out;
}

std::string PciDevicePath(std::string_view pci_bus_id, std::string_view sysfs_root) {
  // "00000000:00:06.0" -> "0000:00:06.0"; a 4-digit domain stays as it is.
  size_t colon = pci_bus_id.find(':');
  if (colon == std::string_view::npos || colon < 4) return "";
  std::string id(pci_bus_id.substr(colon - 4));
  std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return fmt::format("{}/bus/pci/devices/{}", sysfs_root, id);
}

void ResolveNumaNodes(std::string_view sysfs_root, std::vector<PhysicalGpu>* gpus) {
  for (PhysicalGpu& g : *gpus) {
    std::string path = PciDevicePath(g.pci_bus_id, sysfs_root);
    if (path.empty()) continue;
    std::ifstream in(path + "/numa_node");
    int node = -1;
    if (in >> node && node >= 0) g.numa_node = node;
  }
}

Status AttachMigInstances(std::string_view lgi, std::string_view lgip, std::string_view lgipp, std::vector<PhysicalGpu>* gpus) {
  GPUSCHED_ASSIGN_OR_RETURN(auto by_smi_index, dra::ParseMigInstances(lgi));
  for (PhysicalGpu& g : *gpus) {
    if (!g.mig_enabled) continue;
    StatusOr<std::vector<dra::MigProfile>> read =
        lgipp.empty() ? dra::ParseMigProfileTable(lgip, g.smi_index) : dra::ParseMigProfiles(lgip, lgipp, g.smi_index);
    GPUSCHED_RETURN_IF_ERROR(read.status());
    const std::vector<dra::MigProfile>& profiles = *read;
    for (const dra::MigProfile& p : profiles) {
      for (int start : p.starts) g.mig_slices = std::max(g.mig_slices, start + p.slices);
    }
    auto it = by_smi_index.find(g.smi_index);
    if (it == by_smi_index.end()) continue;
    g.mig_instances = it->second;
    for (MigInstance& m : g.mig_instances) {
      auto p = std::find_if(profiles.begin(), profiles.end(), [&](const dra::MigProfile& x) { return x.id == m.profile_id; });
      if (p != profiles.end()) m.memory_mib = p->memory_mib;
    }
    std::sort(g.mig_instances.begin(), g.mig_instances.end(), [](const MigInstance& a, const MigInstance& b) { return a.start < b.start; });
  }
  return OkStatus();
}

std::vector<GpuDevice> ToGpuDevices(const std::vector<PhysicalGpu>& gpus, const std::vector<GpuDrift>& drift) {
  std::vector<GpuDevice> out;
  out.reserve(gpus.size());
  for (const PhysicalGpu& g : gpus) {
    GpuDevice d{.index = g.index, .uuid = g.uuid, .model = ModelName(g.product), .memory_mib = g.memory_mib,
                .numa_node = g.numa_node, .healthy = g.healthy, .mig_enabled = g.mig_enabled,
                .mig_instances = g.mig_instances, .mig_slices = g.mig_slices, .nvlink_peers = g.nvlink_peers, .pcie_peers = g.pcie_peers};
    for (const GpuDrift& f : drift) {
      if (d.drift == GpuDriftKind::kNone && std::find(f.gpus.begin(), f.gpus.end(), g.index) != f.gpus.end()) d.drift = f.kind;
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace gpusched::agent
