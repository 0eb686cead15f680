// File: preemption.h
//
// The preempt verb's decision: for each candidate node kube-scheduler offers, the victims that
// must leave for the preemptor to fit there by gpusched's rules (placement/victims.h), or the node
// dropped when no eviction makes room.
//
// Per candidate:
// - Device-plugin pods (nvidia.com/gpu, mGPU): victims are chosen among the pods holding GPUs on
//   the node whose priority is below the preemptor's, that are not terminating, and that
//   kube-scheduler already knows (an allocation observed bound in the cluster, or booked by this
//   gpusched's bind, which kube-scheduler assumed first). Never a hold for a nominated pod, never a
//   booking of another replica: kube-scheduler resolves every UID answered against its own cache
//   and fails the whole preemption on one it cannot find.
// - kube-scheduler takes the answer as the whole and final victim list of each node
//   (preemption.go callExtenders), so its own victims all stay but those gpusched may give back:
//   a pod that holds GPUs of the kind the preemptor gets on that node (device plugin, mGPU, or
//   nvidia-dra for claims and extended resources DRA serves there) and that nothing ties to the
//   preemptor through a filter gpusched does not model (placement/pod_relations.h: no host port
//   the preemptor asks for, no required affinity or anti-affinity term of either pod selecting the
//   other, not counted by the preemptor's DoNotSchedule topology spread, no volume a volume
//   filter reads). Such a victim is given back, in decreasing priority, if the preemptor still
//   fits the node's CPU, memory, pod count and other resources without it
//   (placement/resource_fit.h, counting the pods nominated to the node with equal or higher
//   priority but the preemptor, as RunFilterPluginsWithNominatedPods does). Where the node lists
//   no allocatable they are all given back; where the preemptor does not fit even with all of
//   them gone (the views differ), none is. This may evict more than kube-scheduler strictly
//   needs; it never evicts less.
// - gpusched's own victims are never pods the preemptor's required pod affinity selects.
// - A node where the preemptor's nodeSelector, required node affinity or tolerations refuse it
//   (placement/node_fit.h) is dropped: no eviction there can help.
// - PodDisruptionBudgets: candidates whose eviction violates one are given back first, and
//   NumPDBViolations counts the violations of exactly the victims answered.
// - A node where the pod fits gpusched's GPU rules without evicting anything is answered with
//   kube-scheduler's victims that remain, and dropped when none remain (an answer with no
//   victims is an error to kube-scheduler).
// - Pods with ResourceClaims: victims are chosen among the pods reserving the claims that hold
//   devices the node can use (placement/dra_victims.h), with the same rules; a pod whose claims
//   do not exist yet fits nowhere. kube-scheduler's own victims are kept as above.
// - Pods asking for no GPU and no claim: kube-scheduler's victims pass through unchanged.
// Every node answered has at least one victim; every victim is a pod on that node of lower
// priority than the preemptor (gpusched's own, and kube-scheduler's). Victims are listed by
// decreasing priority, then UID; a victim whose priority is not known (a pod gpusched does not
// record) comes last, in kube-scheduler's order.
//
// Pure: the answer depends only on the arguments.
#pragma once

#include <array>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/extender/preemption_wire.h"
#include "gpusched/extender/victim_chooser.h"
#include "gpusched/inventory/snapshot.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/resource_fit.h"
#include "gpusched/placement/victims.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::extender {

// The answer for kube-scheduler's candidate `c` on its `node` (null: unknown), victims chosen by
// `chooser` for `pod` (whose requests besides GPUs are `other`) under `budgets`: nullopt drops
// the node.
std::optional<MetaVictims> DecideCandidate(const PreemptionCandidate& c, const placement::NodeState* node, const Pod& pod,
                                           const ResourceList& other,
                                           const std::shared_ptr<const std::vector<DisruptionBudget>>& budgets,
                                           VictimChooser& chooser);

// How preempt decides for a pod: kube-scheduler's victims unchanged (it asks for no GPU and no
// claim; but never on the nodes of a domain kept for a gang the pod stays off), no node at all (its request is invalid, or its claims do not exist yet), or node by
// node (PreemptionDecider).
enum class PreemptionPath { kPassThrough, kNowhere, kByNode };
PreemptionPath ChoosePath(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& inputs);

// Decides kube-scheduler's candidates node by node as they are read (CandidateListener): the
// helper thread (inputs.helper, when it is free and the machine has two cores) takes them while
// the caller parses the rest of the request, and the caller joins in once it has (Finish). Each
// thread has its own VictimChooser and takes a few candidates at a time; each node is looked up
// one ahead. kube-scheduler waits on preempt inside its scheduling cycle.
class PreemptionDecider : public CandidateListener {
 public:
  // REQUIRES: ChoosePath(pod, request, inputs) == kByNode; pod, request and inputs outlive the
  // decider, and every candidate read outlives it or is abandoned.
  PreemptionDecider(const Pod& pod, const placement::PodRequest& request, const EvaluationInputs& inputs);
  ~PreemptionDecider() override;  // stops the helper's work if Finish was not called
  PreemptionDecider(const PreemptionDecider&) = delete;
  PreemptionDecider& operator=(const PreemptionDecider&) = delete;

  // Called by the parsing thread only.
  void Read(const PreemptionCandidate& candidate) override;
  void Abandon() override;
  // Decides what the helper has not, and returns the nodes kept with their victims, in the order
  // read. Call once, after the last Read; never after Abandon.
  std::vector<MetaVictims> Finish();

 private:
  struct Item {
    const PreemptionCandidate* candidate;
    std::optional<MetaVictims>* answer;
  };
  static constexpr size_t kBatch = 8;
  // Takes up to kBatch items into `out`, waiting for some while the queue is open; returns how
  // many (0: no more, or abandoned).
  size_t Take(std::array<Item, kBatch>& out);
  // Decides items until there are no more (run by the helper and by Finish).
  void Work();
  void Stop();

  const Pod& pod_;
  const placement::PodRequest& request_;
  const EvaluationInputs& inputs_;
  const ResourceList other_;  // the pod's requests besides GPUs
  const std::string kept_off_;  // KeptOffDomain: its nodes are dropped ("" none)
  // One slot per candidate read, filled by whichever thread decides it. A deque: a slot stays
  // where it is while the parsing thread appends more.
  std::deque<std::optional<MetaVictims>> answers_;
  const std::function<void()> work_;
  bool helping_ = false;  // the helper took work_ and has not been waited for
  Mutex mu_;
  CondVar ready_{&mu_};  // an item arrived, or the queue closed
  std::vector<Item> queue_ GPUSCHED_GUARDED_BY(mu_);
  size_t taken_ GPUSCHED_GUARDED_BY(mu_) = 0;  // items of queue_ handed out
  bool closed_ GPUSCHED_GUARDED_BY(mu_) = false;
  bool abandoned_ GPUSCHED_GUARDED_BY(mu_) = false;
};

// Returns the nodes kept, with their victims, in the order of args.candidates (a
// PreemptionDecider told of them all, where ChoosePath says kByNode). `request` is
// AnalyzePod(args.pod); of `inputs`, the snapshot, options, programs and helper are read.
std::vector<MetaVictims> DecidePreemption(const PreemptionArgs& args, const placement::PodRequest& request,
                                          const EvaluationInputs& inputs);

}  // namespace gpusched::extender
