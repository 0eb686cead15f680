// File: object_set.h
//
// The DRA objects of a cluster as a source sees them, decoded once and keyed by kind and
// namespace/name: the set a watch keeps current with typed deltas, and from which it builds the
// immutable ClusterState the allocator reads (outside any lock readers wait on). An object that
// could not be decoded is held as its error, so that /debug/inventory names it, and replaced or
// deleted like any other.
//
// Not thread-safe: one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "gpusched/dra/cluster_state.h"
#include "gpusched/dra/types.h"

namespace gpusched::dra {

// The objects the DRA state is built from; Namespaces for adminAccess's namespace rule.
enum class ObjectKind { kResourceSlice, kDeviceClass, kResourceClaim, kDeviceTaintRule, kNamespace };

// "ResourceSlice", "DeviceClass", "ResourceClaim", "DeviceTaintRule", "Namespace".
std::string_view ObjectKindName(ObjectKind kind);

// One DRA object as read from the API server, or why it could not be read.
struct DraObject {
  ObjectKind kind = ObjectKind::kResourceSlice;
  std::string key;               // namespace/name for claims, name otherwise
  std::string resource_version;  // metadata.resourceVersion ("" if none)
  std::variant<std::monostate, SlicePtr, DeviceClass, ResourceClaim, DeviceTaintRule, NamespaceAccess> value;  // monostate: unreadable
  std::string error;  // when unreadable: names the object, the field and the value

  bool readable() const { return value.index() != 0; }
};

// Changes to the DRA objects, in the order a watch delivered them.
struct DraDelta {
  std::vector<DraObject> upserts;
  std::vector<std::pair<ObjectKind, std::string>> deletes;  // kind, key
  // Kinds relisted: the upserts of these kinds are their complete set; the others go.
  std::vector<ObjectKind> relisted;

  bool empty() const { return upserts.empty() && deletes.empty() && relisted.empty(); }
};

class DraObjectSet {
 public:
  // Applies `delta`. Returns true if the set changed (an upsert with the key and non-empty
  // resourceVersion already held is no change).
  bool Apply(DraDelta delta);

  // The state of the objects held (shares the slices, copies the rest; unreadable objects
  // become its errors()). The DeviceTaintRules' taints are merged into the devices they match,
  // as kube-scheduler allocates (ListWithDeviceTaintRules): a slice a rule touches is replaced by
  // a copy with the taints appended, kept from one Build to the next while neither the slice nor
  // the rules change (so that its nodes keep their NodeVersion). `previous`: the state this one
  // follows, so that unchanged nodes keep their ClusterState::NodeVersion; may be null. When the
  // set holds Namespaces, the state knows which allow adminAccess (ClusterState::admin_namespaces).
  ClusterStatePtr Build(const ClusterState* previous = nullptr) const;

  size_t size() const { return objects_.size(); }

 private:
  // `slice` with the rules' taints merged in (itself when none matches), from tainted_ if kept.
  SlicePtr Tainted(const SlicePtr& slice, const std::vector<const DeviceTaintRule*>& rules) const;

  std::map<std::pair<ObjectKind, std::string>, DraObject> objects_;
  uint64_t rules_version_ = 0;  // changes whenever a DeviceTaintRule is added, changed or removed
  // The tainted copies made for rules_version_, by the slice they copy.
  mutable std::map<const ResourceSlice*, std::pair<SlicePtr, SlicePtr>> tainted_;
  mutable uint64_t tainted_version_ = 0;
};

// Returns `slice` with the taints of the `rules` that match its devices appended to them, or
// `slice` itself when no rule matches.
SlicePtr WithTaintRules(const SlicePtr& slice, const std::vector<const DeviceTaintRule*>& rules);

// Returns `state` with `claim` in place of the claim of the same namespace and name (added if
// absent): owner mode's in-memory claim writes. Shares the slices, copies the other objects;
// nodes whose devices the write does not touch keep their NodeVersion.
ClusterStatePtr WithClaim(const ClusterState& state, ResourceClaim claim);
// The same for several claims at once (one rebuild).
ClusterStatePtr WithClaims(const ClusterState& state, std::vector<ResourceClaim> claims);

}  // namespace gpusched::dra
