// File: units.h
//
// Units used everywhere inside gpusched. Compute is milli-GPU (1000 = one whole GPU); an mGPU
// core percent is 10 milli-GPU. GPU memory is MiB in int64. Conversions from Kubernetes text
// happen once, in src/kubejson.
#pragma once

#include <cstdint>

namespace gpusched {

inline constexpr int64_t kMilliPerGpu = 1000;
inline constexpr int64_t kCorePercentPerGpu = 100;
inline constexpr int64_t kMilliPerCorePercent = kMilliPerGpu / kCorePercentPerGpu;

// mGPU contract limits (VKE).
inline constexpr int kMaxInstancesPerGpu = 16;
inline constexpr int64_t kMinPartialMemoryMib = 256;
inline constexpr int kMaxCardsPerContainer = 8;
inline constexpr int64_t kMinPerCardMemoryMib = 1024;
inline constexpr int64_t kMaxPerCardMemoryMib = 81920;

// Largest GPU quantity gpusched accepts from an object (a GPU count, core percent or MiB): 2^32.
// Products with kMilliPerGpu and sums over a whole cluster then stay far inside int64.
inline constexpr int64_t kMaxGpuQuantity = int64_t{1} << 32;

inline constexpr int64_t MilliFromCorePercent(int64_t percent) { return percent * kMilliPerCorePercent; }
inline constexpr int64_t CorePercentFromMilli(int64_t milli) { return milli / kMilliPerCorePercent; }

}  // namespace gpusched
