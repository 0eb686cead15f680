// File: service.h
//
// The extender's verbs as pure-ish handlers: body in, body out, no sockets. The HTTP layer routes
// to these; tests and benchmarks call them directly. Every verb answers a well-formed reply in
// kube-scheduler's format, whatever the input.
//
//   filter      decide per node: fits, FailedNodes (freeing GPUs could help) or
//               FailedAndUnresolvableNodes (mode, label, switching, pod rules); optionally keep
//               only the best K fitting nodes.
//   prioritize  score the fitting nodes 0-10 (score_mapping.h); non-fitting nodes get 0.
//   bind        re-plan on the current inventory and commit atomically; on success the pod
//               record carries the node and result annotations. A bind that no longer fits
//               answers Error and changes nothing.
//
// Thread-safe: the service holds immutable options, a pointer to the (thread-safe) Inventory,
// which must outlive it, and a memo of the last filter (under its own lock) that lets the
// prioritize call for the same pod on the same inventory version skip the evaluation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/policy.h"
#include "gpusched/placement/score_mapping.h"

namespace gpusched::extender {

struct ServiceOptions {
  placement::PlacementOptions placement;
  placement::ScoreMapping score_mapping = placement::ScoreMapping::kRank;  // Default: rank.
  // When > 0, filter keeps only the best K fitting nodes (the rest go to FailedNodes with a
  // reason), so the policy's order decides even where 0-10 scores would tie. Default: 0 (off).
  size_t filter_top_k = 0;
  // Commit attempts for one bind when concurrent binds keep changing the node. Default: 16.
  int bind_attempts = 16;
  // Test only: called by bind after it planned and before it commits, so that a test can make
  // concurrent binds all plan on the same inventory. Default: none.
  std::function<void()> test_before_commit;
};

class Service {
 public:
  Service(inventory::Inventory* inventory, ServiceOptions options) : inventory_(inventory), options_(options) {}

  std::string Filter(std::string body) const;
  std::string Prioritize(std::string body) const;
  std::string Bind(std::string_view body) const;
  // Returns /debug/inventory: every node (or only `node` when non-empty) with its mode, state,
  // GPUs, usage, allocations and blockers.
  std::string DebugInventory(std::string_view node) const;

  const ServiceOptions& options() const { return options_; }

 private:
  // The internal score of each node (by snapshot position) that the last filter evaluated.
  struct FilterMemo {
    std::string pod_uid;
    std::string pod_resource_version;
    uint64_t snapshot_version = 0;
    std::vector<double> score;  // kNotEvaluated, kNoFit or a score in [0, 1]
  };

  std::shared_ptr<const FilterMemo> Memo() const GPUSCHED_EXCLUDES(memo_mu_);

  inventory::Inventory* const inventory_;
  const ServiceOptions options_;
  mutable Mutex memo_mu_;
  mutable std::shared_ptr<const FilterMemo> memo_ GPUSCHED_GUARDED_BY(memo_mu_);
};

}  // namespace gpusched::extender
