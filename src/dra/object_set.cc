// File: object_set.cc
//
// The decoded DRA objects as a watch keeps them: deltas applied (a relist drops what it no longer
// lists; an unchanged resourceVersion is skipped), DeviceTaintRules merged into slices (cached per
// slice), and the immutable ClusterState built from them.
#include "gpusched/dra/object_set.h"

#include <map>
#include <optional>
#include <set>

namespace gpusched::dra {

std::string_view ObjectKindName(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kResourceSlice: return "ResourceSlice";
    case ObjectKind::kDeviceClass: return "DeviceClass";
    case ObjectKind::kResourceClaim: return "ResourceClaim";
    case ObjectKind::kDeviceTaintRule: return "DeviceTaintRule";
    case ObjectKind::kNamespace: return "Namespace";
  }
  return "ResourceSlice";
}

bool DraObjectSet::Apply(DraDelta delta) {
  bool changed = false;
  bool rules = false;  // a DeviceTaintRule changed
  auto note = [&](ObjectKind kind) {
    changed = true;
    rules = rules || kind == ObjectKind::kDeviceTaintRule;
  };
  for (ObjectKind kind : delta.relisted) {
    std::set<std::string> listed;
    for (const DraObject& o : delta.upserts) {
      if (o.kind == kind) listed.insert(o.key);
    }
    if (std::erase_if(objects_, [&](const auto& entry) { return entry.first.first == kind && !listed.contains(entry.first.second); }) > 0) {
      note(kind);
    }
  }
  for (auto& [kind, key] : delta.deletes) {
    if (objects_.erase({kind, key}) > 0) note(kind);
  }
  for (DraObject& o : delta.upserts) {
    auto [it, inserted] = objects_.try_emplace({o.kind, o.key});
    if (!inserted && !o.resource_version.empty() && it->second.resource_version == o.resource_version) continue;
    ObjectKind kind = o.kind;
    it->second = std::move(o);
    note(kind);
  }
  if (rules) ++rules_version_;
  return changed;
}

SlicePtr WithTaintRules(const SlicePtr& slice, const std::vector<const DeviceTaintRule*>& rules) {
  std::shared_ptr<ResourceSlice> copy;
  for (size_t i = 0; i < slice->devices.size(); ++i) {
    for (const DeviceTaintRule* rule : rules) {
      if (!rule->Matches(slice->driver, slice->pool, slice->devices[i].name)) continue;
      if (copy == nullptr) copy = std::make_shared<ResourceSlice>(*slice);
      copy->devices[i].taints.push_back(rule->taint);
    }
  }
  return copy != nullptr ? SlicePtr(std::move(copy)) : slice;
}

SlicePtr DraObjectSet::Tainted(const SlicePtr& slice, const std::vector<const DeviceTaintRule*>& rules) const {
  if (rules.empty()) return slice;
  auto it = tainted_.find(slice.get());
  if (it != tainted_.end() && it->second.first == slice) return it->second.second;
  SlicePtr merged = WithTaintRules(slice, rules);
  tainted_[slice.get()] = {slice, merged};
  return merged;
}

ClusterStatePtr DraObjectSet::Build(const ClusterState* previous) const {
  std::vector<const DeviceTaintRule*> rules;
  for (const auto& [id, o] : objects_) {
    if (const auto* r = std::get_if<DeviceTaintRule>(&o.value)) rules.push_back(r);
  }
  if (tainted_version_ != rules_version_) {
    tainted_.clear();
    tainted_version_ = rules_version_;
  }
  std::vector<SlicePtr> slices;
  std::vector<DeviceClass> classes;
  std::vector<ResourceClaim> claims;
  std::vector<std::string> errors;
  std::set<const ResourceSlice*> present;
  std::optional<std::set<std::string, std::less<>>> admin;  // known once a Namespace is held
  for (const auto& [id, o] : objects_) {
    if (const auto* n = std::get_if<NamespaceAccess>(&o.value)) {
      if (!admin) admin.emplace();
      if (n->admin_access) admin->insert(n->name);
    }
    if (const auto* s = std::get_if<SlicePtr>(&o.value)) {
      slices.push_back(Tainted(*s, rules));
      present.insert(s->get());
    }
    if (const auto* c = std::get_if<DeviceClass>(&o.value)) classes.push_back(*c);
    if (const auto* c = std::get_if<ResourceClaim>(&o.value)) claims.push_back(*c);
    if (!o.readable()) errors.push_back(o.error);
  }
  std::erase_if(tainted_, [&](const auto& entry) { return !present.contains(entry.first); });  // slices gone
  return std::make_shared<const ClusterState>(std::move(slices), std::move(classes), std::move(claims), std::move(errors), previous,
                                              std::move(admin));
}

ClusterStatePtr WithClaim(const ClusterState& state, ResourceClaim claim) {
  std::vector<ResourceClaim> one;
  one.push_back(std::move(claim));
  return WithClaims(state, std::move(one));
}

ClusterStatePtr WithClaims(const ClusterState& state, std::vector<ResourceClaim> added) {
  std::vector<SlicePtr> slices;
  for (const auto& s : state.slices().all()) slices.push_back(s->shared());
  std::vector<DeviceClass> classes;
  for (const auto& [name, c] : state.classes()) classes.push_back(c);
  std::set<std::pair<std::string, std::string>> replaced;
  for (const ResourceClaim& c : added) replaced.emplace(c.namespace_name, c.name);
  std::vector<ResourceClaim> claims;
  for (const auto& [key, c] : state.claims()) {
    if (!replaced.contains({c.namespace_name, c.name})) claims.push_back(c);
  }
  for (ResourceClaim& c : added) claims.push_back(std::move(c));
  return std::make_shared<const ClusterState>(std::move(slices), std::move(classes), std::move(claims), state.errors(), &state,
                                              state.admin_namespaces());
}

}  // namespace gpusched::dra
