// File: pod_evaluation.h
//
// One pod judged on the nodes of one request, whatever its kind of GPU: every node gets a
// placement::NodeVerdict (fits, or why not and whether freeing GPUs there could help), and the
// fitting ones get the score of the node policy in force. Device-plugin pods (nvidia.com/gpu, mGPU)
// go through the Planner and a scoring policy; pods whose GPUs come from ResourceClaims through
// the DRA planner, whose verdicts take the same shape. Filter and prioritize share this one path.
//
// Not thread-safe: one per request.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpusched/common/helper_thread.h"
#include "gpusched/common/status.h"
#include "gpusched/dra/cel.h"
#include "gpusched/extender/dra_decision_log.h"
#include "gpusched/extender/cache_store.h"
#include "gpusched/extender/domain_steering.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/extender/workload_cache.h"
#include "gpusched/inventory/snapshot.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/node_ranking.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_judge.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::extender {

// What a request is judged against. Each pointer must outlive the evaluation.
struct EvaluationInputs {
  const inventory::InventorySnapshot* snapshot = nullptr;
  const ServiceOptions* options = nullptr;
  dra::cel::ProgramCache* programs = nullptr;  // compiled CEL selectors, shared
  const WorkloadCache* workloads = nullptr;    // M for fgd and the soft policies
  DraDecisionLog* log = nullptr;               // ranked DRA decisions go here
  ScoreCacheStore* scores = nullptr;           // scores of earlier pods of the same shape; optional
  DraVerdictCacheStore* dra_verdicts = nullptr;  // DRA verdicts of earlier pods of the same claims; optional
  HelperThread* helper = nullptr;               // a thread to share a long decision with; optional
  const DomainFullness* domains = nullptr;      // the topology domains' sums per snapshot; optional
};

// The nodes of one request, resolved against the snapshot: the state (nullptr: a node the
// inventory does not know), its position in the snapshot (the tie-break of the policies) and
// its generation (0 when unknown). All three aligned.
struct ResolvedNodes {
  std::vector<const placement::NodeState*> nodes;
  std::vector<uint32_t> index;
  std::vector<uint64_t> generations;
};

using OnNodeFailed = std::function<void(size_t pos, placement::NodeVerdict&& verdict)>;
// Fitting nodes refused all with one reason (Outcome::kUnschedulable, Reject::kInsufficient), by
// position: steering refuses thousands of nodes with one or two reasons.
using OnNodesRefused = std::function<void(std::span<const size_t> positions, const std::string& reason)>;

class PodEvaluation {
 public:
  virtual ~PodEvaluation() = default;

  // OK, or why the pod cannot be judged on any node now (a claim it names is missing or not
  // generated yet): Unavailable. Filter answers it as the request's Error (kube-scheduler's Error
  // status for the whole pod: it retries the pod later), prioritize scores nothing, preempt
  // evicts nothing, and explain refuses the pod (400) with its message.
  virtual Status Problem() const = 0;
  // True if Evaluate scores fitting nodes even when not asked to rank (filter can memoize them).
  virtual bool scores_while_filtering() const = 0;
  // Judges the pod on `nodes`. Calls on_failed for each node that does not fit and returns those
  // that do, in node order, scored when `rank`. Errors: InvalidArgument for a fault that stops
  // the whole request (a selector that does not compile, an unknown class).
  virtual StatusOr<std::vector<placement::RankedNode>> Evaluate(const ResolvedNodes& nodes, bool rank,
                                                                const OnNodeFailed& on_failed) = 0;
  // Of `fits` (nodes the last Evaluate kept, by position, maybe fewer since), those refused
  // because others are better, by place in `fits`, with the reason; none by default. DRA: nodes
  // where the devices allocated for a multi-GPU request would not be NVLink-connected while
  // another's would (DraVerdict::links). Applied by RefuseAmongFitting, after the node fit.
  virtual std::vector<std::pair<size_t, std::string>> RefusedAmongFits(const std::vector<placement::RankedNode>& fits) const {
    return {};
  }
  // For explain, on a node the last Evaluate kept (by position): how the pod's devices stand on
  // its NVLink links, where the evaluation judged them (DRA), else "". Safe to call from several
  // threads once Evaluate has returned.
  virtual std::string LinksNote(size_t pos) const { return ""; }
};

