// File: inventory.cc
//
// Inventory's core: pod records, cluster updates, expiry and snapshot publication. Beside it:
// inventory_bookings.cc (the bind lifecycle and node bookings), inventory_observe.cc (observed
// pods), _uses.cc (uses, nominations), _holds.cc (defrag holds), _claims.cc (owner-mode claims).
#include "gpusched/inventory/inventory.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpusched/dra/extended_resources.h"
#include "gpusched/model/names.h"
#include "gpusched/placement/allocation_record.h"
#include "gpusched/placement/fit_check.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/nomination.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::inventory {

Inventory::Inventory(InventoryOptions options)
    : options_(options),
      book_(ReservationTtls{options.assume_ttl, options.booking_ttl, options.nomination_ttl}, options.clock),
      uses_(options.scheduler_name),
      nomination_holds_(placement::DraOptions{.gpu_drivers = options.dra_gpu_drivers}) {
  MutexLock lock(&mu_);
  dra_state_ = std::make_shared<const dra::ClusterState>(std::vector<dra::SlicePtr>{}, std::vector<dra::DeviceClass>{},
                                                         std::vector<dra::ResourceClaim>{}, std::vector<std::string>{});
  PublishLocked(true);
}


bool Inventory::AllocationOnlyLocked(std::string_view uid) const {
  const Allocation* a = book_.Find(uid);
  return a != nullptr && a->origin == AllocationOrigin::kObserved && !pods_.contains(uid);
}

void Inventory::RebuildLocked(const std::set<std::string>& touched) {
  std::vector<std::pair<NodeEntry*, placement::NodeState>> built;
  built.reserve(touched.size());
  std::map<std::string_view, std::vector<const Pod*>> nominated;
  std::map<std::string_view, std::vector<const PodUse*>> nominated_uses;
  for (const auto& [uid, n] : book_.nominations().all()) {
    if (n.gpus) nominated[n.pod.nominated_node].push_back(&n.pod);
    nominated_uses[n.pod.nominated_node].push_back(&n.use);
  }
  std::set<std::string> with_held = WithChangedHoldNodesLocked(touched);
  for (const std::string& name : with_held.empty() ? touched : with_held) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) continue;
    std::vector<AllocationPtr> allocations = book_.CountedOn(name);
    placement::NodeState state = placement::BuildNodeStateSharing(it->second.spec, std::move(allocations));
    state.uses = uses_.Shared(name);
    if (auto n = nominated_uses.find(name); n != nominated_uses.end()) {
      for (const PodUse* use : n->second) state.nominated.push_back(*use);
    }
    std::vector<Allocation> holds = DefragHoldsLocked(name);
    if (auto held = nominated.find(name); held != nominated.end()) {
      // A pod nominated where a hold is kept for it (a gang's slot, room defrag made) holds its
      // GPUs there by that hold alone.
      std::vector<const Pod*> pods;
      for (const Pod* p : held->second) {
        if (std::none_of(holds.begin(), holds.end(), [&](const Allocation& h) { return h.pod_uid == p->uid; })) pods.push_back(p);
      }
      nomination_holds_.Add(*dra_state_, pods, &state);
    }
    for (const Allocation& h : holds) placement::AddHold(h, &state);
    built.emplace_back(&it->second, std::move(state));
  }
  // Allocated back to back, after everything the builds allocated, the states and their GPU arrays
  // of a large rebuild sit close together in memory: a filter scan over thousands of nodes then
  // misses neither cache nor TLB at every node.
  for (auto& [entry, state] : built) entry->state = publisher_.Stamp(entry->spec.name, std::move(state));
}

