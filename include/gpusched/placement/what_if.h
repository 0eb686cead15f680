// File: what_if.h
//
// The one what-if view of a node: a node's state plus edits (pods removed, allocations added, and
// the holds that do not bind the pod being judged set free), and the DRA devices held as the
// what-if has them (some claims deallocated, others allocated), judged exactly as the node itself.
// Filter, bind, the commit-time check, explain, defrag and the DRA what-ifs (victims, defrag,
// nomination holds) see a node through it, and the victim search asks HoldBinds, so that a pod's
// own hold, its controller's hold and the holds of pods of lower priority mean the same to every
// verb (kube-scheduler's SelectVictimsOnNode is the anchor: edit a copy, run the filters again).
//
// Who a hold binds (nomination.h): a hold binds every pod but its holder, the replacement of the
// pod a defrag move evicted (a hold kept for its controller), and pods of higher priority, which
// kube-scheduler judges without nominated pods of lower priority.
//
// Pure: a view reads its base state, which must outlive it, and builds its own copy on demand.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/dra/allocated_devices.h"
#include "gpusched/model/allocation.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/node_state.h"

namespace gpusched::placement {

// The holder key (Allocation::pod_uid) of a hold kept for the next pod of controller
// `controller_uid`: the replacement of a pod a defrag move evicted (defrag.h), whatever its name
// and UID. Such holds have the highest priority: they bind every other pod.
inline constexpr std::string_view kControllerHoldPrefix = "controller/";
std::string ControllerHoldKey(std::string_view controller_uid);

// The pod a view is for: what decides which holds bind it. The strings are the caller's.
struct Viewer {
  std::string_view uid;
  int32_t priority = 0;
  std::string_view controller_uid;  // "" for none

  static Viewer Of(const Pod& pod) { return {pod.uid, pod.priority, pod.controller_uid}; }
};

// True if `hold` is kept for `viewer`: its own, or one kept for its controller.
bool HeldFor(const Allocation& hold, const Viewer& viewer);
// True if `hold` binds `viewer`: it is not held for it (HeldFor), and it is of equal or higher
// priority.
bool HoldBinds(const Allocation& hold, const Viewer& viewer);

class WhatIf {
 public:
  // A view of `base` with no edits. REQUIRES: `base` was built by BuildNodeState* and outlives
  // the view.
  explicit WhatIf(const NodeState& base) : base_(&base) {}

  // Holds that do not bind `viewer` are free in the view. The viewer's strings must outlive it.
  WhatIf& SeenBy(const Viewer& viewer);
  // The holds kept for `pod` (HeldFor) are gone from the view: an allocation of the pod added
  // With takes their room, as a bind does. The pod's strings must outlive the view.
  WhatIf& Consumed(const Viewer& pod);
  // The holds whose holder (Allocation::pod_uid) is in `holders` are gone from the view: a gang
  // planned again sees its members' old slots free. REQUIRES: `holders` outlives the view.
  WhatIf& Releasing(const std::set<std::string, std::less<>>& holders);
  // Pod `uid`'s allocation is gone from the view (a pod the node does not hold: no change).
  WhatIf& Without(std::string_view uid);
  // `added` is booked in the view too. REQUIRES: its node is the base's; its pod holds nothing
  // there in the view.
  WhatIf& With(Allocation added);
  // The DRA devices held in the view are `held` instead of the cluster's: right at least for the
  // devices the node can use (its pools and pools pinned to no node, cluster-wide). REQUIRES:
  // `held` outlives the view.
  WhatIf& HoldingDevices(const dra::AllocatedDevices& held) {
    devices_ = &held;
    return *this;
  }

  // True if the node's own state differs from its base (devices held aside).
  bool changed() const { return frees_holds_ || consumes_holds_ || releases_holds_ || !removed_.empty() || !added_.empty(); }
  // The devices held in the view, or null: the cluster's.
  const dra::AllocatedDevices* devices_held() const { return devices_; }
  // The node as the view sees it: the base itself when nothing changed; otherwise a state built
  // once from the base's node object, its allocations less those removed plus those added, the
  // holds that stay, its pods' other uses and the pods nominated to it (generation 0: no cache
  // keeps what is true for one view alone). An edit after state() invalidates the references
  // it returned.
  const NodeState& state() const;
  // The same, moved out (a copy of the base when nothing changed).
  NodeState Take() &&;

 private:
  NodeState Build() const;

  const NodeState* base_;
  std::optional<Viewer> viewer_;
  std::optional<Viewer> consumer_;
  bool frees_holds_ = false;     // SeenBy sets some hold free
  bool consumes_holds_ = false;  // Consumed takes some hold away
  bool releases_holds_ = false;  // Releasing takes some hold away
  const std::set<std::string, std::less<>>* released_ = nullptr;
  std::vector<std::string> removed_;
  std::vector<AllocationPtr> added_;
  const dra::AllocatedDevices* devices_ = nullptr;
  mutable std::optional<NodeState> built_;  // state(), built on first use
};

}  // namespace gpusched::placement
