// File: filter_memo.cc
//
// The filter memo: scores by snapshot position (NaN not evaluated, -inf no fit), replaced whole
// under a mutex and handed back only for the same pod UID, resourceVersion and snapshot version.
#include "gpusched/extender/filter_memo.h"

#include <cmath>
#include <limits>

namespace gpusched::extender {
namespace {

constexpr double kNotEvaluated = std::numeric_limits<double>::quiet_NaN();
constexpr double kNoFit = -std::numeric_limits<double>::infinity();

}  // namespace

bool FilterMemo::Evaluated(double s) { return !std::isnan(s); }
bool FilterMemo::Fits(double s) { return !std::isnan(s) && s != kNoFit; }

void FilterMemoStore::Put(const Pod& pod, uint64_t snapshot_version, size_t snapshot_size,
                          std::span<const uint32_t> evaluated, std::span<const std::pair<uint32_t, double>> fits) {
  auto memo = std::make_shared<FilterMemo>(FilterMemo{.pod_uid = pod.uid,
                                                      .pod_resource_version = pod.resource_version,
                                                      .snapshot_version = snapshot_version});
  memo->score.assign(snapshot_size, kNotEvaluated);
  for (uint32_t index : evaluated) memo->score[index] = kNoFit;
  for (auto [index, score] : fits) memo->score[index] = score;
  MutexLock lock(&mu_);
  memo_ = std::move(memo);
}

std::shared_ptr<const FilterMemo> FilterMemoStore::Get(const Pod& pod, uint64_t snapshot_version) const {
  if (!Memoizable(pod)) return nullptr;
  std::shared_ptr<const FilterMemo> memo;
  {
    MutexLock lock(&mu_);
    memo = memo_;
  }
  bool same = memo != nullptr && memo->pod_uid == pod.uid && memo->pod_resource_version == pod.resource_version &&
              memo->snapshot_version == snapshot_version;
  return same ? memo : nullptr;
}

}  // namespace gpusched::extender
