// File: dra_decision_log.cc
//
// The DRA decision log: a bounded queue under a mutex, the oldest dropped beyond the limit, copied
// out for /debug/inventory.
#include "gpusched/extender/dra_decision_log.h"

namespace gpusched::extender {

void DraDecisionLog::Record(std::string pod, std::string node, std::shared_ptr<const placement::DraVerdict> verdict) {
  MutexLock lock(&mu_);
  decisions_.push_back(DraDecision{std::move(pod), std::move(node), std::move(verdict)});
  while (decisions_.size() > keep_) decisions_.pop_front();
}

std::vector<DraDecision> DraDecisionLog::Recent() const {
  MutexLock lock(&mu_);
  return {decisions_.begin(), decisions_.end()};
}

}  // namespace gpusched::extender
