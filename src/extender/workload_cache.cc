// File: workload_cache.cc
//
// The workload cache: the observed target workload, rebuilt outside the lock from a newer snapshot
// once `refresh` has passed; concurrent builders may both build, and the later result is kept.
#include "gpusched/extender/workload_cache.h"

#include <vector>

#include "gpusched/placement/node_ranking.h"

namespace gpusched::extender {

std::shared_ptr<const scoring::TargetWorkload> WorkloadCache::Get(const inventory::InventorySnapshot& snapshot) const {
  auto now = clock_->Now();
  {
    MutexLock lock(&mu_);
    if (workload_ != nullptr && (version_ == snapshot.version() || now - built_at_ < refresh_)) return workload_;
  }
  // Built outside the lock: concurrent callers may both build; the later one is kept.
  std::vector<const placement::NodeState*> nodes;
  nodes.reserve(snapshot.nodes().size());
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) nodes.push_back(n.get());
  auto fresh = std::make_shared<const scoring::TargetWorkload>(placement::ObservedWorkload(nodes));
  MutexLock lock(&mu_);
  workload_ = fresh;
  version_ = snapshot.version();
  built_at_ = now;
  return fresh;
}

}  // namespace gpusched::extender
