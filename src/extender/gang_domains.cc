// File: gang_domains.cc
//
// gang_domains.h: level by level, each domain planned on its own nodes (PlanLeavingOutLargest
// with the domain as the nodes offered), the fullest domain that holds the most members taken.
#include "gpusched/extender/gang_domains.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <chrono>
#include <optional>
#include <string_view>
#include <tuple>

#include "gpusched/extender/domain_steering.h"
#include "gpusched/extender/gang_holds.h"
#include "gpusched/extender/group_defrag.h"
#include "gpusched/extender/pod_evaluation.h"
#include "gpusched/common/time_format.h"
#include "gpusched/model/names.h"
#include "gpusched/placement/node_fit.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::extender {
namespace {

constexpr std::string_view kDrainWaitSetting =
    "topology.drainWaitSeconds: the domain kept for waiting gangs runs no pod of another scheduler";

struct Candidate {
  GangPlacement placement;
  int whole_nodes = 0;     // the domain's whole nodes before the gang (IsWholeNode)
  int64_t free_milli = 0;  // the domain's free GPU before the gang
  std::vector<std::string_view> nodes;  // the domain's node names (the snapshot's)
};

// Whether `a` is the fuller domain: fewer whole nodes, then less free GPU.
bool Fuller(const Candidate& a, const Candidate& b) { return std::tie(a.whole_nodes, a.free_milli) < std::tie(b.whole_nodes, b.free_milli); }

// Whether `a` is the better domain: more members planned, then the fuller, then the lower name.
bool Better(const Candidate& a, const Candidate& b) {
  return std::make_tuple(b.placement.planned.size(), a.whole_nodes, a.free_milli, a.placement.domain) <
         std::make_tuple(a.placement.planned.size(), b.whole_nodes, b.free_milli, b.placement.domain);
}

// What the `needed` smallest of `pending` ask, in milli-GPU: no domain with less free can hold them.
int64_t LeastDemand(const std::vector<Pod>& pending, size_t needed) {
  std::vector<int64_t> demands;
  for (const Pod& p : pending) demands.push_back(placement::GangDemand(placement::AnalyzePod(p)));
  std::sort(demands.begin(), demands.end());
  int64_t sum = 0;
  for (size_t i = 0; i < needed && i < demands.size(); ++i) sum += demands[i];
  return sum;
}

// The best domain of `key` for `pending`; nullopt when none holds it (up to three domains' reasons
// appended to *reasons), or a placement that is unplannable (not the planner's to judge).
std::optional<GangPlacement> BestDomain(const std::vector<Pod>& pending, size_t needed, const std::string& key,
                                        const std::optional<std::string>& only_value, const std::string& off_value,
                                        const inventory::InventorySnapshot& snapshot, const ServiceOptions& options,
                                        dra::cel::ProgramCache* programs, std::vector<std::string>* reasons) {
  std::vector<const placement::NodeState*> nodes;
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    if (!InKeptDomain(n.get(), off_value, options)) nodes.push_back(n.get());  // the domain kept for another gang: at every level
  }
  // The domains fullest first: the first that plans every member is the best one.
  std::vector<Candidate> domains;
  for (const auto& [value, members] : DomainsOf(nodes, key)) {
    if (only_value && value != *only_value) continue;
    Candidate c{.placement = {.planned = pending, .level = key, .domain = value}};
    for (const placement::NodeState* n : members) {
      c.free_milli += n->view.IdleMilli();
      c.whole_nodes += IsWholeNode(*n) ? 1 : 0;
      c.nodes.push_back(n->node.name);
    }
    domains.push_back(std::move(c));
  }
  std::stable_sort(domains.begin(), domains.end(), Fuller);
  int64_t least = LeastDemand(pending, needed);
  std::optional<Candidate> best;
  for (Candidate& c : domains) {
    if (c.free_milli < least) {  // too little free GPU for the members it must place
      if (reasons->size() < 3) {
        reasons->push_back(fmt::format("{}={}: {:g} GPUs free, the members need {:g}", key, c.placement.domain,
                                       static_cast<double>(c.free_milli) / 1000, static_cast<double>(least) / 1000));
      }
      continue;
    }
    c.placement.plan = PlanLeavingOutLargest(&c.placement.planned, needed, snapshot, options, programs, &c.nodes);
    if (c.placement.plan.unplannable) return std::move(c.placement);
    bool placed = c.placement.plan.fits || (c.placement.planned.empty() && needed == 0);
    if (placed && (!best || Better(c, *best))) {
      best = std::move(c);
      if (best->placement.planned.size() == pending.size()) break;  // every member: none is better
    } else if (!placed && reasons->size() < 3) {
      reasons->push_back(fmt::format("{}={}: {}", key, c.placement.domain, c.placement.plan.reason));
    }
  }
  if (!best) return std::nullopt;
  return std::move(best->placement);
}

