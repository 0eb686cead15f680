// File: dra_example.h
//
// A DRA cluster and a stream of pods to place on it, for `gpusched replay --snapshot`, written as
// the API server writes them: nodes labelled nvidia-dra with CPU and memory but no nvidia.com/gpu
// (so DRA serves it, KEP 5004), one ResourceSlice per node of GPUs under PCIe roots of four, the
// DeviceClass gpu.nvidia.com mapping nvidia.com/gpu, and pods that ask GPUs either through a
// ResourceClaim (listed in the cluster, not allocated) or as `limits: {nvidia.com/gpu: n}`.
//
// The pods ask 1, 2, 4 or 8 GPUs (50/25/15/10 %, seeded), 12 CPUs and 96 GiB of memory per GPU,
// until they ask `demand` times the cluster's GPUs.
//
// Pure: the same options give the same bytes.
#pragma once

#include <cstdint>
#include <string>

namespace gpusched::replay {

struct DraExampleOptions {
  int nodes = 200;
  int gpus_per_node = 8;
  double demand = 1.1;       // GPUs asked by all pods, as a multiple of the cluster's
  double claim_share = 0.5;  // of the pods, those with a ResourceClaim; the rest ask nvidia.com/gpu
  uint64_t seed = 42;
};

struct DraExample {
  std::string cluster_json;  // a v1 List: Nodes, ResourceSlices, the DeviceClass, ResourceClaims
  std::string pods_json;     // a v1 List of pending Pods, in arrival order
};

DraExample MakeDraExample(const DraExampleOptions& options);

}  // namespace gpusched::replay
