// File: defrag_executor.h
//
// Applying a defrag plan (placement/defrag_planner.h) to a live cluster, beside the bind flow:
// the one place where defrag evicts and holds.
//
// Applying a plan checks everything it depends on before its first eviction. A plan with moves
// whose pending pod has constraints gpusched does not judge (DefragPlan::not_judged: pod affinity,
// anti-affinity, topology spread, volumes) is refused unless the caller accepts them
// (UnjudgedPolicy::kAccept): kube-scheduler may refuse the pod on the node made free, and the
// moved pods would have been evicted for nothing. Then every move has a controller and passes a
// dry-run eviction (the Eviction API with dryRun: [All], which checks the
// PodDisruptionBudgets), then the GPUs the plan gives the pending pod are held for it, then the
// target GPUs of every move are held for the next pod of the moved pod's controller (its
// replacement gets a new name and UID). If any of these fails, nothing is evicted, every hold
// made is dropped, and the outcome lists the pod that stopped it with the error and every move
// as not evicted. Then the pods are evicted in order. An eviction refused now (a budget used up
// meanwhile) stops the plan: the moves made stay made, the pending pod keeps its hold, the holds
// of the moves not made are dropped (but that of an eviction whose outcome is unknown: its pod
// may be gone), and the outcome lists each move as evicted or not. Holds end when their pod binds
// there, or after the hold time. With a publisher each hold is also written to its node (the
// annotation gpusched.io/holds, against the resourceVersion it was checked on), so that every
// replica keeps the GPUs; a node changed meanwhile is checked again.
//
// Thread-safety: Apply may run on several threads at once; the inventory and the evictor
// serialize what they share.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/extender/hold_publisher.h"
#include "gpusched/extender/pod_evictor.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/defrag_planner.h"

namespace gpusched::extender {

// What applying a plan uses. Each pointer must outlive the executor.
struct DefragApplier {
  inventory::Inventory* inventory = nullptr;
  PodEvictor* evictor = nullptr;
  HoldPublisher* publisher = nullptr;  // null: the holds live in this replica's memory only
  std::chrono::seconds hold_ttl{300};
};

// What applying a plan did: per move made or tried, and whether the pending pod's GPUs are held.
struct DefragApplied {
  struct Move {
    std::string pod;  // namespace/name
    bool evicted = false;
    std::string error;
  };
  std::vector<Move> moves;
  bool held = false;
};

// Whether a plan whose pending pod has unjudged constraints is applied (see above).
enum class UnjudgedPolicy { kRefuse, kAccept };

// A pending pod's room in a plan: the GPUs held for it (its UID the holder) before any eviction.
// A hold it had elsewhere (a gang's slot) gives way to it, and is held again if the plan stops
// before its first eviction.
struct PendingRoom {
  Allocation about;  // the pod: UID, namespace, name
  std::string node;
  Placement placement;
  std::optional<Allocation> replaced;  // the hold it had before (node_name, placement), if any
};

// What the pending pods ask that gpusched does not judge ("" for nothing), for the refusal.
struct Unjudged {
  std::string what;
  std::string pod;   // which pod asks it
  std::string node;  // where room is made for it
};

class DefragExecutor {
 public:
  explicit DefragExecutor(DefragApplier with) : with_(with) {}

  // Applies `plan` (see above). `pending`: the pod the plan makes room for (with its UID), or
  // none for a fragmentation target. A plan that does not fit does nothing.
  DefragApplied Apply(const placement::DefragPlan& plan, const std::optional<Pod>& pending,
                      UnjudgedPolicy unjudged = UnjudgedPolicy::kRefuse) const;

  // Applies `moves` (see above) for several pending pods at once (a pod group): the holds the
  // rooms replace given way, then every room held before the first move's hold; if one fails,
  // every hold made is dropped and the replaced ones are held again. The caller passes only a
  // plan that fits whole.
  DefragApplied ApplyRoom(const std::vector<placement::DefragMove>& moves, const std::vector<PendingRoom>& rooms,
                          const Unjudged& not_judged, UnjudgedPolicy unjudged) const;

 private:
  // The evictions of `moves`, in order, into *out (see above).
  void Evict(const std::vector<placement::DefragMove>& moves, DefragApplied* out) const;

  DefragApplier with_;
};

}  // namespace gpusched::extender