// Whether some domain of `key`, with every GPU free, has GPU enough for what the `needed`
// smallest of `pending` ask, on the nodes the first of them may run on (node selection) outside
// the domain `off` of the first level (kept for another gang): whether waiting for one can ever
// help. False where their demand is unknown (0: GPUs through claims).
bool SomeDomainCouldHold(const std::vector<Pod>& pending, size_t needed, const std::string& key, const std::string& off,
                         const inventory::InventorySnapshot& snapshot, const ServiceOptions& options) {
  int64_t least = LeastDemand(pending, needed);
  if (least <= 0 || pending.empty()) return false;
  std::vector<const placement::NodeState*> nodes;
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    if (InKeptDomain(n.get(), off, options)) continue;  // kept for another gang: no wait for it helps
    if (TakesGpuPods(*n) && placement::NodeSelectionProblem(pending.front().constraints, n->node).empty()) nodes.push_back(n.get());
  }
  for (const auto& [value, members] : DomainsOf(nodes, key)) {
    int64_t capacity = 0;
    for (const placement::NodeState* n : members) capacity += int64_t{1000} * n->view.gpu_count;
    if (capacity >= least) return true;
  }
  return false;
}

// The one domain of `key` all of `beside` lie in: nullopt when `beside` is empty; "" (no domain
// fits) when they lie in several or one lacks the label.
std::optional<std::string> SharedDomain(const std::vector<std::string>& beside, const std::string& key,
                                        const inventory::InventorySnapshot& snapshot) {
  if (beside.empty()) return std::nullopt;
  std::optional<std::string> shared;
  for (const std::string& name : beside) {
    const placement::NodeState* n = snapshot.FindNode(name);
    auto label = n != nullptr ? n->node.labels.find(key) : Labels::const_iterator();
    if (n == nullptr || label == n->node.labels.end() || (shared && *shared != label->second)) return "";
    shared = label->second;
  }
  return shared;
}

}  // namespace

std::vector<std::string_view> NodesOutside(const std::string& off, const inventory::InventorySnapshot& snapshot,
                                           const ServiceOptions& options) {
  std::vector<std::string_view> out;
  for (const inventory::NodeStatePtr& n : snapshot.nodes()) {
    if (!InKeptDomain(n.get(), off, options)) out.push_back(n->node.name);
  }
  return out;
}

placement::GangPlan PlanPendingOffKept(const std::vector<Pod>& pods, const DomainReservation* kept,
                                       const inventory::InventorySnapshot& snapshot, const ServiceOptions& options,
                                       dra::cel::ProgramCache* programs) {
  std::string off = KeptOffFor(pods, kept, snapshot, options);
  if (off.empty()) return PlanPending(pods, snapshot, options, programs);
  std::vector<std::string_view> outside = NodesOutside(off, snapshot, options);
  return PlanPending(pods, snapshot, options, programs, &outside);
}

