#include "gpusched/extender/score_cache_store.h"

#include <fmt/format.h>

namespace gpusched::extender {

ScoreCacheStore::Loan ScoreCacheStore::Borrow(std::string_view policy, const std::string& shape_key,
                                              std::shared_ptr<const scoring::TargetWorkload> workload) {
  std::string key = fmt::format("{}|{}|{}", policy, static_cast<const void*>(workload.get()), shape_key);
  {
    MutexLock lock(&mu_);
    for (auto it = held_.begin(); it != held_.end(); ++it) {
      if (it->key != key) continue;
      Loan loan = std::move(*it);
      held_.erase(it);
      return loan;
    }
  }
  return Loan{std::move(key), std::move(workload), std::make_unique<placement::ScoreCache>()};
}

void ScoreCacheStore::Return(Loan loan) {
  MutexLock lock(&mu_);
  held_.push_back(std::move(loan));
  if (held_.size() > capacity_) held_.erase(held_.begin());
}

}  // namespace gpusched::extender
