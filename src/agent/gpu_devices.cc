#include "gpusched/agent/gpu_devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>

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

std::vector<GpuDevice> ToGpuDevices(const std::vector<PhysicalGpu>& gpus) {
  std::vector<GpuDevice> out;
  out.reserve(gpus.size());
  for (const PhysicalGpu& g : gpus) {
    out.push_back(GpuDevice{.index = g.index, .uuid = g.uuid, .model = ModelName(g.product), .memory_mib = g.memory_mib,
                            .numa_node = g.numa_node, .healthy = g.healthy});
  }
  return out;
}

}  // namespace gpusched::agent
