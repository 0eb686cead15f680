// File: drift.h
//
// The check no peer has: what gpusched booked on a node (the ledger's view, from the bound pods'
// requests and result annotations) against what runs on its GPUs (nvidia-smi's processes and
// memory). A GPU is drifting when
//   - it is used beyond what is booked on it: mGPU containers booked there hold some MiB, and the
//     processes on it use more than that plus a tolerance (CUDA contexts cost a few hundred MiB
//     beyond what a container asks);
//   - it is used by no booked pod: processes run on a GPU that no mGPU container is booked on,
//     beyond the number of whole GPUs the node's whole-GPU pods hold (the device plugin picks
//     their devices, so gpusched does not know which ones they are).
// A process whose memory is unknown (GpuProcess::used_mib) is no evidence of the first: a GPU
// drifts only when the processes whose memory is known use more than allowed. It still counts as
// a process for the second.
// A MIG-enabled GPU is not checked: its slices serve pods gpusched does not book per GPU. Nor is a
// GPU that a ResourceClaim holds (nvidia-dra nodes): the claim's pods may use all of it. The
// claims' devices are counted rather than every GPU of an nvidia-dra node skipped, so that a GPU
// no claim holds is still checked there: processes on it are drift like anywhere else.
// HAMi #2923 and volcano PR #5253 were allocation bugs of exactly these two shapes.
//
// Pure: the result depends only on the arguments.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gpusched/agent/nvidia_smi.h"
#include "gpusched/dra/types.h"
#include "gpusched/model/allocation.h"
#include "gpusched/model/gpu.h"
#include "gpusched/model/pod.h"

namespace gpusched::agent {

struct DriftOptions {
  // Memory a GPU may use beyond its bookings: the larger of these.
  int64_t tolerance_mib = 512;
  double tolerance_fraction = 0.05;  // of what is booked there
};

struct GpuDrift {
  int index = -1;      // the GPU; -1 for a node-wide finding (whole GPUs in use without bookings)
  GpuDriftKind kind = GpuDriftKind::kNone;
  // The GPUs it is about: {index}; for the node-wide finding those in use without bookings when
  // the node has no whole-GPU pods (otherwise which of them drift is unknown: none is named).
  std::vector<int> gpus;
  std::string reason;  // what was seen against what was booked, with the pods booked there

  bool operator==(const GpuDrift&) const = default;
};

// What gpusched's ledger books for `pods`, the unfinished pods bound to one node: the allocation
// each GPU pod records (placement/allocation_record.h: requests and result annotations).
std::vector<Allocation> BookedBy(const std::vector<Pod>& pods);

// The UUIDs of the GPUs that `claims` hold: each device of their allocations (adminAccess results
// hold nothing) looked up by driver, pool and name in `slices` (the node's ResourceSlices), by its
// attribute "parentUUID" (a MIG device: the GPU it is carved from) or else "uuid", unqualified or
// in the driver's domain. A device missing from `slices` or without either attribute is left out.
std::set<std::string> ClaimedGpuUuids(const std::vector<dra::ResourceClaim>& claims, const std::vector<dra::ResourceSlice>& slices);

// The drifting GPUs of a node whose GPUs are `gpus`, whose bound pods hold `booked`, and whose
// pods' ResourceClaims hold the GPUs of UUIDs `claimed` (ClaimedGpuUuids).
std::vector<GpuDrift> FindDrift(const std::vector<PhysicalGpu>& gpus, const std::vector<Allocation>& booked,
                                const std::set<std::string>& claimed = {}, const DriftOptions& options = {});

}  // namespace gpusched::agent
