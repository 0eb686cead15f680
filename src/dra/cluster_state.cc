// File: cluster_state.cc
//
// The indexed DRA state: classes and claims by name, the devices allocations hold and their
// holders, a version per node's slices (kept from the previous state when unchanged), a pod's
// claims resolved (or why not), and per-node pools gathered once.
#include "gpusched/dra/cluster_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

namespace gpusched::dra {

std::string DeviceName(const DeviceId& id) { return fmt::format("{}/{}/{}", id.driver, id.pool, id.device); }

std::optional<DeviceId> ParseDeviceName(std::string_view name) {
  size_t first = name.find('/'), last = name.rfind('/');
  if (first == std::string_view::npos || first == last) return std::nullopt;
  return DeviceId{std::string(name.substr(0, first)), std::string(name.substr(first + 1, last - first - 1)),
                  std::string(name.substr(last + 1))};
}

ClusterState::ClusterState(std::vector<SlicePtr> slices, std::vector<DeviceClass> classes,
                           std::vector<ResourceClaim> claims, std::vector<std::string> errors, const ClusterState* previous,
                           std::optional<std::set<std::string, std::less<>>> admin_namespaces)
    : slices_(std::move(slices)), errors_(std::move(errors)), admin_namespaces_(std::move(admin_namespaces)) {
  for (DeviceClass& c : classes) {
    std::string name = c.name;
    classes_.emplace(std::move(name), std::move(c));
  }
  for (ResourceClaim& c : claims) {
    auto key = std::make_pair(c.namespace_name, c.name);
    claims_.emplace(std::move(key), std::move(c));
  }
  for (const auto& [key, c] : claims_) {
    if (!c.allocation) continue;
    allocated_.Add(*c.allocation);
    for (const DeviceResult& r : c.allocation->results) {
      if (r.admin_access) continue;
      std::vector<const ResourceClaim*>& holders = holders_[r.id];
      if (holders.empty() || holders.back() != &c) holders.push_back(&c);
    }
  }
  for (const auto& s : slices_.all()) s->MarkHeld(allocated_);
  AssignVersions(previous);
}

namespace {

uint64_t FreshVersion() {
  static std::atomic<uint64_t> last{0};
  return ++last;
}

bool SameSlices(const std::vector<const IndexedSlice*>& a, const std::vector<const IndexedSlice*>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const IndexedSlice* x, const IndexedSlice* y) { return x->SameAs(*y); });
}

}  // namespace

std::vector<const IndexedSlice*> ClusterState::PoolSlicesOf(std::string_view node) const {
  std::vector<const IndexedSlice*> out;
  std::vector<size_t> pools;
  for (const IndexedSlice* s : slices_.PinnedTo(node)) {
    if (std::find(pools.begin(), pools.end(), s->pool_id()) != pools.end()) continue;
    pools.push_back(s->pool_id());
    const std::vector<const IndexedSlice*>& members = slices_.PoolOf(*s);
    out.insert(out.end(), members.begin(), members.end());
  }
  return out;
}

void ClusterState::AssignVersions(const ClusterState* previous) {
  bool global_same = previous != nullptr && classes_ == previous->classes_ && admin_namespaces_ == previous->admin_namespaces_ &&
                     SameSlices(slices_.unpinned(), previous->slices_.unpinned());
  global_version_ = global_same ? previous->global_version_ : FreshVersion();
  for (const auto& [node, pinned] : slices_.by_node()) {
    uint64_t version = 0;
    if (global_same) {
      auto it = previous->node_versions_.find(node);
      if (it != previous->node_versions_.end() && SameSlices(PoolSlicesOf(node), previous->PoolSlicesOf(node))) version = it->second;
    }
    node_versions_.emplace_hint(node_versions_.end(), node, version != 0 ? version : FreshVersion());
  }
}

uint64_t ClusterState::NodeVersion(std::string_view node) const {
  auto it = node_versions_.find(node);
  return it == node_versions_.end() ? global_version_ : it->second;
}

const ResourceClaim* ClusterState::FindClaim(const std::string& namespace_name, const std::string& name) const {
  auto it = claims_.find({namespace_name, name});
  return it == claims_.end() ? nullptr : &it->second;
}

std::string ClusterState::Holder(const DeviceId& id) const {
  auto it = holders_.find(id);
  return it == holders_.end() ? "" : fmt::format("{}/{}", it->second.front()->namespace_name, it->second.front()->name);
}

std::span<const ResourceClaim* const> ClusterState::HoldersOf(const DeviceId& id) const {
  auto it = holders_.find(id);
  if (it == holders_.end()) return {};
  return it->second;
}

ClusterState::PodClaims ClusterState::Resolve(const Pod& pod) const {
  PodClaims out;
  for (const PodClaimRef& ref : pod.resource_claims) {
    std::string name = ref.claim_name;
    if (!ref.template_name.empty()) {
      if (!ref.generated) {
        out.problem = fmt::format("pod {}/{}: claim {} from template {} is not created yet "
                                  "(no entry in status.resourceClaimStatuses)",
                                  pod.namespace_name, pod.name, ref.name, ref.template_name);
        return out;
      }
      if (ref.generated->empty()) continue;  // the controller decided no claim is needed
      name = *ref.generated;
    }
    const ResourceClaim* claim = FindClaim(pod.namespace_name, name);
    if (claim == nullptr) {
      out.problem = fmt::format("pod {}/{}: resourceclaim {}/{} (claim {}) not found", pod.namespace_name, pod.name,
                                pod.namespace_name, name, ref.name);
      return out;
    }
    if (claim->deleting) {
      out.problem = fmt::format("pod {}/{}: resourceclaim {}/{} is being deleted", pod.namespace_name, pod.name,
                                pod.namespace_name, name);
      return out;
    }
    if (!ref.template_name.empty() && !claim->owner_pod_uid.empty() && !pod.uid.empty() && claim->owner_pod_uid != pod.uid) {
      out.problem = fmt::format("pod {}/{}: resourceclaim {}/{} was not created for the pod", pod.namespace_name, pod.name,
                                pod.namespace_name, name);
      return out;
    }
    out.claims.push_back(claim);
  }
  // The special claim for extended resources (KEP 5004): kube-scheduler records it once created
  // and allocated, so one not seen yet is not waited for.
  if (!pod.extended_resource_claim.empty()) {
    const ResourceClaim* claim = FindClaim(pod.namespace_name, pod.extended_resource_claim);
    if (claim != nullptr && !claim->deleting) out.claims.push_back(claim);
  }
  return out;
}

NodePoolsPtr ClusterState::PoolsFor(const NodeInfo& node) const {
  if (slices_.has_unpinned()) return GatherNodePools(slices_, node, Features{});
  {
    MutexLock lock(&pools_mu_);
    if (auto it = pools_.find(node.name); it != pools_.end()) return it->second;
  }
  NodePoolsPtr gathered = GatherNodePools(slices_, node, Features{});
  MutexLock lock(&pools_mu_);
  return pools_.emplace(std::string(node.name), std::move(gathered)).first->second;
}

std::vector<std::string> ClusterState::DevicesOf(const Pod& pod) const {
  std::vector<std::string> out;
  for (const ResourceClaim* c : Resolve(pod).claims) {
    if (!c->allocation) continue;
    for (const DeviceResult& r : c->allocation->results) out.push_back(DeviceName(r.id));
  }
  return out;
}

}  // namespace gpusched::dra