void Inventory::PublishLocked(bool node_set_changed) {
  std::set<std::string> held;
  for (const auto& [uid, n] : book_.nominations().all()) {
    if (n.gpus) held.insert(n.pod.nominated_node);
  }
  for (const auto& [uid, h] : book_.holds()) held.insert(h.held.node_name);
  for (const auto& [name, keys] : annotated_.counted()) held.insert(name);
  auto all = [this]() GPUSCHED_REQUIRES(mu_) {
    std::vector<std::pair<std::string_view, NodeStatePtr>> out;
    out.reserve(nodes_.size());
    for (const auto& [name, entry] : nodes_) out.emplace_back(name, entry.state);
    return out;
  };
  snapshot_.store(publisher_.Publish(node_set_changed, nodes_.size(), all, dra_state_, uses_.budget_list(),
                                     groups_.groups(), groups_.members(), std::vector<std::string>(held.begin(), held.end())));
}

void Inventory::ReplaceCluster(ClusterObjects&& objects) {
  dra::DraObjectSet dra_objects;
  dra_objects.Apply(dra::DraDelta{.upserts = std::move(objects.dra_objects)});
  dra::ClusterStatePtr dra_state = dra_objects.Build();  // before taking the lock
  kueue_.Replace(std::move(objects.kueue), std::move(objects.claim_templates));
  {
    MutexLock lock(&mu_);
    load_errors_ = std::move(objects.errors);
  }
  // Pending pods, as the watch of pending pods has them: they count where kube-scheduler
  // nominated them, and as members of the groups they name.
  std::vector<Pod> pending;
  for (const Pod& p : objects.pods) {
    if (!p.bound()) pending.push_back(p);
  }
  Apply(ClusterDelta{.upsert_nodes = std::move(objects.nodes),
                     .upsert_pods = std::move(objects.pods),
                     .all_nodes = true,
                     .all_pods = true,
                     .upsert_pending = std::move(pending),
                     .all_pending = true,
                     .upsert_budgets = std::move(objects.budgets),
                     .all_budgets = true,
                     .upsert_groups = std::move(objects.pod_groups),
                     .relisted_groups = {GroupApi::kPodGroup, GroupApi::kWorkload, GroupApi::kCoscheduling},
                     .dra_state = std::move(dra_state)});
}

void Inventory::Apply(ClusterDelta&& delta) {
  MutexLock lock(&mu_);
  ApplyLocked(std::move(delta));
}

void Inventory::ApplyLocked(ClusterDelta&& delta) {
  std::set<std::string> touched;  // nodes whose state must be rebuilt
  std::set<std::string> respec;   // nodes whose object changed: their bookings are re-read
  std::set<std::string> remode;   // nodes whose mode or allocatable changed
  bool node_set_changed = ApplyNodesLocked(&delta, &touched, &respec, &remode);
  // The DRA objects first, so that the pods of this delta are read with the claims they name.
  bool dra_changed = delta.dra_state != nullptr && delta.dra_state != dra_state_;
  if (dra_changed) dra_state_ = std::move(delta.dra_state);
  std::set<std::string> observed;  // pods of this delta, read with the current objects already
  if (dra_changed || !remode.empty()) {
    for (const Pod& p : delta.upsert_pods) observed.insert(p.uid);
  }
  bool changed = ApplyPodsLocked(&delta, &touched);
  ApplyPendingLocked(&delta, &touched);
  bool budgets_changed = ApplyBudgetsLocked(&delta);
  budgets_changed |= groups_.Apply(std::move(delta.upsert_groups), delta.deleted_groups, delta.relisted_groups);
  // Bookings: re-read on nodes whose object changed; pods that changed may end bookings anywhere.
  if (changed || !respec.empty()) {
    std::set<std::string> booked_nodes = BookedNodesLocked();
    booked_nodes.insert(respec.begin(), respec.end());
    for (const std::string& name : booked_nodes) SyncBookingsLocked(name, &touched);
  }
  if (dra_changed || !remode.empty()) ReobserveLocked(dra_changed, remode, observed, &touched);
  changed = changed || dra_changed;
  if (touched.empty() && !node_set_changed && !changed && !budgets_changed && !groups_.members_changed()) return;
  RebuildLocked(touched);
  PublishLocked(node_set_changed);
}

