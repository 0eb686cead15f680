// File: dra_decision_log.h
//
// The last DRA placement decisions (upstream's device choice and gpusched's, per pod and node),
// kept for /debug/inventory.
//
// Thread-safe.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/placement/dra_planner.h"

namespace gpusched::extender {

struct DraDecision {
  std::string pod;   // namespace/name
  std::string node;
  std::shared_ptr<const placement::DraVerdict> verdict;  // never null
};

class DraDecisionLog {
 public:
  explicit DraDecisionLog(size_t keep = 64) : keep_(keep) {}

  void Record(std::string pod, std::string node, std::shared_ptr<const placement::DraVerdict> verdict) GPUSCHED_EXCLUDES(mu_);
  // Returns the kept decisions, oldest first.
  std::vector<DraDecision> Recent() const GPUSCHED_EXCLUDES(mu_);

 private:
  const size_t keep_;
  mutable Mutex mu_;
  std::deque<DraDecision> decisions_ GPUSCHED_GUARDED_BY(mu_);
};

}  // namespace gpusched::extender
