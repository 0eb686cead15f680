// Inventory: GPUs held for the replacements of pods that defrag moves evict, and for the pods
// their moves make room for (HoldFor).
#include <climits>

#include <fmt/format.h>

#include "gpusched/inventory/inventory.h"
#include "gpusched/placement/fit_check.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/nomination.h"

namespace gpusched::inventory {

Status Inventory::HoldFor(const std::string& holder, const Allocation& about, const std::string& node,
                          const Placement& placement, std::chrono::seconds ttl, const std::set<std::string, std::less<>>& leaving) {
  MutexLock lock(&mu_);
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return NotFoundError(fmt::format("node {} is not in the inventory", node));
  const placement::NodeState& now = *it->second.state;
  std::vector<Allocation> staying;
  for (const Allocation& a : now.allocations) {
    if (!a.terminating && !leaving.contains(a.pod_uid)) staying.push_back(a);
  }
  placement::NodeState after = placement::BuildNodeState(it->second.spec, std::move(staying));
  auto replaced = defrag_holds_.find(about.pod_uid);  // a hold about the same pod gives way
  for (const Allocation& h : now.holds) {
    if (replaced == defrag_holds_.end() || !(h == replaced->second.hold)) placement::AddHold(h, &after);
  }
  Status fits = placement::CheckFits(after, placement);
  if (!fits.ok()) {
    return FailedPreconditionError(fmt::format("hold on {} for {}/{}: {}", node, about.pod_namespace, about.pod_name, fits.message()));
  }
  Allocation hold{.pod_uid = holder,
                  .pod_namespace = about.pod_namespace,
                  .pod_name = about.pod_name,
                  .node_name = node,
                  .mode = ModeServing(placement.kind),
                  .placement = placement,
                  .origin = AllocationOrigin::kHeld,
                  .priority = INT32_MAX};
  std::set<std::string> touched{node};
  if (replaced != defrag_holds_.end()) touched.insert(replaced->second.hold.node_name);
  defrag_holds_.insert_or_assign(about.pod_uid, DefragHold{std::move(hold), options_.clock->Now() + ttl});
  RebuildLocked(touched);
  PublishLocked(false);
  return OkStatus();
}

void Inventory::DropHold(std::string_view about_uid) {
  MutexLock lock(&mu_);
  auto it = defrag_holds_.find(about_uid);
  if (it == defrag_holds_.end()) return;
  std::string node = it->second.hold.node_name;
  defrag_holds_.erase(it);
  RebuildLocked({node});
  PublishLocked(false);
}

void Inventory::AddDefragHoldsLocked(const std::string& node, placement::NodeState* state) const {
  for (const auto& [uid, h] : defrag_holds_) {
    if (h.hold.node_name == node) placement::AddHold(h.hold, state);
  }
}

void Inventory::ExpireDefragHoldsLocked(std::chrono::steady_clock::time_point now, std::set<std::string>* touched) {
  std::erase_if(defrag_holds_, [&](const auto& kv) {
    if (now < kv.second.until) return false;
    touched->insert(kv.second.hold.node_name);
    return true;
  });
}

void Inventory::UseHoldLocked(const Pod& pod, const std::string& node, std::set<std::string>* touched) {
  std::string key = pod.controller_uid.empty() ? "" : placement::ControllerHoldKey(pod.controller_uid);
  for (auto it = defrag_holds_.begin(); it != defrag_holds_.end(); ++it) {
    const Allocation& h = it->second.hold;
    if (h.node_name == node && (h.pod_uid == pod.uid || (!key.empty() && h.pod_uid == key))) {
      defrag_holds_.erase(it);
      touched->insert(node);
      return;
    }
  }
}

}  // namespace gpusched::inventory
