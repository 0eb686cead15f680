// File: topology.h
//
// How a node's GPUs are connected, from `nvidia-smi topo -m`: a matrix whose header names the
// columns (GPU0 GPU1 ... then NICs and "CPU Affinity"...) and whose rows start with a GPU's name.
// A cell "NV<n>" is n bonded NVLinks; "PIX" (at most one PCIe bridge) and "PXB" (several bridges,
// no host bridge) put the two GPUs behind one PCIe switch; PHB, NODE and SYS cross the host bridge
// or the CPU interconnect and make no peers. Newer drivers underline the header with terminal
// escapes, which are ignored. GPUs are named by nvidia-smi's index (PhysicalGpu::smi_index).
//
// Pure: no I/O.
#pragma once

#include <map>
#include <string_view>
#include <vector>

#include "gpusched/agent/nvidia_smi.h"
#include "gpusched/common/status.h"

namespace gpusched::agent {

// Peers of one GPU, by nvidia-smi index.
struct GpuLinks {
  std::vector<int> nvlink;
  std::vector<int> pcie;

  bool operator==(const GpuLinks&) const = default;
};

// The peers of each GPU row in the matrix, by nvidia-smi index. Errors: InvalidArgument when no
// header names a GPU column, or a GPU row has fewer cells than the header has GPU columns.
StatusOr<std::map<int, GpuLinks>> ParseTopologyMatrix(std::string_view text);

// Gives each GPU in `gpus` its peers from `links`, translated from nvidia-smi indices to indices
// (minor numbers); a peer the report does not list is dropped.
void AttachPeers(const std::map<int, GpuLinks>& links, std::vector<PhysicalGpu>* gpus);

}  // namespace gpusched::agent
