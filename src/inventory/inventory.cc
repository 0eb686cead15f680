#include "gpusched/inventory/inventory.h"

#include <algorithm>

#include "gpusched/model/names.h"
#include "gpusched/placement/allocation_record.h"
#include "gpusched/placement/fit_check.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::inventory {

Inventory::Inventory(InventoryOptions options) : options_(options) {
  MutexLock lock(&mu_);
  PublishLocked(true);
}

void Inventory::PutPodLocked(Pod&& pod) {
  auto it = pods_.find(pod.uid);
  if (it != pods_.end()) {
    if (!it->second.bound()) --unbound_pods_;
    if (!pod.bound()) ++unbound_pods_;
    it->second = std::move(pod);
    return;
  }
  if (!pod.bound()) ++unbound_pods_;
  std::string uid = pod.uid;
  pods_.emplace(std::move(uid), std::move(pod));
}

void Inventory::ErasePodLocked(const std::string& uid) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) return;
  if (!it->second.bound()) --unbound_pods_;
  pods_.erase(it);
}

std::chrono::steady_clock::time_point Inventory::Now() const {
  return options_.clock ? options_.clock() : std::chrono::steady_clock::now();
}

void Inventory::ObservePodLocked(Pod&& pod, std::set<std::string>* touched) {
  const Allocation* existing = ledger_.Find(pod.uid);
  placement::PodRequest request = placement::AnalyzePod(pod);
  bool holds = pod.bound() && !pod.terminal() && request.kind != RequestKind::kNone;
  if (holds) {
    Allocation observed = placement::RecordedAllocation(pod, request);
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
    committed_at_.erase(pod.uid);
    ledger_.Put(std::move(observed));
  } else if (existing != nullptr) {
    bool in_flight = existing->origin == AllocationOrigin::kCommitted && !pod.bound() && !pod.terminal();
    if (in_flight) {
      auto at = committed_at_.find(pod.uid);
      in_flight = at != committed_at_.end() && Now() - at->second <= options_.assume_ttl;
    }
    if (in_flight) {
      // Our bind is ahead of the cluster's copy: keep the booking and what we recorded.
      auto it = pods_.find(pod.uid);
      if (it != pods_.end()) pod = it->second;
    } else {
      touched->insert(ledger_.Release(pod.uid));
      committed_at_.erase(pod.uid);
      // A stale booking of ours: the record carries our node and annotations; the source's
      // copy (unbound) replaces it below.
    }
  }
  PutPodLocked(std::move(pod));
}

void Inventory::RebuildLocked(const std::set<std::string>& touched) {
  std::vector<std::pair<NodeEntry*, placement::NodeState>> built;
  built.reserve(touched.size());
  for (const std::string& name : touched) {
    auto it = nodes_.find(name);
    if (it == nodes_.end()) continue;
    built.emplace_back(&it->second, placement::BuildNodeState(it->second.spec, ledger_.OnNode(name)));
  }
  // Allocated back to back, after everything the builds allocated, the states and their GPU arrays
  // of a large rebuild sit close together in memory: a filter scan over thousands of nodes then
  // misses neither cache nor TLB at every node.
  for (auto& [entry, state] : built) {
    auto fresh = std::make_shared<placement::NodeState>(std::move(state));
    fresh->gpus = std::vector<placement::GpuSlot>(fresh->gpus.begin(), fresh->gpus.end());
    entry->state = std::move(fresh);
  }
}

void Inventory::PublishLocked(bool node_set_changed) {
  std::vector<NodeStatePtr> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [name, entry] : nodes_) nodes.push_back(entry.state);
  if (node_set_changed || index_ == nullptr) {
    auto index = std::make_shared<NameIndex>();
    index->reserve(nodes_.size());
    size_t i = 0;
    for (const auto& [name, entry] : nodes_) index->emplace(name, i++);
    index_ = std::move(index);
  }
  snapshot_.store(std::make_shared<const InventorySnapshot>(++version_, std::move(nodes), index_));
}

void Inventory::ReplaceCluster(ClusterObjects&& objects) {
  MutexLock lock(&mu_);
  // Bookings of our own binds that the new view may not show yet.
  std::vector<std::pair<Allocation, Pod>> committed;
  for (const auto& [uid, a] : ledger_.all()) {
    if (a.origin != AllocationOrigin::kCommitted) continue;
    auto pod = pods_.find(uid);
    if (pod != pods_.end()) committed.emplace_back(a, pod->second);
  }
  // Pods seen in filter and not bound stay remembered.
  std::vector<Pod> pending;
  for (const auto& [uid, pod] : pods_) {
    if (!pod.bound()) pending.push_back(pod);
  }

  nodes_.clear();
  for (Node& n : objects.nodes) {
    std::string name = n.name;
    nodes_[name] = NodeEntry{std::move(n), nullptr};
  }
  pods_.clear();
  unbound_pods_ = 0;
  ledger_ = Ledger();
  for (Pod& p : pending) PutPodLocked(std::move(p));
  for (auto& [a, pod] : committed) {
    ledger_.Put(a);
    PutPodLocked(Pod(pod));
  }
  std::set<std::string> touched;
  std::set<std::string> seen;
  for (Pod& p : objects.pods) {
    seen.insert(p.uid);
    ObservePodLocked(std::move(p), &touched);
  }
  // A committed booking on a node that no longer exists cannot be honoured.
  for (auto& [a, pod] : committed) {
    if (!nodes_.contains(a.node_name) && !seen.contains(a.pod_uid)) {
      ledger_.Release(a.pod_uid);
      committed_at_.erase(a.pod_uid);
    }
  }
  dra_ = ClusterObjects{.resource_slices = std::move(objects.resource_slices),
                        .resource_claims = std::move(objects.resource_claims),
                        .device_classes = std::move(objects.device_classes)};
  std::set<std::string> all;
  for (const auto& [name, entry] : nodes_) all.insert(name);
  RebuildLocked(all);
  PublishLocked(true);
}