// Returns the evaluation for `pod`, whose analyzed request is `request`.
// REQUIRES: request.asks_gpu() (GPUs of a kind, or ResourceClaims) and
// request.schedulable(); `pod` and `request` outlive the evaluation.
std::unique_ptr<PodEvaluation> MakeEvaluation(const Pod& pod, const placement::PodRequest& request,
                                              const EvaluationInputs& inputs);

using placement::ClaimsProblem;

// What a pod's judge (placement/pod_judge.h) reads of `inputs`; what `inputs` points to must
// outlive the judge.
placement::JudgeContext JudgeContextOf(const EvaluationInputs& inputs);

// Of `fits` (nodes where `request` fits, positions into `nodes`), those the request's kind refuses
// because others offered are better (Kind::RefuseAmongFits): removed from `fits` and given to
// on_failed as resolvable refusals (Reject::kInsufficient) with the kind's reason. Filter and
// explain both apply it, so that explain says what filter did. Returns how many.
size_t RefuseAmongFits(const placement::PodRequest& request, const ResolvedNodes& nodes,
                       std::vector<placement::RankedNode>* fits, const OnNodesRefused& on_refused);

// The refusals among fitting nodes that filter and explain both apply: the evaluation's
// (PodEvaluation::RefusedAmongFits), RefuseAmongFits, then, for a pod outside groups with
// options.topology_steer, those outside the fullest domain in use of the lowest topology level
// (domain_steering.h; `fullness` keeps the domains' sums, null: summed here).
void RefuseAmongFitting(const Pod& pod, const placement::PodRequest& request, const PodEvaluation& evaluation,
                        const ServiceOptions& options, const DomainFullness* fullness,
                        const inventory::InventorySnapshot& snapshot, const ResolvedNodes& nodes,
                        std::vector<placement::RankedNode>* fits, const OnNodesRefused& on_refused);

// Of `fits`, for a pod outside groups with options.topology_steer, those outside the fullest domain
// in use of the lowest topology level (domain_steering.h; `fullness` keeps the domains' sums, null:
// summed here), given to on_refused as resolvable refusals; `steered` says whether the pod asks for
// GPUs. Filter and explain apply it to pods without GPUs too (the fits: the nodes kube-scheduler
// offered, whose own filters passed).
void RefuseOutsideFullestDomain(const Pod& pod, SteeredPod steered, const ServiceOptions& options,
                                const DomainFullness* fullness, const inventory::InventorySnapshot& snapshot,
                                const ResolvedNodes& nodes, std::vector<placement::RankedNode>* fits,
                                const OnNodesRefused& on_refused);

// True if `pod` stays off domain `kept` (gang_reservation.h): it holds no room made for it there
// (a defrag hold or slot, a nomination), and, for a member of a declared gang, GangKeptOff says so
// of its gang (as the gang planner judges it), else KeptOffReserved of the pod (priority,
// DaemonSet). Filter asks it of pods outside the gangs gpusched plans whole, and of the members of
// gangs placed per domain (DomainPlans::Steer); preempt and defrag of all.
bool KeptOff(const Pod& pod, const DomainReservation& kept, const inventory::InventorySnapshot& snapshot,
             const ServiceOptions& options);

// `kept`'s domain where `pods` (the pods one plan is for) stay off it, else "" (also without
// `kept` or pods): the pods of a declared gang as their gang (GangKeptOff of FactsOf, the highest
// of their priorities counted), others where one of them stays off it (KeptOff). Every plan of
// several pods (the gang planner, group defrag, explain, the Kueue check) asks it.
std::string KeptOffFor(std::span<const Pod> pods, const DomainReservation* kept, const inventory::InventorySnapshot& snapshot,
                       const ServiceOptions& options);

// The domain kept for a waiting gang on inputs.snapshot (gang_reservation.h), where the options
// keep one.
std::optional<DomainReservation> KeptReservation(const EvaluationInputs& inputs);
// Its value of the first topology level's label: "" when none.
std::string KeptDomain(const EvaluationInputs& inputs);
// The same, where `pod` stays off it, as filter keeps it off (RefuseOutsideFullestDomain): preempt
// and defrag make no room there for the pod, which would not be given it.
std::string KeptOffDomain(const Pod& pod, const EvaluationInputs& inputs);

// Returns the node policy in force for `request`: its annotation, or the configured one.
std::string_view NodePolicyFor(const placement::PodRequest& request, const ServiceOptions& options);

}  // namespace gpusched::extender
