// File: service.h
//
// The extender's verbs as handlers: body in, body out, no sockets. The HTTP layer routes to these;
// tests and benchmarks call them directly. Every verb answers a well-formed reply in
// kube-scheduler's format, whatever the input.
//
//   filter      judge the pod on every node (pod_evaluation.h: one path for every mode): fits,
//               FailedNodes (freeing GPUs could help) or FailedAndUnresolvableNodes (mode, label,
//               switching, pod rules); optionally keep only the best K fitting nodes. Pods
//               without GPUs pass: every node kept.
//   prioritize  score the fitting nodes 0-10 (score_mapping.h), reusing the filter's verdicts for
//               the same pod on the same inventory (filter_memo.h); a pod without GPUs gets no
//               score (an empty list).
//   bind        bind_flow.h: re-plan on the current inventory and commit atomically, then make it
//               real in the cluster.
//   preempt     preemption.h: per candidate node, the victims whose eviction makes room for the
//               pod by gpusched's rules; nodes where no eviction helps are left out.
//   explain     explain.h: not a kube-scheduler verb; one pod judged on every node, for people.
//   defrag      defrag.h: not a kube-scheduler verb; a dry-run plan of pod moves.
//
// Thread-safe: the service holds immutable options and collaborators, and parts that guard their
// own state (memo, workload cache, decision log, bind flow, claim allocator).
#pragma once

#include <atomic>
#include <climits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "gpusched/common/helper_thread.h"
#include "gpusched/dra/cel.h"
#include "gpusched/extender/bind_flow.h"
#include "gpusched/extender/claim_allocator.h"
#include "gpusched/extender/defrag.h"
#include "gpusched/extender/dra_decision_log.h"
#include "gpusched/extender/explain.h"
#include "gpusched/extender/filter_memo.h"
#include "gpusched/extender/domain_plans.h"
#include "gpusched/extender/domain_steering.h"
#include "gpusched/extender/gang_holds.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/extender/cache_store.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/extender/group_defrag.h"
#include "gpusched/extender/group_explain.h"
#include "gpusched/extender/kueue_admission.h"
#include "gpusched/extender/kueue_check.h"
#include "gpusched/extender/telemetry.h"
#include "gpusched/extender/wire.h"
#include "gpusched/extender/workload_cache.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/planner.h"

namespace gpusched::extender {

class Service {
 public:
  // REQUIRES: `inventory` and every collaborator in `with` outlive the service.
  Service(inventory::Inventory* inventory, ServiceOptions options, ServiceCollaborators with = {});

  std::string Filter(std::string body) const;
  std::string Prioritize(std::string body) const;
  std::string Bind(std::string_view body) const;
  // Returns the ExtenderPreemptionResult. Errors: InvalidArgument naming the field of a body that
  // cannot be read (kube-scheduler then fails this preemption attempt and retries the pod).
  StatusOr<std::string> Preempt(std::string body) const;
  // explain.h: the pod in `body` (Pod JSON) judged on every node; its callers encode it
  // (ExplanationJson, ExplanationText). Errors: InvalidArgument (not a pod, or one that cannot be
  // judged).
  StatusOr<Explanation> Explain(std::string_view body) const;
  // The same for the pod `key` ("namespace/name") gpusched knows; a bound pod is judged as if it
  // were not there. Errors: NotFound; FailedPrecondition for a bound pod whose spec gpusched
  // does not keep (known by its allocation alone).
  StatusOr<Explanation> ExplainKnown(std::string_view key) const;
  // group_explain.h: the pod group `key` ("namespace/name") instance `replica`, its members and
  // whether the pending ones fit together now. Errors: InvalidArgument, NotFound.
  StatusOr<GroupExplanation> ExplainGroup(std::string_view key, std::string_view replica) const;
  // kueue_check.h: Kueue's Workload `key` ("namespace/name") judged by the admission check now.
  // Errors: InvalidArgument for a key without a namespace; NotFound for a Workload gpusched has
  // not read.
  StatusOr<WorkloadExplanation> ExplainWorkload(std::string_view key) const;
  // defrag.h: a dry-run plan of pod moves that makes room for the pod in `body` (Pod JSON), or
  // when `body` is empty lowers fragmentation to `target_frag_pct`; at most `max_moves` moves.
  // With `run.apply`, the plan is applied through ServiceCollaborators::evictor (defrag.h,
  // defrag_executor.h: `run.unjudged` says whether a pod with unjudged constraints may be made
  // room for); its callers encode the result (DefragJson, DefragText).
  // Errors: InvalidArgument (not a pod, one no move can help, bad numbers); FailedPrecondition
  // for a pod already placed, or `run.apply` without an evictor (snapshot mode).
  StatusOr<DefragResult> Defrag(std::string_view body, double target_frag_pct, int max_moves, DefragRun run = {}) const;
  // group_defrag.h: the moves that make room for every pending member of the pod group `key`
  // instance `replica` at once, applied as Defrag applies a plan. Errors: as ExplainGroup's, and
  // FailedPrecondition for a group without pending members or `run.apply` without an evictor.
  StatusOr<GroupDefragResult> DefragGroup(std::string_view key, std::string_view replica, int max_moves, DefragRun run = {}) const;
  // The thread an encoder may share a long answer with (ExplanationJson), or null when busy.
  HelperThread* helper() const { return &helper_; }
  // True if Bind may wait on the API server (a binder or a claim writer is set); in snapshot
  // mode bind only books in memory.
  bool BindWaits() const { return with_.binder != nullptr || with_.claim_writer != nullptr; }
  // DRA owner mode: releases claims allocated for pods that have not bound within
  // ServiceOptions::dra_release_after (ClaimAllocator::Sweep). Returns how many; 0 in advisory
  // mode. Call it every few seconds while the inventory is in sync with the cluster.
  size_t SweepClaims() const;
  // Gangs (gang_holds.h): drops the plans of deleted groups and members, and plans every gang
  // with a pending member that has no slot. Returns how many groups it planned. Call it every
  // few seconds while the inventory is in sync with the cluster (and after a snapshot's load).
  // Plans only in snapshot mode, or when this replica served a GPU pod's filter in the last
  // minute (kube-scheduler calls it: standby replicas do not plan).
  size_t SweepGangs() const;
  // Kueue's admission check (kueue_admission.h): activates gpusched's AdmissionChecks, decides
  // the Workloads that wait for it, ends holds no Workload waits on. Acts only with
  // ServiceCollaborators::kueue_writer and while it says this replica leads. Returns how many
  // Workloads it decided. Call it every few seconds while the inventory is in sync.
  size_t SweepKueue() const;
  // Returns /debug/inventory: every node (or only `node` when non-empty) with its mode, state,
  // GPUs, usage, allocations and blockers.
  std::string DebugInventory(std::string_view node, bool compact = false) const;

