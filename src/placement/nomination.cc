#include "gpusched/placement/nomination.h"

#include <algorithm>
#include <tuple>
#include <vector>

#include "gpusched/placement/pod_request.h"

namespace gpusched::placement {

void HoldNominated(Planner& planner, std::span<const Pod* const> nominated, NodeState* state) {
  std::vector<const Pod*> order(nominated.begin(), nominated.end());
  std::sort(order.begin(), order.end(),
            [](const Pod* a, const Pod* b) { return std::tie(b->priority, a->uid) < std::tie(a->priority, b->uid); });
  // The node once its terminating pods are gone, with the holds planned so far.
  NodeState after = EmptyUsage(*state);
  for (const Allocation& a : state->allocations) {
    if (!a.terminating) AddUse(a, &after);
  }
  for (const Pod* pod : order) {
    PodRequest request = AnalyzePod(*pod);
    if (request.kind == RequestKind::kNone || !request.schedulable()) continue;
    NodeVerdict v = planner.Evaluate(request, after, /*want_placement=*/true);
    if (!v.fits) continue;
    Allocation hold{.pod_uid = pod->uid,
                    .pod_namespace = pod->namespace_name,
                    .pod_name = pod->name,
                    .node_name = state->node.name,
                    .mode = ModeServing(request.kind),
                    .placement = std::move(v.placement),
                    .origin = AllocationOrigin::kHeld,
                    .priority = pod->priority};
    AddUse(hold, &after);
    AddHold(std::move(hold), state);
  }
}

const Allocation* FindHold(const NodeState& state, std::string_view uid) {
  for (const Allocation& h : state.holds) {
    if (h.pod_uid == uid) return &h;
  }
  return nullptr;
}

std::optional<NodeState> WithoutHold(const NodeState& state, std::string_view uid, int32_t priority) {
  auto counts = [&](const Allocation& h) { return HoldCounts(h, uid, priority); };
  if (std::all_of(state.holds.begin(), state.holds.end(), counts)) return std::nullopt;
  NodeState out = BuildNodeStateSharing(state.node, state.allocations.shared());
  for (const Allocation& h : state.holds) {
    if (counts(h)) AddHold(h, &out);
  }
  out.uses = state.uses;
  return out;
}

}  // namespace gpusched::placement
