// File: gpu.h
//
// One physical GPU as published for a node: either described by the node annotation
// gpusched.io/gpu-devices or synthesized from the node's allocatable aggregates.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpusched {

// One MIG GPU instance carved out of a GPU (`nvidia-smi mig -lgi`), placed on the GPU's memory
// slices [start, start + size) (an H100/H200 has 8).
struct MigInstance {
  std::string profile;    // "1g.18gb"
  int profile_id = 0;     // 19
  int instance_id = 0;    // the GPU instance id
  int start = 0;          // first memory slice
  int size = 0;           // memory slices
  int64_t memory_mib = 0; // the profile's memory (`-lgip`); 0 when unknown

  bool operator==(const MigInstance&) const = default;
};

// What the node agent found running on a GPU against what gpusched booked there (agent/drift.h).
enum class GpuDriftKind {
  kNone,
  kUsedBeyondBooking,   // processes use more memory than the mGPU containers booked there
  kUsedWithoutBooking,  // processes run on it, and no pod is booked on it
};

struct GpuDevice {
  int index = 0;             // device index on the node, as the node agent numbers it
  std::string uuid;          // "GPU-..."; empty when synthesized
  std::string model;         // e.g. "NVIDIA-A100-SXM4-80GB"; empty when unknown
  int64_t memory_mib = 0;    // framebuffer usable by mGPU containers
  int numa_node = -1;        // -1 when unknown
  bool healthy = true;       // unhealthy GPUs keep their allocations but take no new ones
  // MIG enabled: the GPU is partitioned into `mig_instances`, which the device plugin or DRA driver
  // serves; it is neither a whole GPU nor an mGPU share target.
  bool mig_enabled = false;
  std::vector<MigInstance> mig_instances;
  int mig_slices = 0;             // memory slices of the GPU (8 on an H100, 4 on an A30); 0 unknown
  std::vector<int> nvlink_peers;  // indices of GPUs joined to it by NVLink (`nvidia-smi topo -m`)
  std::vector<int> pcie_peers;    // indices of GPUs behind the same PCIe switch (PIX, PXB)
  GpuDriftKind drift = GpuDriftKind::kNone;  // the agent's last finding
  // The pods the kubelet gave this GPU, "namespace/name", as the agent read them from the
  // PodResources API (whole GPUs and shared replicas of nvidia.com/gpu); nullopt when the agent
  // did not read them (then which GPUs are busy on a whole-GPU node is unknown).
  std::optional<std::vector<std::string>> pods;

  bool operator==(const GpuDevice&) const = default;
};

}  // namespace gpusched
