// File: claim_allocator.cc
//
// Owner mode's claim allocation: allocations reserved in flight so two binds never take one device,
// claims (and a KEP 5004 special claim) written through the ClaimWriter with retries, binding
// conditions awaited, and stale allocations swept.
#include "gpusched/extender/claim_allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>

#include "gpusched/dra/binding_conditions.h"
#include "gpusched/dra/extended_resources.h"
#include "gpusched/placement/dra_planner.h"

namespace gpusched::extender {
namespace {

constexpr int kAttempts = 4;

std::vector<std::string> Uids(const std::vector<const dra::ResourceClaim*>& claims) {
  std::vector<std::string> out;
  for (const dra::ResourceClaim* c : claims) out.push_back(c->uid);
  return out;
}

}  // namespace

dra::AllocatedDevices ClaimAllocator::HeldInFlight(const dra::ClusterState& state) {
  auto now = clock_->Now();
  inventory::ClaimReservations::Shown shown = inventory::ClaimReservations::ShownBy(state);  // outside the lock
  return inventory_->WithClaimReservations(
      [&](inventory::ClaimReservations& claims, const dra::ClusterState&) { return claims.InFlight(shown, now); });
}

bool ClaimAllocator::Reserve(const std::vector<const dra::ResourceClaim*>& claims,
                             const std::vector<dra::AllocationResult>& results) {
  auto now = clock_->Now();
  return inventory_->WithClaimReservations([&](inventory::ClaimReservations& held, const dra::ClusterState& latest) {
    return held.Reserve(Uids(claims), results, latest.allocated(), now);
  });
}

void ClaimAllocator::Unreserve(const std::vector<const dra::ResourceClaim*>& claims) {
  inventory_->WithClaimReservations([&](inventory::ClaimReservations& held, const dra::ClusterState&) { held.Unreserve(Uids(claims)); });
}

std::string ClaimAllocator::StaleAllocation(const placement::DraPlanner& planner) const {
  std::string stale;
  auto now = clock_->Now();
  inventory_->WithClaimReservations([&](inventory::ClaimReservations& held, const dra::ClusterState&) {
    for (const dra::ResourceClaim* c : planner.to_allocate()) held.ReleasedNotShown(c->uid, /*shown_allocated=*/false, now);
    for (const dra::ResourceClaim* c : planner.allocated()) {
      if (stale.empty() && held.ReleasedNotShown(c->uid, /*shown_allocated=*/true, now)) {
        stale = fmt::format("claim {}/{} shows an allocation gpusched released; waiting for the watch to show the release",
                            c->namespace_name, c->name);
      }
    }
  });
  return stale;
}

Status ClaimAllocator::Write(const Pod& pod, const std::vector<const dra::ResourceClaim*>& to_allocate,
                             const std::vector<dra::AllocationResult>& results,
                             const std::vector<const dra::ResourceClaim*>& allocated, Allocated* done) {
  for (size_t i = 0; i < to_allocate.size(); ++i) {
    StatusOr<dra::ResourceClaim> w = writer_->Write(*to_allocate[i], &results[i], pod);
    if (!w.ok()) {
      // The claims not written are free again; those written stay held until the cluster shows them.
      Unreserve(std::vector<const dra::ResourceClaim*>(to_allocate.begin() + static_cast<std::ptrdiff_t>(i),
                                                       to_allocate.end()));
      return w.status();
    }
    done->claims.push_back(std::move(w).value());
  }
  for (const dra::ResourceClaim* claim : allocated) {
    bool reserved = std::any_of(claim->reserved_for.begin(), claim->reserved_for.end(),
                                [&](const dra::ConsumerRef& r) { return r.uid == pod.uid; });
    if (reserved) continue;
    StatusOr<dra::ResourceClaim> w = writer_->Write(*claim, nullptr, pod);
    GPUSCHED_RETURN_IF_ERROR(w.status());
    done->reserved.push_back(std::move(w).value());
  }
  return OkStatus();
}

std::optional<dra::SpecialClaim> ClaimAllocator::SpecialClaimFor(const Pod& pod, const placement::NodeState& node,
                                                                  const dra::ClusterState& state) const {
  if (!options_->dra_extended_resources || !pod.extended_resource_claim.empty()) return std::nullopt;
  if (!dra::ServedThroughDra(pod, node.node, state.classes())) return std::nullopt;
  std::vector<std::string> served = dra::ServedOn(node.node, dra::MappedResources(pod, state.classes()));
  std::optional<dra::SpecialClaim> special = dra::BuildSpecialClaim(pod, state.classes(), served);
  if (special) special->claim.uid = inventory::ClaimReservations::CreatingKey(pod.uid);  // its in-flight key until created
  return special;
}

StatusOr<dra::ResourceClaim> ClaimAllocator::CreateSpecial(const Pod& pod, const dra::SpecialClaim& special,
                                                           const dra::AllocationResult& result) {
  StatusOr<dra::ResourceClaim> created = writer_->CreateSpecial(special, result, pod);
  auto now = clock_->Now();
  inventory_->WithClaimReservations([&](inventory::ClaimReservations& held, const dra::ClusterState&) {
    if (!created.ok()) {
      held.Unreserve({special.claim.uid});
    } else {
      held.Created(special.claim.uid, created->uid, result, now);  // held until the cluster shows it allocated
    }
  });
  return created;
}

StatusOr<ClaimAllocator::Allocated> ClaimAllocator::Allocate(const Pod& pod, const std::string& node_name) {
  std::string last;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
    dra::AllocatedDevices held = HeldInFlight(snapshot->dra());
    placement::DraOptions options = options_->dra;
    options.also_allocated = &held;
    const placement::NodeState* node = snapshot->FindNode(node_name);
    if (node == nullptr) return NotFoundError(fmt::format("node {} is not in gpusched's inventory", node_name));
    std::optional<dra::SpecialClaim> special = SpecialClaimFor(pod, *node, snapshot->dra());
    placement::DraPlanner planner(snapshot->dra(), pod, programs_, options, special ? &special->claim : nullptr);
    if (!planner.problem().empty()) return FailedPreconditionError(planner.problem());
    if (std::string stale = StaleAllocation(planner); !stale.empty()) {  // the watch has not shown a release yet
      last = stale;
      std::this_thread::sleep_for(std::chrono::milliseconds(50) * (attempt + 1));
      continue;
    }
    placement::DraVerdict v = planner.Evaluate(*node, /*rank=*/true);
    if (!v.fits()) return FailedPreconditionError(v.node.reason);
    if (options_->dra_upstream_devices) v.ranked = v.compat;  // the replay's baseline: upstream's choice
    // As kube-scheduler stamps allocations (1.36: its binding-condition gates on by default); a
    // binding condition's wait counts from here, and an API server without the field drops it.
    for (dra::AllocationResult& r : v.ranked) r.allocation_timestamp_ms = clock_->WallMs();
    if (!Reserve(planner.to_allocate(), v.ranked)) {
      last = "another bind reserved, or the cluster allocated, one of the devices meanwhile";
      continue;  // plan again with its reservation counted
    }
    // The special claim comes last (DraPlanner) and is created after the pod's own claims.
    std::vector<const dra::ResourceClaim*> own = planner.to_allocate();
    std::vector<dra::AllocationResult> results = v.ranked;
    if (special) {
      own.pop_back();
      results.pop_back();
    }
    Allocated done;
    Status s = Write(pod, own, results, planner.allocated(), &done);
    if (special) {
      if (s.ok()) {
        StatusOr<dra::ResourceClaim> created = CreateSpecial(pod, *special, v.ranked.back());
        s = created.status();
        if (created.ok()) {
          done.special = created->name;
          done.claims.push_back(std::move(created).value());
        }
      } else {
        Unreserve({&special->claim});
      }
    }
    if (s.ok()) {
      if (log_ != nullptr) log_->Record(fmt::format("{}/{}", pod.namespace_name, pod.name), node_name, std::make_shared<const placement::DraVerdict>(std::move(v)));
      inventory_->WithClaimReservations([&](inventory::ClaimReservations& held, const dra::ClusterState&) {
        for (const dra::ResourceClaim& c : done.claims) held.Own(c.uid);
      });
      return done;
    }
    if (s.code() != StatusCode::kAborted) {
      (void)Release(pod, done);  // what this attempt wrote; a sweep retries what fails here
      return s;
    }
    last = std::string(s.message());
    // Someone changed a claim: give the watch a moment to bring the change, then plan again.
    std::this_thread::sleep_for(std::chrono::milliseconds(50) * (attempt + 1));
  }
  return AbortedError(fmt::format("claims kept changing: {}", last));
}

