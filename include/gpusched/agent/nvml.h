// File: nvml.h
//
// The node's GPUs through NVML, when libnvidia-ml is present at run time: loaded with dlopen, never
// a build dependency (the agent falls back to nvidia-smi without it). It reads what nvidia_smi.h
// reads: index (minor number), UUID, name, memory, PCI bus id, MIG mode, volatile uncorrectable
// ECC errors, row remapping (pending, failed), and the compute processes with their memory.
// Health follows nvidia_smi.h's rules; a query the GPU does not support is no evidence.
#pragma once

#include <string>
#include <vector>

#include "gpusched/agent/nvidia_smi.h"
#include "gpusched/common/status.h"

namespace gpusched::agent {

// Reads the GPUs through the NVML library `library` ("libnvidia-ml.so.1" on a node). Errors:
// NotFound when the library cannot be loaded or lacks a function the agent needs; Unavailable
// when NVML fails (its error code named).
StatusOr<std::vector<PhysicalGpu>> ReadNvml(const std::string& library = "libnvidia-ml.so.1");

}  // namespace gpusched::agent