size_t Inventory::UpsertNodes(std::vector<Node>&& nodes) {
  MutexLock lock(&mu_);
  std::set<std::string> touched;
  bool added = false;
  for (Node& n : nodes) {
    auto it = nodes_.find(n.name);
    if (it != nodes_.end() && it->second.spec == n) continue;
    if (it == nodes_.end()) added = true;
    touched.insert(n.name);
    std::string name = n.name;
    nodes_[name].spec = std::move(n);
  }
  if (touched.empty()) return 0;
  RebuildLocked(touched);
  PublishLocked(added);
  return touched.size();
}

void Inventory::DeleteNode(std::string_view name) {
  MutexLock lock(&mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  nodes_.erase(it);
  PublishLocked(true);
}

void Inventory::UpsertPod(Pod&& pod) {
  MutexLock lock(&mu_);
  std::set<std::string> touched;
  ObservePodLocked(std::move(pod), &touched);
  RebuildLocked(touched);
  PublishLocked(false);
}

void Inventory::DeletePod(std::string_view uid) {
  MutexLock lock(&mu_);
  std::string node = ledger_.Release(uid);
  committed_at_.erase(std::string(uid));
  ErasePodLocked(std::string(uid));
  if (!node.empty()) RebuildLocked({node});
  PublishLocked(false);
}

void Inventory::RememberPod(Pod&& pod) {
  MutexLock lock(&mu_);
  auto it = pods_.find(pod.uid);
  if (it != pods_.end()) {
    if (it->second.bound() || ledger_.Find(pod.uid) != nullptr) return;
    it->second = std::move(pod);
    return;
  }
  pending_fifo_.push_back(pod.uid);
  PutPodLocked(std::move(pod));
  TrimPendingLocked();
}

void Inventory::TrimPendingLocked() {
  while (unbound_pods_ > options_.max_pending_pods && !pending_fifo_.empty()) {
    std::string uid = std::move(pending_fifo_.front());
    pending_fifo_.pop_front();
    auto it = pods_.find(uid);
    if (it != pods_.end() && !it->second.bound() && ledger_.Find(uid) == nullptr) ErasePodLocked(uid);
  }
  // Entries of pods that were bound or deleted meanwhile are stale; drop them when they pile up.
  if (pending_fifo_.size() > 2 * options_.max_pending_pods + 1024) {
    std::deque<std::string> live;
    for (std::string& uid : pending_fifo_) {
      auto it = pods_.find(uid);
      if (it != pods_.end() && !it->second.bound()) live.push_back(std::move(uid));
    }
    pending_fifo_ = std::move(live);
  }
}

InventoryStats Inventory::Stats() const {
  MutexLock lock(&mu_);
  return InventoryStats{.ledger_size = ledger_.size(),
                        .pods_known = pods_.size(),
                        .pending_pods = unbound_pods_,
                        .dra_objects =
                            dra_.resource_slices.size() + dra_.resource_claims.size() + dra_.device_classes.size()};
}

std::optional<Pod> Inventory::FindPod(std::string_view uid) const {
  MutexLock lock(&mu_);
  auto it = pods_.find(std::string(uid));
  if (it == pods_.end()) return std::nullopt;
  return it->second;
}

std::optional<Allocation> Inventory::AllocationOf(std::string_view uid) const {
  MutexLock lock(&mu_);
  const Allocation* a = ledger_.Find(uid);
  if (a == nullptr) return std::nullopt;
  return *a;
}

Status Inventory::Commit(const Pod& pod, const std::string& node, const Placement& placement) {
  MutexLock lock(&mu_);
  if (placement.kind != RequestKind::kNone) {
    auto it = nodes_.find(node);
    if (it == nodes_.end()) return NotFoundError("node " + node + " is not in the inventory");
    GPUSCHED_RETURN_IF_ERROR(placement::CheckFits(*it->second.state, placement));
    GPUSCHED_RETURN_IF_ERROR(ledger_.Add(Allocation{.pod_uid = pod.uid,
                                                    .pod_namespace = pod.namespace_name,
                                                    .pod_name = pod.name,
                                                    .node_name = node,
                                                    .mode = ModeServing(placement.kind),
                                                    .placement = placement,
                                                    .origin = AllocationOrigin::kCommitted}));
    committed_at_[pod.uid] = Now();
  }
  Pod record = pod;
  record.node_name = node;
  for (auto& [key, value] : placement::ResultAnnotations(placement)) record.annotations[key] = std::move(value);
  PutPodLocked(std::move(record));
  if (placement.kind != RequestKind::kNone) RebuildLocked({node});
  PublishLocked(false);
  return OkStatus();
}

void Inventory::Release(std::string_view uid) {
  MutexLock lock(&mu_);
  std::string node = ledger_.Release(uid);
  committed_at_.erase(std::string(uid));
  auto it = pods_.find(std::string(uid));
  if (it != pods_.end() && !node.empty()) {
    Pod pod = it->second;
    pod.node_name.clear();
    std::erase_if(pod.annotations, [](const auto& kv) {
      return kv.first.starts_with(names::kGpuIndexContainerPrefix) || kv.first == names::kAssumed;
    });
    PutPodLocked(std::move(pod));
  }
  if (!node.empty()) RebuildLocked({node});
  PublishLocked(false);
}

}  // namespace gpusched::inventory
