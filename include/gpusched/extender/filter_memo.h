// File: filter_memo.h
//
// The verdicts of the last filter call, so that the prioritize call for the same pod on the same
// inventory version (kube-scheduler sends them back to back) evaluates only the nodes filter did
// not see. A pod is trusted to be unchanged while its UID and resourceVersion are.
//
// Thread-safe: the memo is replaced whole and read as an immutable value.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/node_ranking.h"

namespace gpusched::extender {

// What one filter call found, by node position in its snapshot.
struct FilterMemo {
  std::string pod_uid;
  std::string pod_resource_version;
  uint64_t snapshot_version = 0;
  std::vector<double> score;  // NaN: not evaluated; -inf: does not fit; else the policy's score

  // Returns the score of the node at `index` in the snapshot, as above.
  double At(uint32_t index) const { return score[index]; }
  static bool Evaluated(double s);
  static bool Fits(double s);
};

class FilterMemoStore {
 public:
  // Returns true if a memo for `pod` can be trusted at all (it has a UID and a resourceVersion).
  static bool Memoizable(const Pod& pod) { return !pod.uid.empty() && !pod.resource_version.empty(); }

  // Remembers a filter's verdicts: `evaluated` are the snapshot positions it judged, `fits` the
  // positions that fit with their scores. REQUIRES: Memoizable(pod).
  void Put(const Pod& pod, uint64_t snapshot_version, size_t snapshot_size, std::span<const uint32_t> evaluated,
           std::span<const std::pair<uint32_t, double>> fits) GPUSCHED_EXCLUDES(mu_);

  // Returns the memo for `pod` on snapshot `snapshot_version`, or null.
  std::shared_ptr<const FilterMemo> Get(const Pod& pod, uint64_t snapshot_version) const GPUSCHED_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::shared_ptr<const FilterMemo> memo_ GPUSCHED_GUARDED_BY(mu_);
};

}  // namespace gpusched::extender
