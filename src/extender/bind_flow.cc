// File: bind_flow.cc
//
// The bind state machine: one bind per pod UID at a time; the pod found, an earlier bind of unknown
// outcome finished, claims allocated where needed, re-plan and Commit with retries, then the
// binder; a refused bind releases the booking and the claims.
#include "gpusched/extender/bind_flow.h"

#include <fmt/format.h>

#include "gpusched/dra/extended_resources.h"
#include "gpusched/placement/allocation_record.h"
#include "gpusched/placement/fit_check.h"
#include "gpusched/placement/what_if.h"
#include "gpusched/placement/planner.h"

namespace gpusched::extender {
namespace {

constexpr std::string_view kUnknownNode = "node is not in gpusched's inventory";

std::string PodKey(const BindingArgs& b) { return fmt::format("{}/{}", b.pod_namespace, b.pod_name); }

Status Rejected(const BindingArgs& b, std::string_view why) {
  return FailedPreconditionError(fmt::format("bind {} to {} rejected: {}", PodKey(b), b.node, why));
}

Status Failed(const BindingArgs& b, const Status& s) {
  return Status(s.code(), fmt::format("bind {} to {} failed: {}", PodKey(b), b.node, s.message()));
}

}  // namespace

class BindFlow::Running {
 public:
  Running(BindFlow* flow, std::string uid) : flow_(flow), uid_(std::move(uid)) {
    MutexLock lock(&flow_->mu_);
    acquired_ = flow_->running_.insert(uid_).second;
  }
  ~Running() {
    if (!acquired_) return;
    MutexLock lock(&flow_->mu_);
    flow_->running_.erase(uid_);
  }
  bool acquired() const { return acquired_; }

