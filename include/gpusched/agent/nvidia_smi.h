// File: nvidia_smi.h
//
// The node's GPUs as `nvidia-smi -q -x` reports them, reduced to what gpusched publishes and what
// the agent checks: index (minor_number), UUID, product name, framebuffer size, PCI bus id, MIG
// mode, health, and the processes with the memory each uses.
//
// Health: a GPU is unhealthy when its counters show memory it can no longer trust: volatile
// uncorrectable ECC errors in whichever layout the driver writes them (DTD v11, the 510 series:
// double_bit/total or the sum of its per-memory counters; DTD v12, the 535 series:
// sram_uncorrectable and dram_uncorrectable; later drivers: sram_uncorrectable_parity and
// _secded beside dram_uncorrectable), a row remap pending (the GPU needs a reset) or failed,
// pages pending retirement, the SRAM error threshold exceeded, or unrepairable memory. A counter
// the GPU reports as "N/A" (the H200 reports retired pages so: row remapping replaced them) is not
// evidence either way. Correctable errors alone leave it healthy.
//
// Pure: no I/O.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/model/gpu.h"

namespace gpusched::agent {

// A process using a GPU, with the framebuffer it holds there.
struct GpuProcess {
  int64_t pid = 0;
  std::string name;
  // nullopt when unknown: nvidia-smi writes "N/A" and NVML NVML_VALUE_NOT_AVAILABLE when it cannot
  // tell (no access to the process, e.g. another PID namespace); never a guess, never 0.
  std::optional<int64_t> used_mib;
};

struct PhysicalGpu {
  int index = 0;             // minor_number: /dev/nvidiaN, the index the device plugin uses
  // nvidia-smi's own index (its order in the report, PCI bus order), which `nvidia-smi mig` and
  // `nvidia-smi topo` name GPUs by; it need not equal the minor number.
  int smi_index = 0;
  std::string uuid;          // "GPU-..."
  std::string product;       // "NVIDIA H200"
  int64_t memory_mib = 0;    // fb_memory_usage/total
  int64_t used_mib = 0;      // fb_memory_usage/used
  std::string pci_bus_id;    // "00000000:00:06.0" (the XML's 8-digit domain)
  int numa_node = -1;        // -1 unless resolved (sysfs, see gpu_devices.h)
  bool mig_enabled = false;  // mig_mode/current_mig
  std::vector<MigInstance> mig_instances;  // gpu_devices.h: AttachMigInstances
  int mig_slices = 0;                      // memory slices; 0 unknown
  std::vector<int> nvlink_peers;           // topology.h, by index
  std::vector<int> pcie_peers;
  bool healthy = true;
  std::string health_reason;  // why unhealthy; "" when healthy
  std::vector<GpuProcess> processes;
};

// Returns the GPUs in the document, by index. Errors: InvalidArgument for text that is not XML,
// a root other than nvidia_smi_log, or a GPU without a readable minor_number or UUID (named by
// its PCI bus id).
StatusOr<std::vector<PhysicalGpu>> ParseNvidiaSmiXml(std::string_view xml);

}  // namespace gpusched::agent
