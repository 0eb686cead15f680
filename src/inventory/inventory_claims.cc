// File: inventory_claims.cc
//
// Inventory, continued: DRA owner mode's claim writes in snapshot mode (there is no API server:
// the allocations and special claims bind makes are applied to the in-memory ResourceClaims).
#include <fmt/format.h>

#include "gpusched/dra/object_set.h"
#include "gpusched/inventory/inventory.h"

namespace gpusched::inventory {

Status Inventory::ReplaceDraClaim(dra::ResourceClaim claim, std::string_view expected_version) {
  dra::ClusterStatePtr base;
  {
    MutexLock lock(&mu_);
    base = dra_state_;
  }
  const dra::ResourceClaim* held = base->FindClaim(claim.namespace_name, claim.name);
  if (held == nullptr || held->resource_version != expected_version) {
    return AbortedError(fmt::format("claim {}/{} changed since it was read", claim.namespace_name, claim.name));
  }
  dra::ClusterStatePtr next = dra::WithClaim(*base, std::move(claim));  // outside the lock
  MutexLock lock(&mu_);
  return SwapDraStateLocked(base, std::move(next), {});
}

Status Inventory::CreateDraClaim(dra::ResourceClaim claim, Pod pod) {
  dra::ClusterStatePtr base;
  {
    MutexLock lock(&mu_);
    base = dra_state_;
  }
  if (base->FindClaim(claim.namespace_name, claim.name) != nullptr) {
    return AbortedError(fmt::format("claim {}/{} already exists", claim.namespace_name, claim.name));
  }
  dra::ClusterStatePtr next = dra::WithClaim(*base, std::move(claim));  // outside the lock
  MutexLock lock(&mu_);
  return SwapDraStateLocked(base, std::move(next), {std::move(pod)});
}

Status Inventory::SwapDraStateLocked(const dra::ClusterStatePtr& base, dra::ClusterStatePtr next, std::vector<Pod> pods) {
  // Another write got in first: the caller plans again on the fresh state, as after a 409.
  if (dra_state_ != base) return AbortedError("the DRA objects changed while the claim was written");
  ApplyLocked(ClusterDelta{.upsert_pods = std::move(pods), .dra_state = std::move(next)});
  return OkStatus();
}

}  // namespace gpusched::inventory
