// File: kube_scheduler_score.cc
//
// kube_scheduler_score.h: NodeResourcesFit plus NodeResourcesBalancedAllocation.
#include "kube_scheduler_score.h"

#include <algorithm>
#include <cmath>

namespace gpusched::replay {
namespace {

constexpr int64_t kMaxScore = 100;

// NodeResourcesFit's score of one resource.
int64_t FitScore(const ScoredResource& r, bool most_allocated) {
  int64_t requested = r.nonzero_requested;
  if (most_allocated) return std::min(requested, r.capacity) * kMaxScore / r.capacity;
  return requested > r.capacity ? 0 : (r.capacity - requested) * kMaxScore / r.capacity;
}

// A resource as the churn replay's node tracks it: not listed when untracked. Its pods ask CPU
// and memory each (a trace row's), so the non-zero requests are the requests.
ScoredResource Of(int64_t free, int64_t cap, int64_t asks) {
  if (cap <= 0 || cap >= scoring::kUntracked) return ScoredResource{};
  return ScoredResource{.capacity = cap, .nonzero_requested = cap - free + asks, .requested = cap - free + asks};
}

}  // namespace

int64_t DefaultResourceScore(const std::array<ScoredResource, 2>& resources, bool most_allocated) {
  int64_t fit = 0, listed = 0;
  double fractions[2] = {0, 0};
  for (const ScoredResource& r : resources) {
    if (r.capacity <= 0) continue;
    fit += FitScore(r, most_allocated);
    fractions[listed++] = std::min(1.0, static_cast<double>(r.requested) / static_cast<double>(r.capacity));
  }
  if (listed == 0) return kMaxScore;  // nothing to fit; BalancedAllocation's deviation is 0
  double deviation = listed == 2 ? std::abs(fractions[0] - fractions[1]) / 2 : 0;  // of two values
  return fit / listed + static_cast<int64_t>((1 - deviation) * kMaxScore);
}

int64_t KubeSchedulerScore(const scoring::PodShape& pod, const scoring::NodeView& node) {
  return DefaultResourceScore({Of(node.cpu_free, node.cpu_cap, pod.cpu), Of(node.mem_free, node.mem_cap, pod.mem)});
}

}  // namespace gpusched::replay
