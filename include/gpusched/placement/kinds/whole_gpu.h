// File: whole_gpu.h
//
// The whole-GPU kind (nodes labelled nvidia, or unlabelled): pods ask for nvidia.com/gpu, NVIDIA's
// device plugin picks the GPUs, and a node offers its allocatable nvidia.com/gpu, which must match
// the healthy GPUs it publishes (gpusched.io/gpu-devices) when it publishes them.
#pragma once

#include <memory>

#include "gpusched/placement/kind.h"

namespace gpusched::placement {

std::unique_ptr<Kind> MakeWholeGpuKind();

}  // namespace gpusched::placement
