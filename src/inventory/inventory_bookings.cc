// File: inventory_bookings.cc
//
// Inventory's bind lifecycle: a placement committed for a pod (checked to still fit under the
// lock), released or reverted, and the node bookings (gpusched.io/bookings, this replica's and
// others') read into the ledger, each fresh for booking_ttl.
#include <fmt/format.h>

#include <algorithm>

#include "gpusched/dra/extended_resources.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/model/names.h"
#include "gpusched/placement/allocation_record.h"
#include "gpusched/placement/fit_check.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/what_if.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::inventory {

void Inventory::SyncBookingsLocked(const std::string& node, std::set<std::string>* touched) {
  bool changed = false;
  auto it = nodes_.find(node);
  const std::vector<NodeBooking>* bookings = it == nodes_.end() ? nullptr : &it->second.spec.bookings;
  std::set<std::string_view> live;
  std::vector<Allocation> extra;
  if (bookings != nullptr) {
    for (const NodeBooking& b : *bookings) {
      const std::string& uid = b.allocation.pod_uid;
      if (book_.IsGone(uid) || !book_.BookingFresh(b.booked_at_ms)) continue;
      const Pod* pod = pods_.Find(uid);
      if (pod != nullptr && pod->terminal()) continue;
      const Allocation* held = book_.Find(uid);
      // Only the cluster's word ends a booking elsewhere: an observed allocation, or a pod seen
      // bound without one. Our own bind in flight (kCommitted, which marks the pod record bound)
      // may still lose to the attempt that booked here.
      if (held != nullptr ? held->origin == AllocationOrigin::kObserved && held->node_name != node
                          : pod != nullptr && pod->bound() && pod->node_name != node) {
        continue;
      }
      live.insert(uid);
      Allocation a = b.allocation;
      a.origin = AllocationOrigin::kBooked;
      a.node_name = node;
      if (held != nullptr) {
        // Observed or booked here: that allocation counts. Booked on another node too: two attempts
        // to bind the pod are in flight and either may win, so this one counts as well.
        if (held->node_name != node) extra.push_back(std::move(a));
        continue;
      }
      book_.Book(std::move(a), b.booked_at_ms);
      changed = true;
    }
  }
  for (const AllocationPtr& a : book_.OnNode(node)) {
    if (a->origin != AllocationOrigin::kBooked || live.contains(a->pod_uid)) continue;
    book_.Release(a->pod_uid);
    changed = true;
  }
  if (book_.SetSecondBookings(node, std::move(extra))) changed = true;
  if (changed && touched != nullptr) touched->insert(node);
}

std::set<std::string> Inventory::BookedNodesLocked() const {
  std::set<std::string> out(annotated_.booked().begin(), annotated_.booked().end());
  for (std::string& name : book_.NodesWithSecondBookings()) out.insert(std::move(name));
  return out;
}

Status Inventory::Commit(const Pod& pod, const std::string& node, const Placement& placement, Node* checked) {
  MutexLock lock(&mu_);
  std::set<std::string> touched;
  if (!placement.empty()) {
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return NotFoundError("node " + node + " is not in the inventory");
    // A booking of an earlier attempt to bind this pod (ours before a restart, or another
    // replica's) is replaced by this bind; should this one not fit, it is put back.
    std::string replaced;
    if (const Allocation* held = book_.Find(pod.uid); held != nullptr && held->origin == AllocationOrigin::kBooked) {
      replaced = UnbookLocked(pod.uid);
      RebuildLocked({replaced});
    }
    // Its own hold, its controller's and holds of lower priority are room for it (what_if.h).
    placement::WhatIf own(*it->second.state);
    Status fits = placement::CheckFits(own.SeenBy(placement::Viewer::Of(pod)).state(), placement);
    if (fits.ok()) {
      fits = book_.Commit(Allocation{.pod_uid = pod.uid,
                                     .pod_namespace = pod.namespace_name,
                                     .pod_name = pod.name,
                                     .node_name = node,
                                     .mode = ModeServing(placement.kind),
                                     .placement = placement,
                                     .priority = pod.priority});
    }
    // The replaced booking: gone if on this node (this bind supersedes it), an extra booking if
    // on another (either attempt may still win there), back in the ledger if this one failed.
    if (!replaced.empty()) {
      SyncBookingsLocked(replaced, &touched);
      touched.insert(replaced);
    }
    if (!fits.ok()) {
      if (!touched.empty()) {
        RebuildLocked(touched);
        PublishLocked(false);
      }
      return fits;
    }
    if (checked != nullptr) *checked = it->second.spec;
    touched.insert(node);
    book_.nominations().End(pod.uid, &touched);  // it holds real GPUs now
    UseHoldLocked(pod, node, &touched);
  } else if (checked != nullptr) {
    // Nothing to book: the node as known (or just its name) is what the bind targets.
    auto it = nodes_.find(node);
    if (it != nodes_.end()) {
      *checked = it->second.spec;
    } else {
      *checked = Node{.name = node};
    }
  }
  Pod record = pod;
  record.node_name = node;
  // Judged by its node from now on (ExtendedThroughDraLocked), until the cluster reports it or
  // assume_ttl passes.
  if (placement.empty()) book_.CommitBare(pod.uid);
  for (auto& [key, value] : placement::ResultAnnotations(placement)) record.annotations[key] = std::move(value);
  TrackUseLocked(record, &touched);  // kube-scheduler counts it on the node from its bind on
  if (placement.empty() && (!record.resource_claims.empty() || ExtendedThroughDraLocked(record, placement::AnalyzePod(record)))) {
    ObservePodLocked(std::move(record), &touched);  // holds what its (allocated) claims hold
  } else {
    pods_.Put(std::move(record));
  }
  RebuildLocked(touched);
  PublishLocked(false);
  return OkStatus();
}

void Inventory::RevertBareLocked(const std::string& uid, std::set<std::string>* touched) {
  book_.EndBare(uid);
  const Pod* known = pods_.Find(uid);
  if (known == nullptr) return;
  touched->insert(known->node_name);
  DropUseLocked(uid, known->node_name, touched);
  Pod pending = *known;
  pending.node_name.clear();
  ObservePodLocked(std::move(pending), touched);  // what its claims held there is no longer held
}

void Inventory::Release(std::string_view uid) {
  MutexLock lock(&mu_);
  if (book_.IsBare(uid)) {
    std::set<std::string> touched;
    RevertBareLocked(std::string(uid), &touched);
    RebuildLocked(touched);
    PublishLocked(false);
    return;
  }
  const Allocation* held = book_.Find(uid);
  // Once the cluster reported the pod bound, that allocation is the truth, whatever our bind did.
  if (held == nullptr || held->origin != AllocationOrigin::kCommitted) return;
  std::string node = UnbookLocked(std::string(uid));
  RebuildLocked({node});
  PublishLocked(false);
}

std::string Inventory::UnbookLocked(const std::string& uid) {
  const Allocation* held = book_.Find(uid);
  bool ours = held != nullptr && held->origin == AllocationOrigin::kCommitted;
  std::string node = book_.Release(uid);
  const Pod* known = pods_.Find(uid);
  if (ours) DropUseLocked(uid, node, nullptr);
  if (ours && known != nullptr) {
    // Commit recorded the node and result annotations on the pod record: take them back.
    Pod pod = *known;
    pod.node_name.clear();
    std::erase_if(pod.annotations, [](const auto& kv) {
      return kv.first.starts_with(names::kGpuIndexContainerPrefix) || kv.first == names::kAssumed;
    });
    pods_.Put(std::move(pod));
  }
  return node;
}

}  // namespace gpusched::inventory