 private:
  BindFlow* const flow_;
  const std::string uid_;
  bool acquired_ = false;
};

Status BindFlow::Bind(const BindingArgs& b) {
  Running running(this, b.pod_uid);
  if (!running.acquired()) {
    return AbortedError(fmt::format("bind {} to {}: a bind of this pod is already in progress", PodKey(b), b.node));
  }
  auto deadline = with_->clock->Now() + options_->bind_deadline;
  GPUSCHED_ASSIGN_OR_RETURN(Pod pod, FindPod(b));
  if (std::optional<Status> done = FinishUnknownOutcome(b, &pod)) return *done;
  if (std::optional<Status> done = AlreadyBound(b)) return *done;
  placement::PodRequest request = placement::AnalyzePod(pod);
  if (!request.schedulable()) {
    return FailedPreconditionError(fmt::format("bind {} rejected: {}", PodKey(b), request.RefusalReason()));
  }
  if (claims_ == nullptr || !NeedsClaims(pod, request, b.node)) return Book(b, pod, request, deadline);
  StatusOr<ClaimAllocator::Allocated> allocated = claims_->Allocate(pod, b.node);
  if (!allocated.ok()) return Failed(b, allocated.status());
  if (!allocated->special.empty()) pod.extended_resource_claim = allocated->special;  // as the pod's status now says
  if (Status ready = claims_->AwaitBinding(pod, *allocated); !ready.ok()) return Failed(b, ready);
  Status booked = Book(b, pod, request, deadline);
  // A bind that failed gives its claims back, as kube-scheduler's Unreserve; one whose outcome is
  // unknown (the binding may have happened) keeps them until the pod is seen or a sweep releases them.
  if (!booked.ok() && booked.code() != StatusCode::kDeadlineExceeded) {
    if (Status released = claims_->Release(pod, *allocated); !released.ok()) {
      return Status(booked.code(), fmt::format("{}; giving its claims back failed too (a sweep retries): {}", booked.message(), released.message()));
    }
  }
  return booked;
}

bool BindFlow::NeedsClaims(const Pod& pod, const placement::PodRequest& request, const std::string& node) const {
  if (request.claims_only()) return true;
  if (!request.device_plugin()) return false;
  if (!options_->dra_extended_resources) return false;
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  const placement::NodeState* state = snapshot->FindNode(node);
  return state != nullptr && dra::ServedThroughDra(pod, state->node, snapshot->dra().classes());
}

StatusOr<Pod> BindFlow::FindPod(const BindingArgs& b) const {
  std::optional<Pod> found = inventory_->FindPod(b.pod_uid);
  if (!found) {
    return NotFoundError(
        fmt::format("bind {} (uid {}): pod unknown to gpusched; it must pass filter first", PodKey(b), b.pod_uid));
  }
  if (found->name != b.pod_name || found->namespace_name != b.pod_namespace) {
    return InvalidArgumentError(fmt::format("bind {} (uid {}): uid belongs to pod {}/{}", PodKey(b), b.pod_uid,
                                            found->namespace_name, found->name));
  }
  return std::move(*found);
}

std::optional<Status> BindFlow::AlreadyBound(const BindingArgs& b) const {
  std::optional<Allocation> held = inventory_->AllocationOf(b.pod_uid);
  std::string node;
  if (held) {
    bool bound = held->origin == AllocationOrigin::kObserved ||
                 (held->origin == AllocationOrigin::kCommitted && with_->binder == nullptr);
    if (!bound) return std::nullopt;
    node = held->node_name;
  } else if (std::optional<Pod> record = inventory_->FindPod(b.pod_uid); record && record->bound()) {
    node = record->node_name;
  }
  if (node.empty()) return std::nullopt;
  if (node == b.node) return OkStatus();  // idempotent: already bound here
  return FailedPreconditionError(fmt::format("bind {} to {}: pod is already bound to {}", PodKey(b), b.node, node));
}

std::optional<Status> BindFlow::FinishUnknownOutcome(const BindingArgs& b, Pod* pod) const {
  std::optional<Allocation> held = inventory_->AllocationOf(b.pod_uid);
  if (!held || held->origin != AllocationOrigin::kCommitted || held->node_name != b.node || with_->binder == nullptr) {
    return std::nullopt;
  }
  // A bind of ours whose outcome was unknown: finish it (the binding call is idempotent).
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  const placement::NodeState* node = snapshot->FindNode(b.node);
  if (node == nullptr) return NotFoundError(fmt::format("bind {} to {}: {}", PodKey(b), b.node, kUnknownNode));
  AnnotationMap annotations = placement::ResultAnnotations(held->placement);
  Status s = with_->binder->Bind(BindTarget{.pod = *pod, .node = node->node, .allocation = *held, .annotations = annotations});
  if (s.ok()) return s;
  if (s.code() == StatusCode::kDeadlineExceeded) {
    return Status(s.code(), fmt::format("bind {} to {}: {}", PodKey(b), b.node, s.message()));
  }
  inventory_->Release(pod->uid);
  if (s.code() != StatusCode::kAborted) return Failed(b, s);
  if (std::optional<Pod> fresh = inventory_->FindPod(b.pod_uid)) *pod = std::move(*fresh);  // plan afresh
  return std::nullopt;
}

Status BindFlow::Book(const BindingArgs& b, const Pod& pod, const placement::PodRequest& request,
                      std::chrono::steady_clock::time_point deadline) const {
  placement::Planner planner(options_->placement);
  Status last;
  for (int attempt = 0; attempt < options_->bind_attempts; ++attempt) {
    if (attempt > 0 && with_->clock->Now() > deadline) {
      return DeadlineExceededError(fmt::format("bind {} to {}: gave up after {} attempts in {} s: {}", PodKey(b), b.node,
                                               attempt, options_->bind_deadline.count(), last.message()));
    }
    Placement placement;
    if (request.device_plugin()) {
      std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
      const placement::NodeState* node = snapshot->FindNode(b.node);
      if (node == nullptr) return NotFoundError(fmt::format("bind {} to {}: {}", PodKey(b), b.node, kUnknownNode));
      // A pod served through DRA holds what its special claim holds (allocated by kube-scheduler's
      // DynamicResources plugin in PreBind, or in owner mode by Bind above): it is committed
      // without device-plugin GPUs.
      if (!options_->dra_extended_resources || !dra::ServedThroughDra(pod, node->node, snapshot->dra().classes())) {
        // The node as the pod sees it: its own hold, its controller's and holds of lower
        // priority are room for it (what_if.h).
        placement::WhatIf own(*node);
        const placement::NodeState& seen = own.SeenBy(placement::Viewer::Of(pod)).state();
        // A gang member planned per domain takes the GPUs its plan gave it, where they are still
        // free: GPUs chosen member by member, in the order kube-scheduler binds, could leave a
        // later member none.
        std::optional<Placement> planned = domains_ != nullptr ? domains_->SlotPlacement(pod.uid, b.node) : std::nullopt;
        if (planned && placement::CheckFits(seen, *planned).ok()) {
          placement = std::move(*planned);
        } else {
          placement::NodeVerdict v = planner.Evaluate(request, seen, /*want_placement=*/true);
          if (!v.fits()) return Rejected(b, v.reason);
          placement = std::move(v.placement);
        }
      }
    }
    if (with_->before_commit) with_->before_commit();
    Node checked;
    last = inventory_->Commit(pod, b.node, placement, with_->binder != nullptr ? &checked : nullptr);
    if (last.ok()) {
      if (with_->binder == nullptr) return OkStatus();
      last = MakeReal(b, pod, checked, placement);
      if (last.code() == StatusCode::kAborted) continue;  // the node changed under us: plan again
      return last;
    }
    if (last.code() != StatusCode::kFailedPrecondition) break;
    // Either another bind changed the node since we planned (plan again), or a concurrent bind
    // of this same pod won.
    if (std::optional<Status> done = AlreadyBound(b)) return *done;
  }
  return Rejected(b, last.message());
}

Status BindFlow::MakeReal(const BindingArgs& b, const Pod& pod, const Node& checked, const Placement& placement) const {
  Allocation booked{.pod_uid = pod.uid,
                    .pod_namespace = pod.namespace_name,
                    .pod_name = pod.name,
                    .node_name = b.node,
                    .mode = ModeServing(placement.kind),
                    .placement = placement,
                    .origin = AllocationOrigin::kCommitted};
  AnnotationMap annotations = placement::ResultAnnotations(placement);
  Status s = with_->binder->Bind(BindTarget{.pod = pod, .node = checked, .allocation = booked, .annotations = annotations});
  if (s.ok()) return s;
  if (s.code() == StatusCode::kDeadlineExceeded) {
    return Status(s.code(), fmt::format("bind {} to {}: {}", PodKey(b), b.node, s.message()));
  }
  inventory_->Release(pod.uid);
  if (s.code() == StatusCode::kAborted) return s;
  return Failed(b, s);
}

}  // namespace gpusched::extender