namespace {

bool ReservedFor(const dra::ResourceClaim& claim, std::string_view uid) {
  return std::any_of(claim.reserved_for.begin(), claim.reserved_for.end(), [&](const dra::ConsumerRef& r) { return r.uid == uid; });
}

// True if `claim` is reserved for a consumer other than pod `uid`.
bool SharedWithOthers(const dra::ResourceClaim& claim, std::string_view uid) {
  return std::any_of(claim.reserved_for.begin(), claim.reserved_for.end(), [&](const dra::ConsumerRef& r) { return r.uid != uid; });
}

bool Holds(const ClaimAllocator::Allocated& allocated, std::string_view uid) {
  return std::any_of(allocated.claims.begin(), allocated.claims.end(), [&](const dra::ResourceClaim& c) { return c.uid == uid; });
}

}  // namespace

std::vector<dra::ResourceClaim> ClaimAllocator::CurrentClaims(const Pod& pod, const Allocated& allocated) const {
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  std::vector<dra::ResourceClaim> out;
  for (const dra::ResourceClaim* seen : snapshot->dra().Resolve(pod).claims) out.push_back(*seen);
  std::vector<dra::ResourceClaim> writes = allocated.claims;
  writes.insert(writes.end(), allocated.reserved.begin(), allocated.reserved.end());
  for (const dra::ResourceClaim& written : writes) {
    auto it = std::find_if(out.begin(), out.end(), [&](const dra::ResourceClaim& c) { return c.uid == written.uid; });
    if (it == out.end()) {
      out.push_back(written);  // not seen yet (a special claim just created)
    } else if (!ReservedFor(*it, pod.uid)) {
      *it = written;  // the watch has not brought our write yet
    }
  }
  return out;
}

