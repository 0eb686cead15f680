// File: cluster_state.h
//
// The cluster's DRA objects, decoded and indexed: ResourceSlices (for per-node gathering),
// DeviceClasses, ResourceClaims, and the devices their allocations hold. Immutable once built;
// the inventory publishes a new one with every change of the DRA objects, so a snapshot's
// allocator inputs are consistent. Objects that failed to decode are listed in errors() and
// otherwise ignored (one bad object cannot take DRA down).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/dra/allocator.h"
#include "gpusched/dra/types.h"
#include "gpusched/model/pod.h"

namespace gpusched::dra {

class ClusterState {
 public:
  // `previous`, when given, is a state this one follows: nodes whose DRA inputs did not change
  // keep their NodeVersion. `admin_namespaces`: the namespaces labelled
  // resource.kubernetes.io/admin-access=true, when the source watches Namespaces.
  ClusterState(std::vector<SlicePtr> slices, std::vector<DeviceClass> classes, std::vector<ResourceClaim> claims,
               std::vector<std::string> errors, const ClusterState* previous = nullptr,
               std::optional<std::set<std::string, std::less<>>> admin_namespaces = std::nullopt);

  const SliceIndex& slices() const { return slices_; }
  const std::map<std::string, DeviceClass, std::less<>>& classes() const { return classes_; }
  const AllocatedDevices& allocated() const { return allocated_; }
  const std::vector<std::string>& errors() const { return errors_; }
  const std::map<std::pair<std::string, std::string>, ResourceClaim>& claims() const { return claims_; }
  // The namespaces whose claims may ask for adminAccess (admission's rule, which the allocator
  // applies again: a label removed after a claim was created); nullopt when Namespaces are not
  // known (a snapshot without them): then the rule is admission's alone.
  const std::optional<std::set<std::string, std::less<>>>& admin_namespaces() const { return admin_namespaces_; }

  // Returns the claim `namespace_name`/`name`, or nullptr.
  const ResourceClaim* FindClaim(const std::string& namespace_name, const std::string& name) const;
  // Returns which allocated claim holds `id` (namespace/name; the first by name when several
  // share it), or "".
  std::string Holder(const DeviceId& id) const;
  // The allocated claims holding `id` (several for a shared device), by namespace and name;
  // adminAccess results hold nothing. Valid as long as the state.
  std::span<const ResourceClaim* const> HoldersOf(const DeviceId& id) const;

  // The pod's claims resolved as kube-scheduler resolves them (resourceclaim.Name): a named claim
  // as is, a template claim through pod.status.resourceClaimStatuses (and it must be owned by the
  // pod). `problem` says why the pod cannot be scheduled yet; `claims` skips entries whose
  // generated name is empty (nothing to allocate). The special claim of extended resources
  // (pod.extended_resource_claim) comes last, once the state has it.
  struct PodClaims {
    std::vector<const ResourceClaim*> claims;
    std::string problem;
  };
  PodClaims Resolve(const Pod& pod) const;

  // The pools and candidates visible from `node` with default features, cached per node name
  // when no slice selects nodes by label (then labels cannot change the answer). Thread-safe.
  NodePoolsPtr PoolsFor(const NodeInfo& node) const;

  // A version of everything the allocator reads for `node` besides the node object itself and
  // the pod's own claims: the slices of its pools and of pools not pinned to a node, which of
  // their devices are held and how much capacity is consumed, the device classes, and which
  // namespaces allow adminAccess. Two states
  // give a node the same version only if those are equal (versions are unique in the process
  // and carried from `previous` only when unchanged); never 0.
  uint64_t NodeVersion(std::string_view node) const;

  // Devices a pod holds through its allocated claims ("driver/pool/device"), for the ledger.
  std::vector<std::string> DevicesOf(const Pod& pod) const;

 private:
  SliceIndex slices_;
  std::map<std::string, DeviceClass, std::less<>> classes_;
  std::map<std::pair<std::string, std::string>, ResourceClaim> claims_;
  AllocatedDevices allocated_;
  std::map<DeviceId, std::vector<const ResourceClaim*>> holders_;  // into claims_
  std::vector<std::string> errors_;
  std::optional<std::set<std::string, std::less<>>> admin_namespaces_;
  // Sets the versions above, comparing with `previous` (may be null).
  void AssignVersions(const ClusterState* previous);
  // The slices of every pool `node` publishes to, in pool order.
  std::vector<const IndexedSlice*> PoolSlicesOf(std::string_view node) const;
  uint64_t global_version_ = 0;                                      // classes, unpinned slices
  std::map<std::string, uint64_t, std::less<>> node_versions_;       // nodes with pinned slices
  mutable Mutex pools_mu_;
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  mutable std::unordered_map<std::string, NodePoolsPtr, NameHash, std::equal_to<>> pools_ GPUSCHED_GUARDED_BY(pools_mu_);
};

using ClusterStatePtr = std::shared_ptr<const ClusterState>;

// Returns "driver/pool/device".
std::string DeviceName(const DeviceId& id);
// The id DeviceName wrote ("driver/pool/device"; a pool name may hold slashes); nullopt when
// `name` has fewer than two slashes.
std::optional<DeviceId> ParseDeviceName(std::string_view name);

}  // namespace gpusched::dra
