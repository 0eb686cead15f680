#include "gpusched/dra/object_set.h"

#include <map>
#include <set>

namespace gpusched::dra {

std::string_view ObjectKindName(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kResourceSlice: return "ResourceSlice";
    case ObjectKind::kDeviceClass: return "DeviceClass";
    case ObjectKind::kResourceClaim: return "ResourceClaim";
  }
  return "ResourceSlice";
}

bool DraObjectSet::Apply(DraDelta delta) {
  bool changed = false;
  for (ObjectKind kind : delta.relisted) {
    std::set<std::string> listed;
    for (const DraObject& o : delta.upserts) {
      if (o.kind == kind) listed.insert(o.key);
    }
    changed = std::erase_if(objects_, [&](const auto& entry) { return entry.first.first == kind && !listed.contains(entry.first.second); }) > 0 ||
              changed;
  }
  for (auto& [kind, key] : delta.deletes) changed = objects_.erase({kind, key}) > 0 || changed;
  for (DraObject& o : delta.upserts) {
    auto [it, inserted] = objects_.try_emplace({o.kind, o.key});
    if (!inserted && !o.resource_version.empty() && it->second.resource_version == o.resource_version) continue;
    it->second = std::move(o);
    changed = true;
  }
  return changed;
}

ClusterStatePtr DraObjectSet::Build(const ClusterState* previous) const {
  std::vector<SlicePtr> slices;
  std::vector<DeviceClass> classes;
  std::vector<ResourceClaim> claims;
  std::vector<std::string> errors;
  for (const auto& [id, o] : objects_) {
    if (const auto* s = std::get_if<SlicePtr>(&o.value)) slices.push_back(*s);
    if (const auto* c = std::get_if<DeviceClass>(&o.value)) classes.push_back(*c);
    if (const auto* c = std::get_if<ResourceClaim>(&o.value)) claims.push_back(*c);
    if (!o.readable()) errors.push_back(o.error);
  }
  return std::make_shared<const ClusterState>(std::move(slices), std::move(classes), std::move(claims), std::move(errors), previous);
}

ClusterStatePtr WithClaim(const ClusterState& state, ResourceClaim claim) {
  std::vector<SlicePtr> slices;
  for (const auto& s : state.slices().all()) slices.push_back(s->shared());
  std::vector<DeviceClass> classes;
  for (const auto& [name, c] : state.classes()) classes.push_back(c);
  std::vector<ResourceClaim> claims;
  for (const auto& [key, c] : state.claims()) {
    if (c.namespace_name != claim.namespace_name || c.name != claim.name) claims.push_back(c);
  }
  claims.push_back(std::move(claim));
  return std::make_shared<const ClusterState>(std::move(slices), std::move(classes), std::move(claims), state.errors(), &state);
}

}  // namespace gpusched::dra