GangPlacement PlanGangInDomains(const std::vector<Pod>& pending, size_t needed, const std::string& required,
                                const std::vector<std::string>& beside, const DomainWait& wait,
                                const inventory::InventorySnapshot& snapshot, const ServiceOptions& options,
                                dra::cel::ProgramCache* programs, const DomainReservation* kept) {
  std::vector<std::string> levels = required.empty() ? options.topology_levels : std::vector<std::string>{required};
  std::string off = KeptOffFor(pending, kept, snapshot, options);  // the domain kept for another gang
  std::vector<std::string> reasons;
  for (const std::string& key : levels) {
    std::optional<std::string> shared = SharedDomain(beside, key, snapshot);
    if (shared && shared->empty()) continue;  // the slots already span domains of this level
    std::optional<GangPlacement> in =
        BestDomain(pending, needed, key, shared, off, snapshot, options, programs, &reasons);
    if (in) return std::move(*in);
    bool first_level = !options.topology_levels.empty() && key == options.topology_levels.front();
    if (required.empty() && beside.empty() && wait.ActiveAt(first_level) &&
        SomeDomainCouldHold(pending, needed, key, off, snapshot, options)) {
      GangPlacement waiting{.planned = pending, .level = key, .waiting = true, .waits_until_ms = wait.UntilAt(first_level)};
      std::string why = reasons.empty() ? "" : fmt::format(" ({})", fmt::join(reasons, "; "));
      std::string_view setting = first_level && wait.Draining() ? kDrainWaitSetting : "topology.fallbackAfterSeconds";
      waiting.plan.reason = fmt::format("no one domain of {} holds it now{}; it waits for one until {} before it is "
                                        "planned across domains ({})",
                                        key, why, FormatRfc3339(waiting.waits_until_ms), setting);
      return waiting;
    }
  }
  if (!required.empty()) {
    GangPlacement none{.planned = pending, .level = required};
    none.plan.reason = reasons.empty() ? fmt::format("no node has the label {} its group requires ({})", required,
                                                     std::string_view(names::kTopologyRequired))
                                       : fmt::format("no one domain of {} holds it ({})", required, fmt::join(reasons, "; "));
    return none;
  }
  GangPlacement across{.planned = pending};
  std::vector<std::string_view> outside = off.empty() ? std::vector<std::string_view>{} : NodesOutside(off, snapshot, options);
  across.plan = PlanLeavingOutLargest(&across.planned, needed, snapshot, options, programs, off.empty() ? nullptr : &outside);
  return across;
}

DomainWait DomainWaitOf(const std::vector<Pod>& pending, const ServiceOptions& options, const DomainReservation* kept,
                        int64_t now_ms) {
  int64_t oldest = 0;
  for (const Pod& p : pending) {
    if (p.created_ms > 0 && (oldest == 0 || p.created_ms < oldest)) oldest = p.created_ms;
  }
  if (oldest == 0) return DomainWait{.now_ms = now_ms};  // creation unknown: no wait
  auto after = [&](std::chrono::seconds s) { return oldest + std::chrono::duration_cast<std::chrono::milliseconds>(s).count(); };
  DomainWait wait{.until_ms = after(options.topology_fallback_after), .now_ms = now_ms};
  bool drains = kept != nullptr && kept->drains && options.topology_fallback_after.count() > 0;
  if (drains && options.topology_drain_wait > options.topology_fallback_after) wait.drain_until_ms = after(options.topology_drain_wait);
  return wait;
}

std::vector<std::string_view> InRequiredDomain(const std::vector<std::string_view>& offered, const std::string& key,
                                               const std::vector<std::string>& beside,
                                               const inventory::InventorySnapshot& snapshot) {
  std::optional<std::string> shared = SharedDomain(beside, key, snapshot);
  std::vector<std::string_view> out;
  for (std::string_view name : offered) {
    const placement::NodeState* n = snapshot.FindNode(name);
    auto label = n != nullptr ? n->node.labels.find(key) : Labels::const_iterator();
    if (n != nullptr && label != n->node.labels.end() && (!shared || label->second == *shared)) out.push_back(name);
  }
  return out;
}

}  // namespace gpusched::extender