Status ClaimAllocator::AwaitBinding(const Pod& pod, const Allocated& allocated) {
  for (const dra::ResourceClaim& claim : CurrentClaims(pod, allocated)) {
    dra::BindingCheck check = dra::CheckBindingConditions(claim, clock_->WallMs(), options_->dra_binding_timeout);
    if (check.ready()) continue;
    if (check.state == dra::BindingCheck::State::kWaiting) return UnavailableError(check.reason);
    // Failed or timed out: give the devices back, as kube-scheduler does before it retries; a
    // claim other pods share only loses this one.
    bool others = SharedWithOthers(claim, pod.uid);
    Status released = others ? writer_->Unreserve(claim, {pod.uid}, /*deallocate=*/false) : Deallocate(claim, {pod.uid});
    if (!released.ok()) return FailedPreconditionError(fmt::format("{}; giving it back failed: {}", check.reason, released.message()));
    return FailedPreconditionError(fmt::format("{}; {} for a new try", check.reason, others ? "the pod left it" : "the claim was deallocated"));
  }
  return OkStatus();
}

Status ClaimAllocator::Release(const Pod& pod, const Allocated& allocated) {
  std::set<std::string> done;
  std::map<std::string, std::string> conflicted;  // claim UID -> the resourceVersion that got a conflict
  Status last;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    bool again = false;
    for (const dra::ResourceClaim& claim : CurrentClaims(pod, allocated)) {
      if (done.contains(claim.uid) || !ReservedFor(claim, pod.uid)) continue;
      if (auto c = conflicted.find(claim.uid); c != conflicted.end() && c->second == claim.resource_version) {
        again = true;  // wait for a fresher copy
        continue;
      }
      Status s = Holds(allocated, claim.uid) && !SharedWithOthers(claim, pod.uid) ? Deallocate(claim, {pod.uid}) : writer_->Unreserve(claim, {pod.uid}, false);
      if (s.code() == StatusCode::kAborted) {
        conflicted[claim.uid] = claim.resource_version;
        again = true;
      } else {
        done.insert(claim.uid);
      }
      if (!s.ok()) last = s;
    }
    if (!again) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50) * (attempt + 1));  // let the watch bring the change
  }
  return last;
}