  const ServiceOptions& options() const { return options_; }

 private:
  // A filter's verdict counts, for gpusched_filter_decisions_total.
  struct DecisionCounts;

  std::string FilterPod(const ExtenderArgs& args, const placement::PodRequest& request) const;
  // A pod without GPUs: every node kept, but with topology.steer and domains labelled, a pod
  // outside groups is kept to the fullest domain in use among the offered nodes (domain_steering.h).
  std::string FilterWithoutGpus(const ExtenderArgs& args) const;
  // The standing of the pod in `args` as a gang member (gang_holds.h), its group planned when it
  // has no slot, or again among the offered nodes when several are offered but not its slot's;
  // for a pod of a Kueue Workload outside gangs, its Workload's hold (kueue_admission.h's Claim);
  // *snapshot is then the one that shows the plan.
  GangStanding PlanIfGang(const ExtenderArgs& args, std::shared_ptr<const inventory::InventorySnapshot>* snapshot) const;
  // A gang member with a slot (gang_holds.h): only the slot's node kept when it is offered and
  // the member fits there, every other node failed naming it; every node failed when the slot is
  // not offered, or does not fit its member any more (the slot is then dropped, but not while
  // pods being deleted there are all that keep it from fitting: room made for it, FitsOnceLeft).
  std::string SteerToSlot(const ExtenderArgs& args, const GangStanding& gang, const inventory::InventorySnapshot& snapshot,
                          PodEvaluation& evaluation) const;
  // True if the member would fit `seen` (its slot's node, `one` resolving it) once the pods being
  // deleted there are gone.
  bool FitsOnceLeft(const placement::NodeState& seen, ResolvedNodes one, PodEvaluation& evaluation) const;
  StatusOr<Explanation> ExplainPod(const Pod& pod, const std::optional<Allocation>& placed) const;
  // The Pod in `body` (JSON), with where it is placed (nullopt: nowhere, or no UID). Errors:
  // InvalidArgument for a body that is not a Pod, or one whose spec cannot be read.
  StatusOr<Pod> PodOf(std::string_view body, std::optional<Allocation>* placed) const;
  void CountDecisions(const DecisionCounts& counts) const;
  // The inputs of a pod's evaluation on `snapshot`; with the caches shared between requests
  // (verdicts, scores, the DRA decision log) when `caches`.
  EvaluationInputs Inputs(const inventory::InventorySnapshot* snapshot, bool caches) const;
  // What applies defrag plans: the inventory, the evictor and the hold publisher; and whether
  // `run` may apply one here (FailedPrecondition without an evictor: snapshot mode).
  DefragExecutor Executor() const;
  Status CanApply(const DefragRun& run) const;
  void CountError(std::string_view verb) const;

  inventory::Inventory* const inventory_;
  const ServiceOptions options_;
  const ServiceCollaborators with_;
  mutable dra::cel::ProgramCache programs_;  // compiled CEL selectors, shared by every DRA decision
  mutable HelperThread helper_;              // shares preempt's candidates and explain's nodes with the serving thread
  const std::unique_ptr<FilterMemoStore> memo_;
  const std::unique_ptr<WorkloadCache> workloads_;
  const std::unique_ptr<ScoreCacheStore> scores_;
  const std::unique_ptr<DraVerdictCacheStore> dra_verdicts_;
  const std::unique_ptr<NodeNamesMemo> node_names_;  // request bodies' NodeNames lists
  const std::unique_ptr<DraDecisionLog> dra_log_;
  const std::unique_ptr<ClaimAllocator> claims_;  // owner mode only
  const std::unique_ptr<DomainPlans> domains_;    // gangs with a topology constraint
  const std::unique_ptr<DomainFullness> fullness_;  // pods outside gangs, steered (domain_steering.h)
  const std::unique_ptr<BindFlow> bind_;
  const std::unique_ptr<GangHolds> gangs_;
  const std::unique_ptr<KueueAdmission> kueue_;
  mutable std::atomic<int64_t> last_filter_s_{INT64_MIN / 2};  // steady clock, seconds: a GPU pod's last filter
};

}  // namespace gpusched::extender