// Returns true if the set of node names changed.
bool Inventory::ApplyNodesLocked(ClusterDelta* delta, std::set<std::string>* touched, std::set<std::string>* respec,
                                 std::set<std::string>* remode) {
  bool node_set_changed = false;
  std::set<std::string> deleted(std::make_move_iterator(delta->deleted_nodes.begin()),
                                std::make_move_iterator(delta->deleted_nodes.end()));
  if (delta->all_nodes) {
    std::set<std::string_view> keep;
    for (const Node& n : delta->upsert_nodes) keep.insert(n.name);
    for (const auto& [name, entry] : nodes_) {
      if (!keep.contains(name)) deleted.insert(name);
    }
  }
  for (const std::string& name : deleted) {
    book_.DropSecondBookings(name);
    annotated_.Remove(name);
    if (nodes_.erase(name) == 0) continue;
    node_set_changed = true;
    // Bookings on a node that is gone cannot be honoured; pods bound there keep theirs until
    // the cluster deletes them.
    for (const AllocationPtr& a : book_.OnNode(name)) {
      if (a->origin != AllocationOrigin::kObserved) UnbookLocked(a->pod_uid);
    }
  }
  for (Node& n : delta->upsert_nodes) {
    auto it = nodes_.find(n.name);
    if (it != nodes_.end() && it->second.spec == n) continue;
    if (it == nodes_.end()) node_set_changed = true;
    if (it == nodes_.end() || it->second.spec.mode_label != n.mode_label || it->second.spec.allocatable != n.allocatable ||
        it->second.spec.other_allocatable != n.other_allocatable) {
      remode->insert(n.name);
    }
    touched->insert(n.name);
    respec->insert(n.name);
    annotated_.Update(n);
    std::string name = n.name;
    nodes_[name].spec = std::move(n);
  }
  return node_set_changed;
}

bool Inventory::ApplyPodsLocked(ClusterDelta* delta, std::set<std::string>* touched) {
  bool changed = false;
  for (const std::string& uid : delta->deleted_pods) {
    if (pods_.contains(uid) || book_.Find(uid) != nullptr) changed = true;
    ForgetPodLocked(uid, touched);
  }
  if (delta->all_pods) {
    std::set<std::string_view> listed;
    for (const Pod& p : delta->upsert_pods) listed.insert(p.uid);
    std::vector<std::string> vanished;
    for (const auto& [uid, pod] : pods_.all()) {
      if (!pod.bound() || listed.contains(uid)) continue;
      const Allocation* a = book_.Find(uid);
      // Our own bind that the cluster's view does not show yet stays booked (assume_ttl).
      if (a != nullptr && a->origin == AllocationOrigin::kCommitted) continue;
      vanished.push_back(uid);
    }
    for (const auto& [uid, a] : book_.all()) {  // pods known by their allocation alone
      if (a->origin == AllocationOrigin::kObserved && !listed.contains(uid) && !pods_.contains(a->pod_uid)) {
        vanished.push_back(a->pod_uid);
      }
    }
    for (const std::string& uid : vanished) ForgetPodLocked(uid, touched);
    changed = changed || !vanished.empty();
  }
  for (Pod& p : delta->upsert_pods) {
    changed = true;
    groups_.PutMember(p);  // bound now, or a snapshot's pending pod
    book_.EndBare(p.uid);  // the cluster's word from now on
    ObservePodLocked(std::move(p), touched);
  }
  return changed;
}

size_t Inventory::Expire() {
  MutexLock lock(&mu_);
  // Committed entries still not seen bound since our bind, bookings past their time, pods bound
  // by us without GPUs of their own and never seen bound since; holds past their time (a
  // nominated pod still counts against its node's other resources while kube-scheduler keeps it
  // nominated there: it counts it so too).
  ReservationBook::Due due = book_.Expire(
      [this](std::string_view node, int32_t priority) GPUSCHED_REQUIRES(mu_) { return VictimsLeavingLocked(node, priority); });
  std::set<std::string> touched;
  for (const std::string& uid : due.entries) touched.insert(UnbookLocked(uid));
  for (const std::string& uid : due.bare) RevertBareLocked(uid, &touched);
  touched.insert(due.hold_nodes.begin(), due.hold_nodes.end());
  ExpireAnnotatedHoldsLocked(&touched);
  for (const std::string& name : BookedNodesLocked()) SyncBookingsLocked(name, &touched);
  if (!touched.empty()) {
    RebuildLocked(touched);
    PublishLocked(false);
  }
  return due.entries.size();
}

