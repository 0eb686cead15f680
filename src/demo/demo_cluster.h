// File: demo_cluster.h
//
// The cluster `gpusched serve` serves when no source is given: one of every node mode and state.
//
//   gpu-a100-01   label absent (nvidia)  8 GPUs, 2 in use
//   gpu-a100-02   nvidia                 8 GPUs, 6 in use
//   mgpu-a10-01   mgpu, fixed-share      4 x A10 24 GiB, shared: GPU0 two instances, GPU2 whole card
//   mgpu-mixed-01 mgpu, native-burst     published per-GPU description: A100 80 GiB, A100 40 GiB,
//                                        index 2 missing (lost), T4 15 GiB; one multi-card pod
//   dra-h200-01   nvidia-dra             4 x H200 in a ResourceSlice (two PCIe roots); GPU 0 held by
//                                        claim ml/serve-a-gpu of pod serve-a; claim ml/infer-pair pending
//   gpu-badlabel-01 mgpu-v2              invalid label: takes no GPU pods
//   gpu-switch-01 mgpu                   switching: a whole-GPU pod from its nvidia days still runs
#pragma once

#include <string_view>

namespace gpusched::demo {

// Returns the demo cluster as Kubernetes List JSON.
std::string_view DemoClusterJson();

}  // namespace gpusched::demo
