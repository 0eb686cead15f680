#include "gpusched/extender/preemption.h"

#include <algorithm>
#include <optional>
#include <set>
#include <tuple>

#include "gpusched/placement/victims.h"

namespace gpusched::extender {
namespace {

// One victim answered, with what orders it.
struct Victim {
  std::optional<int32_t> priority;  // nullopt: not known, listed last
  std::string uid;
  size_t offered_at = 0;  // position in kube-scheduler's list (order among unknown priorities)
};

// Decreasing priority, then UID; unknown priorities last, in the order offered.
bool Before(const Victim& a, const Victim& b) {
  if (a.priority.has_value() != b.priority.has_value()) return a.priority.has_value();
  if (!a.priority) return a.offered_at < b.offered_at;
  return std::tie(*b.priority, a.uid) < std::tie(*a.priority, b.uid);
}

// Returns true if kube-scheduler has the allocation's pod in its cache: seen bound in the cluster,
// or bound by this gpusched (kube-scheduler assumed the pod before it called bind).
bool KnownToScheduler(const Allocation& a) {
  return a.origin == AllocationOrigin::kObserved || a.origin == AllocationOrigin::kCommitted;
}

const Allocation* HeldOn(const placement::NodeState& node, std::string_view uid) {
  for (const Allocation& a : node.allocations) {
    if (a.pod_uid == uid) return &a;
  }
  return nullptr;
}

MetaVictims Answer(const std::string& node, std::vector<Victim> victims, int64_t pdb_violations) {
  std::stable_sort(victims.begin(), victims.end(), Before);
  MetaVictims out{.node = node, .pdb_violations = pdb_violations};
  for (Victim& v : victims) out.uids.push_back(std::move(v.uid));
  return out;
}

// kube-scheduler's own victims, unchanged; nullopt for a placeholder.
std::optional<MetaVictims> Offered(const PreemptionCandidate& c) {
  if (c.victim_uids.empty()) return std::nullopt;
  return MetaVictims{.node = c.node, .uids = c.victim_uids, .pdb_violations = c.pdb_violations};
}

// The candidate judged by gpusched's GPU rules; nullopt drops the node.
std::optional<MetaVictims> OnNode(placement::Planner& planner, const PreemptionCandidate& c,
                                  const placement::PodRequest& request, int32_t priority,
                                  const placement::NodeState& node) {
  placement::VictimChoice choice = placement::ChooseVictims(
      planner, request, node, placement::VictimRules{.priority = priority, .may_evict = KnownToScheduler});
  if (!choice.helps) return std::nullopt;
  if (choice.victims.empty()) return Offered(c);
  std::vector<Victim> victims;
  std::set<std::string_view> chosen;
  for (const AllocationPtr& a : choice.victims) {
    victims.push_back(Victim{.priority = a->priority, .uid = a->pod_uid});
    chosen.insert(a->pod_uid);
  }
  // kube-scheduler's victims holding no GPU here were chosen for its own checks: they stay.
  for (size_t i = 0; i < c.victim_uids.size(); ++i) {
    const std::string& uid = c.victim_uids[i];
    if (chosen.contains(uid) || HeldOn(node, uid) != nullptr) continue;
    std::optional<int32_t> p = i < c.victim_priorities.size() ? c.victim_priorities[i] : std::nullopt;
    victims.push_back(Victim{.priority = p, .uid = uid, .offered_at = i});
  }
  return Answer(c.node, std::move(victims), choice.pdb_violations);
}

}  // namespace

std::vector<MetaVictims> DecidePreemption(const PreemptionArgs& args, const placement::PodRequest& request,
                                          const inventory::InventorySnapshot& snapshot,
                                          const placement::PlacementOptions& options) {
  std::vector<MetaVictims> out;
  bool gpu_rules = request.kind != RequestKind::kNone && request.schedulable();
  if (request.kind != RequestKind::kNone && !request.schedulable()) return out;  // fits nowhere
  placement::Planner planner(options);
  for (const PreemptionCandidate& c : args.candidates) {
    std::optional<MetaVictims> kept;
    if (!gpu_rules) {
      kept = Offered(c);
    } else if (const placement::NodeState* node = snapshot.FindNode(c.node); node != nullptr) {
      kept = OnNode(planner, c, request, args.pod.priority, *node);
    }
    if (kept) out.push_back(std::move(*kept));
  }
  return out;
}

}  // namespace gpusched::extender