size_t Inventory::UpsertNodes(std::vector<Node>&& nodes) {
  size_t changed = 0;
  {
    MutexLock lock(&mu_);
    for (const Node& n : nodes) {
      auto it = nodes_.find(n.name);
      if (it == nodes_.end() || !(it->second.spec == n)) ++changed;
    }
  }
  if (changed > 0) Apply(ClusterDelta{.upsert_nodes = std::move(nodes)});
  return changed;
}

void Inventory::DeleteNode(std::string_view name) { Apply(ClusterDelta{.deleted_nodes = {std::string(name)}}); }

void Inventory::UpsertPod(Pod&& pod) { Apply(ClusterDelta{.upsert_pods = {std::move(pod)}}); }

void Inventory::DeletePod(std::string_view uid) { Apply(ClusterDelta{.deleted_pods = {std::string(uid)}}); }

void Inventory::RememberPod(Pod&& pod) {
  MutexLock lock(&mu_);
  if (AllocationOnlyLocked(pod.uid)) return;  // seen bound: the record would say less
  if (const Pod* known = pods_.Find(pod.uid); known != nullptr && (known->bound() || book_.Find(pod.uid) != nullptr)) return;
  pods_.Remember(std::move(pod));
  // A pod being bound (in the ledger) is never forgotten. Trim calls this under mu_.
  pods_.Trim(options_.max_pending_pods,
             [this](std::string_view uid) GPUSCHED_REQUIRES(mu_) { return book_.Find(uid) == nullptr; });
}

InventoryStats Inventory::Stats() const {
  MutexLock lock(&mu_);
  return InventoryStats{.ledger_size = book_.size(),
                        .pods_known = pods_.size() + allocation_only_,
                        .pending_pods = pods_.unbound(),
                        .dra_objects = dra_state_->slices().all().size() + dra_state_->classes().size() +
                                       dra_state_->claims().size() + dra_state_->errors().size(),
                        .unreadable = load_errors_.size() + pods_.unreadable().size() +
                                      static_cast<size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const auto& kv) {
                                        return !kv.second.spec.spec_error.empty();
                                      }))};
}

std::vector<std::string> Inventory::Errors() const {
  MutexLock lock(&mu_);
  std::vector<std::string> out = load_errors_;
  for (const auto& [name, entry] : nodes_) {
    if (!entry.spec.spec_error.empty()) out.push_back(fmt::format("node {}: {}", name, entry.spec.spec_error));
  }
  for (const auto& [uid, message] : pods_.unreadable()) out.push_back(message);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<Pod> Inventory::FindPod(std::string_view uid) const {
  MutexLock lock(&mu_);
  if (const Pod* p = pods_.Find(uid); p != nullptr) return *p;
  if (!AllocationOnlyLocked(uid)) return std::nullopt;
  const Allocation* a = book_.Find(uid);
  return Pod{.uid = a->pod_uid, .namespace_name = a->pod_namespace, .name = a->pod_name, .node_name = a->node_name,
             .phase = PodPhase::kRunning, .priority = a->priority, .terminating = a->terminating};
}

std::optional<std::string> Inventory::FindUid(std::string_view ns, std::string_view name) const {
  MutexLock lock(&mu_);
  for (const auto& [uid, pod] : pods_.all()) {
    if (pod.namespace_name == ns && pod.name == name) return uid;
  }
  for (const auto& [uid, a] : book_.all()) {
    if (a->pod_namespace == ns && a->pod_name == name) return a->pod_uid;
  }
  return std::nullopt;
}

std::optional<Allocation> Inventory::AllocationOf(std::string_view uid) const {
  MutexLock lock(&mu_);
  const Allocation* a = book_.Find(uid);
  if (a == nullptr) return std::nullopt;
  return *a;
}

}  // namespace gpusched::inventory
