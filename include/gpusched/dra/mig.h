// File: mig.h
//
// A MIG-capable GPU as a partitionable DRA device (KEP 4815), built from what `nvidia-smi mig
// -lgip` and `-lgipp` print: one counter set per GPU holding its compute resources (SMs, copy
// engines, decoders, encoders, JPEG and OFA engines), its memory and one counter per memory
// slice; the full GPU consumes all of them, each MIG placement its profile's share and the
// memory slices it occupies. The allocator's counter rule then makes a full GPU and any of its
// MIG devices, and two MIG devices on overlapping slices, mutually exclusive.
//
// Names and attributes follow the NVIDIA DRA driver's DynamicMIG mode (dra.md §1.2.2): counter
// set "gpu-<i>-counter-set", counters camelCase→DNS ("copy-engines", "memory-slice-3"), devices
// "gpu-<i>" and "gpu-<i>-mig-<profile without dots>-<profile id>-<start slice>".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/dra/types.h"
#include "gpusched/model/gpu.h"

namespace gpusched::dra {

struct MigProfile {
  std::string name;  // "1g.18gb", "7g.141gb", "1g.18gb+me"
  int id = 0;
  int64_t memory_mib = 0;  // nvidia-smi's GiB column, to MiB
  int64_t multiprocessors = 0, copy_engines = 0, decoders = 0, encoders = 0, jpeg_engines = 0, ofa_engines = 0;
  std::vector<int> starts;  // placements: the first memory slice of each
  int slices = 0;           // memory slices each placement occupies
};

// Parses the profile table of `nvidia-smi mig -lgip` for GPU `gpu`: names, ids, memory and engines,
// without placements. Errors: InvalidArgument naming the line that does not parse.
StatusOr<std::vector<MigProfile>> ParseMigProfileTable(std::string_view lgip, int gpu = 0);

// Parses `nvidia-smi mig -lgi`, the GPU instances that exist, by nvidia-smi GPU index (memory_mib
// left 0: -lgip has it). A data row reads "|   0  MIG 1g.18gb   19   9   2:1   |"; every other
// line (borders, headers, "No GPU instances found") is skipped. Errors: InvalidArgument naming a
// data row whose numbers or placement do not read.
StatusOr<std::map<int, std::vector<MigInstance>>> ParseMigInstances(std::string_view lgi);

// Parses `nvidia-smi mig -lgip` and `-lgipp` output for GPU `gpu`. Errors: InvalidArgument naming
// the line that does not parse, or a profile with no placements.
StatusOr<std::vector<MigProfile>> ParseMigProfiles(std::string_view lgip, std::string_view lgipp, int gpu = 0);

struct MigGpu {
  int index = 0;
  std::string uuid;
  std::string product;     // "NVIDIA H200"
  int64_t memory_mib = 0;  // framebuffer of the full GPU
  std::string driver_version;
};

// Returns a ResourceSlice (driver gpu.nvidia.com, pool = node, generation 1, one slice) holding the
// GPU's counter set, the full GPU and every MIG placement of `profiles`. The full GPU's counters
// are the largest profile's compute (the whole GPU) and all memory slices.
ResourceSlice PartitionableGpuSlice(const std::string& node, const MigGpu& gpu, const std::vector<MigProfile>& profiles);

}  // namespace gpusched::dra
