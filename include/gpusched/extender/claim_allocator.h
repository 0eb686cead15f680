// File: claim_allocator.h
//
// DRA owner mode's half of bind (dra.md §5.3 C): allocates a pod's claims for the chosen node,
// gpusched's ranked choice, and writes them through a ClaimWriter as kube-scheduler's PreBind
// would. Allocations written but not yet seen in the cluster, and those being written, count as
// held for every later plan, so that two binds can never pick one device: they are reservations
// in the inventory's book (inventory/claim_reservations.h), as are the claims it owns; the
// allocator keeps no state of its own. No lock is held while claims are written: a plan reserves
// its devices, and a plan that lost a race to another one's reservation, or to a claim the
// cluster allocated since the snapshot it read, is made again. A claim this allocator deallocated
// (a bind that failed, a sweep) is never taken for allocated while the cluster's state still
// shows it allocated: that state is older than the release, and a retried bind would otherwise
// bind its pod without devices; the plan waits for the watch, as for a conflict.
//
// Thread-safe.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpusched/common/clock.h"
#include "gpusched/common/status.h"
#include "gpusched/dra/allocator.h"
#include "gpusched/dra/cel.h"
#include "gpusched/extender/claim_writer.h"
#include "gpusched/extender/dra_decision_log.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/model/pod.h"

namespace gpusched::extender {

class ClaimAllocator {
 public:
  // REQUIRES: every pointer outlives the allocator.
  ClaimAllocator(inventory::Inventory* inventory, ClaimWriter* writer, const ServiceOptions* options,
                 dra::cel::ProgramCache* programs, DraDecisionLog* log, const Clock* clock = &RealClock())
      : inventory_(inventory), writer_(writer), options_(options), programs_(programs), log_(log), clock_(clock) {}

  struct Allocated {
    std::string special;                  // the special claim created, or ""
    std::vector<dra::ResourceClaim> claims;  // the claims this call allocated, as written (their new
                                             // resourceVersion)
    std::vector<dra::ResourceClaim> reserved;  // claims allocated before that it reserved, as written
  };
  // Allocates `pod`'s unallocated claims on `node` and reserves every claim of it for the pod.
  // Where DRA serves the pod's extended resources on `node` and the pod names no special claim
  // yet, it also creates, allocates and reserves that claim.
  // Errors: FailedPrecondition when they do not fit there (the reason); Aborted when the claims
  // kept changing under it; the writer's error otherwise.
  StatusOr<Allocated> Allocate(const Pod& pod, const std::string& node);

  // Binding conditions (dra/binding_conditions.h) of `pod`'s claims after Allocate: OK when every
  // one holds. Unavailable while one is awaited: the claims stay allocated and reserved, and
  // kube-scheduler's retry of the pod binds once the driver reports it (a verb never waits for
  // it). FailedPrecondition when a failure condition holds or the wait passed
  // ServiceOptions::dra_binding_timeout: the claims with binding conditions are unreserved and
  // deallocated first, so that the retry allocates afresh.
  Status AwaitBinding(const Pod& pod, const Allocated& allocated);

  // Undoes Allocate after the bind that followed it failed, as kube-scheduler's Unreserve does:
  // the pod leaves the reservedFor of each claim of it, and the claims the bind allocated
  // (reserved for no one else) are deallocated; a special claim stays, since the pod's status
  // names it, but deallocated. Returns the first error: what it could not undo, Sweep does later.
  Status Release(const Pod& pod, const Allocated& allocated);

  // Owner mode's cleanup of what kube-scheduler's PostFilter and Unreserve would undo (an
  // extender has neither hook): a claim this process allocated, reserved only for pods that are not bound
  // (pending, or unknown to the inventory) for longer than `ttl`, measured from when a sweep first
  // saw it so, or pinned to a node that can no longer take a GPU pod (gone, not ready, another
  // mode), is unreserved and deallocated. Returns how many claims it released. Call it while
  // the inventory is in sync with the cluster.
  size_t Sweep(std::chrono::seconds ttl);

 private:
  // Why `planner`'s view of the pod's claims is older than this allocator's own writes: a claim
  // it shows allocated that this allocator deallocated and the cluster's state has not shown
  // deallocated yet (binding on it would bind the pod without devices), or "".
  std::string StaleAllocation(const placement::DraPlanner& planner) const;
  // `pod`'s claims as they are now: the inventory's copy, or the one this process wrote (in
  // `allocated`) where the inventory does not show that write yet.
  std::vector<dra::ResourceClaim> CurrentClaims(const Pod& pod, const Allocated& allocated) const;
  // The special claim `pod` needs on `node` (its uid: its in-flight key while it is created), or
  // nullopt.
  std::optional<dra::SpecialClaim> SpecialClaimFor(const Pod& pod, const placement::NodeState& node,
                                                   const dra::ClusterState& state) const;
  // Unreserves `pods` from `claim` and deallocates it; it is no longer held in flight or owned.
  Status Deallocate(const dra::ResourceClaim& claim, const std::vector<std::string>& pods);
  // Creates the reserved `special` with `result`; keeps it in flight under its new UID. Returns it.
  StatusOr<dra::ResourceClaim> CreateSpecial(const Pod& pod, const dra::SpecialClaim& special, const dra::AllocationResult& result);
  // Returns the devices in flight for a plan on `state` (ClaimReservations::InFlight).
  dra::AllocatedDevices HeldInFlight(const dra::ClusterState& state);
  // Reserves `results` for `claims` unless a device of theirs was reserved or allocated meanwhile;
  // returns false then (plan again).
  bool Reserve(const std::vector<const dra::ResourceClaim*>& claims, const std::vector<dra::AllocationResult>& results);
  void Unreserve(const std::vector<const dra::ResourceClaim*>& claims);
  // Writes the planned allocations and the pod's reservations; what it wrote goes to `done`.
  // Returns the first error.
  Status Write(const Pod& pod, const std::vector<const dra::ResourceClaim*>& to_allocate,
               const std::vector<dra::AllocationResult>& results, const std::vector<const dra::ResourceClaim*>& allocated,
               Allocated* done);

  inventory::Inventory* const inventory_;
  ClaimWriter* const writer_;
  const ServiceOptions* const options_;
  dra::cel::ProgramCache* const programs_;
  DraDecisionLog* const log_;
  const Clock* const clock_;
};

}  // namespace gpusched::extender
