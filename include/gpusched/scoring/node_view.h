// File: node_view.h
//
// What a scoring policy sees: a node as free CPU, free memory, a GPU model and the free milli-GPU
// of each GPU; a pod as (CPU, memory, GPU count, milli per GPU, allowed models). The replay fills
// every field; the extender fills the GPU fields and leaves CPU and memory untracked (kube-scheduler
// checks those itself).
//
// Allocation rules shared by every policy:
//   - whole-GPU pods (milli == 1000) take the lowest-index fully free GPUs;
//   - a sharing pod (one GPU, milli < 1000) takes the GPU its policy chooses among those with
//     enough free milli.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/units.h"

namespace gpusched::scoring {

inline constexpr int kMaxGpus = 16;  // GPUs per node a view can hold
inline constexpr int64_t kUntracked = int64_t{1} << 50;  // CPU or memory nobody tracks: never short
inline constexpr int kTags = 9;      // affinity tags: 0 = sharing pods, k = pods of k whole GPUs

struct PodShape {
  int64_t cpu = 0;     // milli-CPU
  int64_t mem = 0;     // MiB
  int gpus = 0;        // GPUs
  int32_t milli = 0;   // per GPU; 1000 = whole
  uint64_t spec = 0;   // bit m: GPU model m is allowed; 0 = any model

  bool uses_gpu() const { return gpus > 0 && milli > 0; }
  bool sharing() const { return gpus == 1 && milli > 0 && milli < kMilliPerGpu; }
  int64_t gpu_milli() const { return uses_gpu() ? gpus * static_cast<int64_t>(milli) : 0; }
  // Returns the affinity tag (GpuClustering): 0 for sharing, k for k whole GPUs, -1 for CPU-only.
  int tag() const { return !uses_gpu() ? -1 : sharing() ? 0 : (gpus < kTags ? gpus : kTags - 1); }

  bool operator==(const PodShape&) const = default;
};

struct NodeView {
  int model = -1;  // interned GPU model (ModelTable); -1 = unknown
  int64_t cpu_free = kUntracked;
  int64_t mem_free = kUntracked;
  int64_t cpu_cap = kUntracked;  // what the node has when empty (reservation.h); Place leaves it
  int64_t mem_cap = kUntracked;
  int gpu_count = 0;
  std::array<int32_t, kMaxGpus> gpu_free{};  // milli free on each GPU, by index
  std::array<int16_t, kTags> tags{};         // GPU pods on the node by affinity tag

  int64_t IdleMilli() const;  // free milli over all GPUs
  int FullyFree() const;      // GPUs with all 1000 milli free
  bool HasTags() const;

  bool operator==(const NodeView&) const = default;
};

// True if a pod of model mask `spec` (PodShape::spec; 0 = any) may use GPUs of `model`.
inline bool ModelAllowed(uint64_t spec, int model) {
  return spec == 0 || (model >= 0 && (spec & (uint64_t{1} << model)) != 0);
}

// Returns true if `pod` can run on `node`: CPU, memory, model and GPUs.
bool Fits(const PodShape& pod, const NodeView& node);

// Places `pod` on `node`: whole GPUs on the lowest-index fully free GPUs, a sharing pod on GPU
// `gpu` (REQUIRES: it has enough free milli). Updates CPU, memory and tags. Returns false (and
// changes nothing) if the pod does not fit.
bool Place(const PodShape& pod, int gpu, NodeView* node);

// Returns the sharing GPU that the "best fit" rule picks: least free among those with enough,
// lowest index on ties; -1 if none.
int BestFitGpu(const PodShape& pod, const NodeView& node);

// Interns GPU model names into small ids for PodShape::spec masks. At most 64 models.
class ModelTable {
 public:
  // Returns the id of `model`, adding it if new; -1 for "" or when the table is full.
  int Intern(std::string_view model);
  // Returns the id of `model`, or -1.
  int Find(std::string_view model) const;
  const std::string& Name(int id) const { return names_.at(static_cast<size_t>(id)); }
  size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
};

}  // namespace gpusched::scoring
