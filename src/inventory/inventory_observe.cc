// File: inventory_observe.cc
//
// Inventory, continued: what the cluster reports of pods, read into the ledger. A pod's meaning
// never depends on the order objects arrive in: a pod whose GPUs depend on other objects (its
// claims, its special claim and node) keeps its record and is read again when they change.
#include "gpusched/inventory/inventory.h"

#include <algorithm>

#include "gpusched/dra/extended_resources.h"
#include "gpusched/placement/allocation_record.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::inventory {

void Inventory::ObservePodLocked(Pod&& pod, std::set<std::string>* touched) {
  std::string uid = pod.uid;
  if (pod.bound() || pod.terminal()) book_.nominations().End(uid, touched);
  std::string before = NodeOfLocked(uid);
  // Newly seen bound (by kube-scheduler or a peer, whose booking may have come first): a defrag
  // hold for it ends. A pod seen again where it was (a claim change re-observes them all) is not
  // a replacement.
  const Allocation* booked = book_.Find(uid);
  bool newly = before != pod.node_name || (booked != nullptr && booked->origin == AllocationOrigin::kBooked);
  if (pod.bound() && !pod.terminal() && newly) UseHoldLocked(pod, pod.node_name, touched);
  if (!before.empty() && before != pod.node_name) DropUseLocked(uid, before, touched);
  TrackUseLocked(pod, touched);
  bool was = AllocationOnlyLocked(uid);
  ObserveLocked(std::move(pod), touched);
  allocation_only_ = allocation_only_ - (was ? 1 : 0) + (AllocationOnlyLocked(uid) ? 1 : 0);
}

bool Inventory::ExtendedThroughDraLocked(const Pod& pod, const placement::PodRequest& request) const {
  if (!request.device_plugin() && pod.extended_resource_claim.empty()) return false;
  if (!pod.bound()) return !pod.extended_resource_claim.empty();
  if (!pod.extended_resource_claim.empty()) {
    // The special claim its status names holds its GPUs, if allocated; one not seen yet, or left
    // unallocated by an attempt on another node, is judged by the node it is bound to.
    const dra::ResourceClaim* c = dra_state_->FindClaim(pod.namespace_name, pod.extended_resource_claim);
    if (c != nullptr && c->allocation) return true;
  } else if (!book_.IsBare(pod.uid)) {
    // kube-scheduler names the special claim in the pod's status before it binds the pod: a pod
    // the cluster shows bound without one holds device-plugin GPUs, whatever its node's mode
    // became since (a mode switch waits for it).
    return false;
  }
  auto it = nodes_.find(pod.node_name);
  return it != nodes_.end() && dra::ServedThroughDra(pod, it->second.spec, dra_state_->classes());
}

bool Inventory::DependsOnOthersLocked(const Pod& pod) const {
  return pod.bound() && !pod.terminal() && (!pod.resource_claims.empty() || !pod.extended_resource_claim.empty() ||
                                            book_.IsBare(pod.uid));
}

void Inventory::ObserveLocked(Pod&& pod, std::set<std::string>* touched) {
  const Allocation* existing = book_.Find(pod.uid);
  placement::PodRequest request = placement::AnalyzePod(pod);
  if (pod.terminal()) book_.MarkGone(pod.uid);
  bool through_dra = ExtendedThroughDraLocked(pod, request);
  bool holds = pod.bound() && !pod.terminal() && request.device_plugin() && !through_dra;
  std::vector<std::string> dra_devices;
  if (!holds && pod.bound() && !pod.terminal() && (!pod.resource_claims.empty() || through_dra)) {
    // A pod holding GPUs through its claims: a GPU pod of the nvidia-dra mode.
    for (std::string& d : dra_state_->DevicesOf(pod)) {
      std::string_view driver = std::string_view(d).substr(0, d.find('/'));
      if (std::find(options_.dra_gpu_drivers.begin(), options_.dra_gpu_drivers.end(), driver) != options_.dra_gpu_drivers.end()) {
        dra_devices.push_back(std::move(d));
      }
    }
    holds = !dra_devices.empty();
  }
  if (holds) {
    Allocation observed = placement::RecordedAllocation(pod, request);
    if (!dra_devices.empty()) {
      observed.mode = ClaimsMode();
      observed.placement.kind = ClaimsKind();
      observed.placement.devices = std::move(dra_devices);
    }
    if (existing != nullptr && existing->node_name == observed.node_name) {
      // The cluster caught up with a bind of ours. If its copy of the pod lacks the result
      // annotations (a snapshot taken before the bind), our booking knows the GPUs.
      bool unindexed = std::any_of(observed.placement.containers.begin(), observed.placement.containers.end(),
                                   [](const ContainerAssignment& c) { return c.gpu_indices.empty(); });
      if (unindexed && existing->placement.kind == observed.placement.kind) {
        observed.placement = existing->placement;
        for (const auto& [key, value] : placement::ResultAnnotations(existing->placement)) {
          pod.annotations.emplace(key, value);
        }
      }
    }
    if (existing != nullptr) touched->insert(existing->node_name);
    touched->insert(observed.node_name);
    book_.Observe(std::move(observed));
    // Known by its allocation alone from now on, unless a change of other objects must observe it
    // again or its record names an error.
    if (!DependsOnOthersLocked(pod) && pod.spec_error.empty()) {
      pods_.Erase(pod.uid);
      return;
    }
  } else if (existing != nullptr) {
    if (!pod.bound() && !pod.terminal() && book_.InFlight(pod.uid)) {
      // A bind is ahead of the cluster's copy: keep the booking and what we recorded.
      if (const Pod* known = pods_.Find(pod.uid); known != nullptr) pod = *known;
    } else {
      touched->insert(book_.Release(pod.uid));
      // A stale booking: the record carries its node and annotations; the source's copy
      // (unbound) replaces it below.
    }
  }
  pods_.Put(std::move(pod));
}

void Inventory::ForgetPodLocked(const std::string& uid, std::set<std::string>* touched) {
  book_.nominations().End(uid, touched);
  groups_.DropMember(uid);
  DropUseLocked(uid, NodeOfLocked(uid), touched);
  if (AllocationOnlyLocked(uid)) --allocation_only_;
  std::string node = book_.Forget(uid);
  if (!node.empty()) touched->insert(std::move(node));
  pods_.Erase(uid);
}

void Inventory::ReobserveLocked(bool dra_changed, const std::set<std::string>& nodes, const std::set<std::string>& skip,
                                std::set<std::string>* touched) {
  std::vector<Pod> again;
  for (const auto& [uid, pod] : pods_.all()) {
    if (!DependsOnOthersLocked(pod) || skip.contains(uid)) continue;
    bool judged_by_node = !pod.extended_resource_claim.empty() || book_.IsBare(uid);
    if (dra_changed || (judged_by_node && nodes.contains(pod.node_name))) again.push_back(pod);
  }
  for (Pod& p : again) ObservePodLocked(std::move(p), touched);
}

}  // namespace gpusched::inventory
