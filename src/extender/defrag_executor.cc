// File: defrag_executor.cc
//
// Applying a defrag plan, beside the bind flow: the pending pod's unjudged constraints refused
// unless accepted, every move checked (a controller, a dry-run eviction) and every hold made and
// published before the first eviction; then the evictions in order, stopping at the first
// refusal with the holds of the moves not made dropped.
#include "gpusched/extender/defrag_executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "gpusched/common/log.h"
#include "gpusched/extender/hold_writer.h"
#include "gpusched/placement/nomination.h"

namespace gpusched::extender {
namespace {

using placement::DefragMove;
using placement::DefragPlan;

// The pod a move is about, as the hold and the eviction name it.
Allocation About(const DefragMove& m) {
  size_t slash = m.pod.find('/');
  return Allocation{.pod_uid = m.uid, .pod_namespace = m.pod.substr(0, slash), .pod_name = m.pod.substr(slash + 1)};
}

// Checks what move `m` depends on before anything is held or evicted: a controller to recreate
// the pod, and an eviction the API server would accept now (a dry run: the UID, the
// PodDisruptionBudgets).
Status CheckMove(const DefragMove& m, const DefragApplier& with) {
  if (m.controller_uid.empty()) return FailedPreconditionError(fmt::format("pod {} has no controller: nothing would recreate it", m.pod));
  Allocation about = About(m);
  Status s = with.evictor->Evict(about.pod_namespace, about.pod_name, m.uid, /*dry_run=*/true);
  return s.ok() ? s : Status(s.code(), fmt::format("{} (dry run: nothing was evicted)", s.message()));
}

// What a plan stopped before its first eviction did: nothing. Lists `stopped` (a pending pod, or
// a move) with `why`, and every move as not evicted.
DefragApplied Stopped(const std::vector<DefragMove>& moves, const std::string& stopped, const Status& why) {
  DefragApplied out;
  if (std::none_of(moves.begin(), moves.end(), [&](const DefragMove& m) { return m.pod == stopped; })) {
    out.moves.push_back(DefragApplied::Move{.pod = stopped, .error = why.message()});
  }
  for (const DefragMove& m : moves) {
    out.moves.push_back(DefragApplied::Move{.pod = m.pod, .error = m.pod == stopped ? why.message() : "not evicted: the plan stopped"});
  }
  return out;
}

std::string NameOf(const Allocation& about) { return about.pod_namespace + "/" + about.pod_name; }

}  // namespace

DefragApplied DefragExecutor::Apply(const DefragPlan& plan, const std::optional<Pod>& pending, UnjudgedPolicy unjudged) const {
  if (!plan.fits) return DefragApplied{};
  std::vector<PendingRoom> rooms;
  if (pending && !pending->uid.empty()) {
    rooms.push_back(PendingRoom{.about = Allocation{.pod_uid = pending->uid, .pod_namespace = pending->namespace_name,
                                                    .pod_name = pending->name},
                                .node = plan.node, .placement = plan.placement});
  }
  std::string name = pending ? pending->namespace_name + "/" + pending->name : "the pending pod";
  return ApplyRoom(plan.moves, rooms, Unjudged{.what = plan.not_judged, .pod = name, .node = plan.node}, unjudged);
}

DefragApplied DefragExecutor::ApplyRoom(const std::vector<DefragMove>& moves, const std::vector<PendingRoom>& rooms,
                                        const Unjudged& not_judged, UnjudgedPolicy unjudged) const {
  const DefragApplier& with = with_;
  const HoldWriter holds{.inventory = with.inventory, .publisher = with.publisher, .ttl = with.hold_ttl};
  if (!not_judged.what.empty() && !moves.empty() && unjudged == UnjudgedPolicy::kRefuse) {
    return Stopped(moves, not_judged.pod, FailedPreconditionError(fmt::format(
        "gpusched cannot judge its {}: kube-scheduler may refuse it on {} after the moves, which would then be for nothing; "
        "nothing was evicted (acceptUnjudged=true applies the plan anyway)", not_judged.what, not_judged.node)));
  }
  std::set<std::string, std::less<>> leaving;
  for (const DefragMove& m : moves) leaving.insert(m.uid);
  for (const DefragMove& m : moves) {
    if (Status s = CheckMove(m, with); !s.ok()) return Stopped(moves, m.pod, s);
  }
  DefragApplied out;
  // The slots the rooms replace give way first (a member's room may lie on a sibling's old slot);
  // a plan that stops before its first eviction drops every hold it made, then holds them again.
  for (const PendingRoom& r : rooms) {
    if (r.replaced) holds.Unhold(r.replaced->node_name, r.about.pod_uid);
  }
  auto undo = [&](size_t held_moves, size_t held_rooms) {
    for (size_t k = 0; k < held_moves; ++k) holds.Unhold(moves[k].to, moves[k].uid);
    for (size_t k = 0; k < held_rooms; ++k) holds.Unhold(rooms[k].node, rooms[k].about.pod_uid);
    for (const PendingRoom& r : rooms) {
      if (!r.replaced) continue;
      if (Status s = holds.Hold(r.about.pod_uid, r.about, r.replaced->node_name, r.replaced->placement); !s.ok()) {
        log::Warning("the slot of {} on {} could not be held again: {}", NameOf(r.about), r.replaced->node_name, s.message());
      }
    }
  };
  for (size_t i = 0; i < rooms.size(); ++i) {
    const PendingRoom& r = rooms[i];
    Status held = holds.Hold(r.about.pod_uid, r.about, r.node, r.placement, leaving);
    if (held.ok()) continue;
    undo(0, i + 1);  // room i too: a failed write may leave nothing, or its hold
    return Stopped(moves, NameOf(r.about), held);
  }
  out.held = !rooms.empty();
  for (size_t i = 0; i < moves.size(); ++i) {
    const DefragMove& m = moves[i];
    Status s = holds.Hold(placement::ControllerHoldKey(m.controller_uid), About(m), m.to, m.placement, leaving);
    if (s.ok()) continue;
    undo(i, rooms.size());
    return Stopped(moves, m.pod, s);
  }
  Evict(moves, &out);
  return out;
}

void DefragExecutor::Evict(const std::vector<DefragMove>& moves, DefragApplied* out) const {
  const HoldWriter holds{.inventory = with_.inventory, .publisher = with_.publisher, .ttl = with_.hold_ttl};
  // Evictions in order. One refused now (a budget used up meanwhile) stops the plan: the moves
  // made stay made, the pending pods keep their holds, the holds of the moves not made end; one
  // whose outcome is unknown (Unavailable) keeps its hold too, since its pod may be gone.
  for (size_t i = 0; i < moves.size(); ++i) {
    const DefragMove& m = moves[i];
    Allocation about = About(m);
    Status s = with_.evictor->Evict(about.pod_namespace, about.pod_name, m.uid, /*dry_run=*/false);
    bool unknown = s.code() == StatusCode::kUnavailable;  // it may have been carried out
    out->moves.push_back(DefragApplied::Move{.pod = m.pod, .evicted = s.ok(),
                                             .error = s.ok() ? "" : unknown ? "outcome unknown: " + s.message() : s.message()});
    if (s.ok()) continue;
    for (size_t k = unknown ? i + 1 : i; k < moves.size(); ++k) holds.Unhold(moves[k].to, moves[k].uid);
    for (size_t k = i + 1; k < moves.size(); ++k) {
      out->moves.push_back(DefragApplied::Move{.pod = moves[k].pod, .error = "not evicted: the plan stopped"});
    }
    break;
  }
}

}  // namespace gpusched::extender
