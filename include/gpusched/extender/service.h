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
//   bind        re-plan on the current inventory and commit atomically; then, with a binder,
//               make it real in the cluster (released again if that fails). On success the pod
//               record carries the node and result annotations. A bind that no longer fits
//               answers Error and changes nothing.
//
// Thread-safe: the service holds immutable options, a pointer to the (thread-safe) Inventory,
// which must outlive it, and a memo of the last filter (under its own lock) that lets the
// prioritize call for the same pod on the same inventory version skip the evaluation.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "gpusched/common/clock.h"
#include "gpusched/common/mutex.h"
#include "gpusched/extender/claim_writer.h"
#include "gpusched/extender/event_sink.h"
#include "gpusched/extender/pod_binder.h"
#include "gpusched/extender/telemetry.h"
#include "gpusched/extender/wire.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/dra_planner.h"
#include "gpusched/placement/node_ranking.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/policy.h"
#include "gpusched/placement/score_mapping.h"
#include "gpusched/scoring/scorer.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::extender {

struct ServiceOptions {
  // Which node a pod goes to: any scoring policy (scoring/scorer.h). Default: binpack.
  std::string node_policy = "binpack";
  placement::PlacementOptions placement;  // which GPUs inside the node
  placement::ScoreMapping score_mapping = placement::ScoreMapping::kRank;  // Default: rank.
  // When > 0, filter keeps only the best K fitting nodes (the rest go to FailedNodes with a
  // reason), so the policy's order decides even where 0-10 scores would tie. Default: 0 (off).
  size_t filter_top_k = 0;
  // Commit attempts for one bind when concurrent binds keep changing the node. Default: 16.
  int bind_attempts = 16;
  // No new attempt starts after this long (keep it below kube-scheduler's httpTimeout, 10 s in
  // scheduler-config/). Default: 6 s.
  std::chrono::seconds bind_deadline{6};
  // Makes a booked bind real in the cluster; null: bind books in memory only (snapshot mode).
  // Not owned; must outlive the service.
  PodBinder* binder = nullptr;
  // Told about pods that fit no node; null: nobody. Not owned; must outlive the service.
  EventSink* events = nullptr;
  // DRA placement (gpu drivers, search bound, topology attribute).
  placement::DraOptions dra;
  // DRA owner mode (dra.md §5.3 C): bind allocates the pod's claims (the ranked choice) through
  // this writer before binding. Null: advisory mode, kube-scheduler's plugin allocates.
  // Not owned; must outlive the service.
  ClaimWriter* claim_writer = nullptr;
  // The time of bind deadlines and of the workload's refresh. Not owned; must outlive the
  // service. Default: RealClock().
  const Clock* clock = &RealClock();
  // Test only: called by bind after it planned and before it commits, so that a test can make
  // concurrent binds all plan on the same inventory. Default: none.
  std::function<void()> test_before_commit;
};

class Service {
 public:
  // REQUIRES: `inventory` (and `telemetry`, if not null) outlive the service.
  Service(inventory::Inventory* inventory, ServiceOptions options, Telemetry* telemetry = nullptr)
      : inventory_(inventory), options_(options), telemetry_(telemetry) {}

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
    std::vector<double> score;  // NaN: not evaluated; -inf: does not fit; else the policy's score
  };

  std::shared_ptr<const FilterMemo> Memo() const GPUSCHED_EXCLUDES(memo_mu_);
  // Returns the scorer of the node policy in force for `request`; fills *workload when it needs M.
  std::unique_ptr<scoring::Scorer> NodeScorer(const placement::PodRequest& request,
                                              const inventory::InventorySnapshot& snapshot,
                                              std::shared_ptr<const scoring::TargetWorkload>* workload) const;
  // Evaluates and scores `request` on `nodes` (null = unknown node); on_fail(pos, NodeVerdict&&)
  // for the rest.
  template <typename OnFail>
  std::vector<placement::RankedNode> Evaluate(const placement::PodRequest& request, const Pod& pod,
                                              std::span<const placement::NodeState* const> nodes,
                                              std::span<const uint32_t> order,
                                              const inventory::InventorySnapshot& snapshot, OnFail&& on_fail) const;
  // Returns M as observed on `snapshot`, recomputed at most every workload_refresh.
  std::shared_ptr<const scoring::TargetWorkload> Workload(const inventory::InventorySnapshot& snapshot) const
      GPUSCHED_EXCLUDES(workload_mu_);

  // filter and prioritize for a pod with ResourceClaims (and no device-plugin GPU request).
  std::string FilterDra(const ExtenderArgs& args, const inventory::InventorySnapshot& snapshot) const;
  std::string PrioritizeDra(const ExtenderArgs& args, const inventory::InventorySnapshot& snapshot) const;
  // Owner mode: allocates and reserves the pod's claims for `node`. Returns "" or why not.
  std::string AllocateClaims(const Pod& pod, const std::string& node) const GPUSCHED_EXCLUDES(dra_bind_mu_);
  // Remembers the last DRA decisions for /debug/inventory.
  void RecordDra(const Pod& pod, const std::string& node, const placement::DraVerdict& v) const GPUSCHED_EXCLUDES(dra_mu_);

  // Returns "" when the bind is booked, else why not.
  std::string BindError(std::string_view body) const;
  // Counts one filter's verdicts (telemetry may be null).
  void CountDecisions(const std::array<uint64_t, 10>& counts) const;
  void CountBind(std::string_view result) const;
  void CountError(std::string_view verb) const;

  inventory::Inventory* const inventory_;
  const ServiceOptions options_;
  Telemetry* const telemetry_;
  mutable Mutex memo_mu_;
  mutable std::shared_ptr<const FilterMemo> memo_ GPUSCHED_GUARDED_BY(memo_mu_);
  // The workload mix fgd and the soft policies plan for: what is booked now. It changes slowly;
  // it is rebuilt from a newer snapshot at most every 30 s.
  // UIDs of pods whose bind is running (one at a time per pod).
  mutable Mutex binding_mu_;
  mutable std::unordered_set<std::string> binding_ GPUSCHED_GUARDED_BY(binding_mu_);

  // Compiled CEL selectors, shared by every DRA decision.
  mutable dra::cel::ProgramCache programs_;
  struct DraDecision {
    std::string pod;
    std::string node;
    placement::DraVerdict verdict;
  };
  // Owner mode: one claim allocation at a time, and the allocations written but not yet seen
  // (claim UID -> result), which count as allocated until the cluster shows them.
  mutable Mutex dra_bind_mu_;
  mutable std::map<std::string, dra::AllocationResult> dra_assumed_ GPUSCHED_GUARDED_BY(dra_bind_mu_);
  mutable Mutex dra_mu_;
  mutable std::deque<DraDecision> dra_decisions_ GPUSCHED_GUARDED_BY(dra_mu_);

  mutable Mutex workload_mu_;
  mutable std::shared_ptr<const scoring::TargetWorkload> workload_ GPUSCHED_GUARDED_BY(workload_mu_);
  mutable uint64_t workload_version_ GPUSCHED_GUARDED_BY(workload_mu_) = 0;
  mutable std::chrono::steady_clock::time_point workload_time_ GPUSCHED_GUARDED_BY(workload_mu_);
};

}  // namespace gpusched::extender
