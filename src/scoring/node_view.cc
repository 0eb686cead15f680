// File: node_view.cc
//
// The allocation rules every policy shares on a NodeView: whether a pod shape fits (CPU, memory,
// model, enough GPUs with the milli it asks), the best-fit GPU for a sharing pod, placement (whole
// GPUs lowest index first), and the table of model names (at most 64).
#include "gpusched/scoring/node_view.h"

#include <algorithm>

namespace gpusched::scoring {

int64_t NodeView::IdleMilli() const {
  int64_t sum = 0;
  for (int i = 0; i < gpu_count; ++i) sum += gpu_free[i];
  return sum;
}

int NodeView::FullyFree() const {
  int n = 0;
  for (int i = 0; i < gpu_count; ++i) n += gpu_free[i] >= kMilliPerGpu ? 1 : 0;
  return n;
}

bool NodeView::HasTags() const {
  return std::any_of(tags.begin(), tags.end(), [](int16_t t) { return t > 0; });
}

bool Fits(const PodShape& pod, const NodeView& node) {
  if (pod.cpu > node.cpu_free || pod.mem > node.mem_free) return false;
  if (!pod.uses_gpu()) return true;
  if (node.gpu_count == 0) return false;
  if (!ModelAllowed(pod.spec, node.model)) return false;
  int enough = 0;
  for (int i = 0; i < node.gpu_count; ++i) enough += node.gpu_free[i] >= pod.milli ? 1 : 0;
  return enough >= pod.gpus;
}

int BestFitGpu(const PodShape& pod, const NodeView& node) {
  int best = -1;
  for (int i = 0; i < node.gpu_count; ++i) {
    if (node.gpu_free[i] < pod.milli) continue;
    if (best < 0 || node.gpu_free[i] < node.gpu_free[best]) best = i;
  }
  return best;
}

bool Place(const PodShape& pod, int gpu, NodeView* node) {
  if (!Fits(pod, *node)) return false;
  if (pod.sharing()) {
    if (gpu < 0 || gpu >= node->gpu_count || node->gpu_free[gpu] < pod.milli) return false;
    node->gpu_free[gpu] -= pod.milli;
  } else if (pod.uses_gpu()) {
    int left = pod.gpus;
    for (int i = 0; i < node->gpu_count && left > 0; ++i) {
      if (node->gpu_free[i] >= pod.milli) {
        node->gpu_free[i] -= pod.milli;
        --left;
      }
    }
  }
  node->cpu_free -= pod.cpu;
  node->mem_free -= pod.mem;
  if (pod.tag() >= 0) ++node->tags[pod.tag()];
  return true;
}

int ModelTable::Intern(std::string_view model) {
  if (model.empty()) return -1;
  int id = Find(model);
  if (id >= 0) return id;
  if (names_.size() >= 64) return -1;
  names_.emplace_back(model);
  return static_cast<int>(names_.size()) - 1;
}

int ModelTable::Find(std::string_view model) const {
  for (size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == model) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace gpusched::scoring
