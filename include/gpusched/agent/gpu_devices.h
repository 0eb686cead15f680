// File: gpu_devices.h
//
// What the node agent publishes in gpusched.io/gpu-devices for the GPUs nvidia-smi reports
// (nvidia_smi.h): index, UUID, model (the product name with spaces as dashes, "NVIDIA-H200"),
// framebuffer MiB, NUMA node, health, MIG mode and instances, NVLink and PCIe-switch peers
// (topology.h), and the agent's drift finding (drift.h). The NUMA node comes from the XML's PCI bus id through
// sysfs (<root>/bus/pci/devices/<domain:bus:dev.fn>/numa_node; nvidia-smi writes an 8-digit
// domain, Linux a 4-digit one): nvidia-smi's XML has no NUMA field.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpusched/agent/drift.h"
#include "gpusched/agent/nvidia_smi.h"
#include "gpusched/common/status.h"
#include "gpusched/model/gpu.h"

namespace gpusched::agent {

// "NVIDIA H200" -> "NVIDIA-H200".
std::string ModelName(std::string_view product);

// The sysfs path of the GPU's PCI device ("<sysfs_root>/bus/pci/devices/0000:00:06.0"), or "" for
// a bus id it cannot read.
std::string PciDevicePath(std::string_view pci_bus_id, std::string_view sysfs_root);

// Reads the NUMA node of each GPU from sysfs under `sysfs_root` ("/sys" on a node); a GPU whose
// file is missing or says -1 keeps -1.
void ResolveNumaNodes(std::string_view sysfs_root, std::vector<PhysicalGpu>* gpus);

// Gives each MIG-enabled GPU of `gpus` its GPU instances from `nvidia-smi mig -lgi` (`lgi`), with
// each instance's memory from its profile in `nvidia-smi mig -lgip` (`lgip`; may be empty: memory
// left 0), and the GPU's memory slices from the placements in `nvidia-smi mig -lgipp` (`lgipp`;
// may be empty: left 0). GPUs are matched by nvidia-smi index. Errors: InvalidArgument from the
// parsers.
Status AttachMigInstances(std::string_view lgi, std::string_view lgip, std::string_view lgipp, std::vector<PhysicalGpu>* gpus);

// The published description of `gpus`, each GPU marked with the first of `drift` about it.
std::vector<GpuDevice> ToGpuDevices(const std::vector<PhysicalGpu>& gpus, const std::vector<GpuDrift>& drift = {});

}  // namespace gpusched::agent
