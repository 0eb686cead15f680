// File: bind_flow.h
//
// kube-scheduler's bind verb as a state machine: find the pod filter saw, finish a bind of ours
// whose outcome was unknown, allocate its claims (DRA owner mode; the special claim of extended
// resources served by DRA too), then plan again on the current
// inventory and commit atomically, and make it real in the cluster through the binder (released
// again if that is refused). A bind that no longer fits changes nothing. One bind of a pod runs
// at a time: a retry that arrives while the first attempt still runs (after kube-scheduler's
// timeout, say) is refused instead of undoing it.
//
// Thread-safe. Errors carry the message kube-scheduler shows the user.
#pragma once

#include <optional>
#include <string>
#include <unordered_set>

#include "gpusched/common/mutex.h"
#include "gpusched/common/status.h"
#include "gpusched/extender/claim_allocator.h"
#include "gpusched/extender/domain_plans.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/extender/wire.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::extender {

class BindFlow {
 public:
  // REQUIRES: every pointer outlives the flow; `claims` may be null (advisory mode), `domains`
  // too (no gang planned per domain: a member's GPUs are chosen at bind like any pod's).
  BindFlow(inventory::Inventory* inventory, const ServiceOptions* options, const ServiceCollaborators* with,
           ClaimAllocator* claims, const DomainPlans* domains = nullptr)
      : inventory_(inventory), options_(options), with_(with), claims_(claims), domains_(domains) {}

  // Returns OK once the pod is booked (and, with a binder, bound in the cluster) on b.node, or
  // was already bound there.
  Status Bind(const BindingArgs& b) GPUSCHED_EXCLUDES(mu_);

 private:
  // Marks the pod's bind as running for its scope; `acquired` is false if one already runs.
  class Running;

  // True if bind must allocate claims for `pod` on `node` in owner mode: its own claims, or the
  // special claim of extended resources DRA serves there.
  bool NeedsClaims(const Pod& pod, const placement::PodRequest& request, const std::string& node) const;
  // Returns the pod filter saw under b.pod_uid, checked against b's names.
  StatusOr<Pod> FindPod(const BindingArgs& b) const;
  // Returns the answer if the pod is bound already: only the cluster's word (an observed
  // allocation, or a bound record of a pod without GPUs) or, without a binder, our own in-memory
  // booking counts; a booking in flight (ours or another replica's) does not.
  std::optional<Status> AlreadyBound(const BindingArgs& b) const;
  // Finishes a bind of ours to b.node whose outcome was unknown; nullopt if there is none or it
  // must be planned again (then *pod is refreshed).
  std::optional<Status> FinishUnknownOutcome(const BindingArgs& b, Pod* pod) const;
  // Plans on the current inventory, commits and binds, retrying while concurrent binds change
  // the node, until the deadline.
  Status Book(const BindingArgs& b, const Pod& pod, const placement::PodRequest& request,
              std::chrono::steady_clock::time_point deadline) const;
  // Makes a committed placement real through the binder; releases it if refused.
  Status MakeReal(const BindingArgs& b, const Pod& pod, const Node& checked, const Placement& placement) const;

  inventory::Inventory* const inventory_;
  const ServiceOptions* const options_;
  const ServiceCollaborators* const with_;
  ClaimAllocator* const claims_;
  const DomainPlans* const domains_;
  mutable Mutex mu_;
  std::unordered_set<std::string> running_ GPUSCHED_GUARDED_BY(mu_);  // pod UIDs
};

}  // namespace gpusched::extender