Status ClaimAllocator::Deallocate(const dra::ResourceClaim& claim, const std::vector<std::string>& pods) {
  GPUSCHED_RETURN_IF_ERROR(writer_->Unreserve(claim, pods, /*deallocate=*/true));
  inventory_->WithClaimReservations([&](inventory::ClaimReservations& held, const dra::ClusterState&) {
    held.Forget(claim.uid);
    held.Released(claim.uid, clock_->Now());
  });
  return OkStatus();
}

namespace {

// The node an allocation is pinned to (matchFields metadata.name In [node]), or "".
std::string PinnedNode(const dra::AllocationResult& a) {
  if (!a.node_selector || a.node_selector->terms.size() != 1) return "";
  const dra::NodeSelectorTerm& t = a.node_selector->terms[0];
  if (!t.match_expressions.empty() || t.match_fields.size() != 1) return "";
  const dra::NodeSelectorRequirement& r = t.match_fields[0];
  return r.key == "metadata.name" && r.op == "In" && r.values.size() == 1 ? r.values[0] : "";
}

// True if the node `a` is pinned to can no longer take a GPU pod: gone, not ready, or no longer
// (only) nvidia-dra.
bool NodeGone(const inventory::InventorySnapshot& snapshot, const dra::AllocationResult& a) {
  std::string name = PinnedNode(a);
  if (name.empty()) return false;
  const placement::NodeState* node = snapshot.FindNode(name);
  return node == nullptr || !node->ready() || !HasPayload(node->mode, Payload::kDevices);
}

}  // namespace

size_t ClaimAllocator::Sweep(std::chrono::seconds ttl) {
  std::shared_ptr<const inventory::InventorySnapshot> snapshot = inventory_->Snapshot();
  auto now = clock_->Now();
  std::set<std::string> owned = inventory_->WithClaimReservations(
      [](inventory::ClaimReservations& held, const dra::ClusterState&) { return held.owned(); });
  std::vector<const dra::ResourceClaim*> unbound;
  std::set<std::string> settled;  // owned claims gone, or whose pods the cluster shows bound
  for (const auto& [key, claim] : snapshot->dra().claims()) {
    if (!owned.contains(claim.uid)) continue;
    owned.erase(claim.uid);
    if (!claim.allocation) {
      settled.insert(claim.uid);
      continue;
    }
    // Only pods' reservations are judged; a reservation of another kind keeps the claim.
    bool pods_only = std::all_of(claim.reserved_for.begin(), claim.reserved_for.end(),
                                 [](const dra::ConsumerRef& r) { return r.resource == "pods"; });
    bool unbound_only = pods_only && std::all_of(claim.reserved_for.begin(), claim.reserved_for.end(), [&](const dra::ConsumerRef& r) {
                          std::optional<Pod> pod = inventory_->FindPod(r.uid);
                          return !pod || !pod->bound();
                        });
    if (unbound_only && !claim.reserved_for.empty()) {
      unbound.push_back(&claim);
    } else if (pods_only && !claim.reserved_for.empty()) {
      settled.insert(claim.uid);  // its pod is bound: the cluster's from now on
    }
  }
  settled.insert(owned.begin(), owned.end());  // not in the state any more
  std::map<std::string, std::chrono::steady_clock::time_point> since =
      inventory_->WithClaimReservations([&](inventory::ClaimReservations& held, const dra::ClusterState&) {
        held.Settle(settled);
        return held.SeenUnbound(Uids(unbound), now);
      });
  std::vector<const dra::ResourceClaim*> stale;
  for (const dra::ResourceClaim* claim : unbound) {
    // A claim awaiting binding conditions gets at least their timeout (AwaitBinding ends it).
    auto limit = dra::HasBindingConditions(*claim->allocation) ? std::max(ttl, options_->dra_binding_timeout) : ttl;
    // Pinned to a node that can no longer take the pod: no point in waiting.
    if (now - since.at(claim->uid) >= limit || NodeGone(*snapshot, *claim->allocation)) stale.push_back(claim);
  }
  size_t released = 0;
  for (const dra::ResourceClaim* claim : stale) {
    std::vector<std::string> pods;
    for (const dra::ConsumerRef& r : claim->reserved_for) pods.push_back(r.uid);
    if (Deallocate(*claim, pods).ok()) ++released;
  }
  return released;
}

}  // namespace gpusched::extender
