// File: domain_steering.cc
//
// domain_steering.h: whole nodes, the per-domain sums of a snapshot, and the fullest domain in use
// among the fitting nodes'.
#include "gpusched/extender/domain_steering.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>

namespace gpusched::extender {

bool TakesGpuPods(const placement::NodeState& node) {
  return node.view.gpu_count > 0 && node.ready() && !node.node.schedulability.unschedulable && node.node.spec_error.empty();
}

bool IsWholeNode(const placement::NodeState& node) {
  if (!TakesGpuPods(node) || node.view.FullyFree() != node.view.gpu_count) return false;
  if (!node.holds.empty() || !node.nominated.empty()) return false;
  if (node.uses == nullptr) return true;
  return std::all_of(node.uses->pods().begin(), node.uses->pods().end(),
                     [](const PodUse& p) { return p.labels != nullptr && RecreatedOnItsNode(*p.labels); });
}

bool RunsOtherSchedulersPod(const placement::NodeState& node) {
  if (node.uses == nullptr) return false;
  return std::any_of(node.uses->pods().begin(), node.uses->pods().end(), [](const PodUse& p) {
    return (p.flags & PodUse::kOtherScheduler) != 0 && !p.terminating && !(p.labels != nullptr && RecreatedOnItsNode(*p.labels));
  });
}

namespace {

// What `node` (at generation `generation`) says for the domains of `key`: its domain's id in
// *names (added there if new; *ids maps names to ids, filled from *names when empty).
DomainIndex::NodeFacts FactsOf(const placement::NodeState& node, const std::string& key, uint64_t generation,
                               std::vector<std::string>* names, std::map<std::string, int32_t, std::less<>>* ids) {
  DomainIndex::NodeFacts f{.generation = generation};
  auto label = node.node.labels.find(key);
  if (label == node.node.labels.end()) return f;
  if (ids->empty()) {
    for (size_t i = 0; i < names->size(); ++i) ids->emplace((*names)[i], static_cast<int32_t>(i));
  }
  auto [id, added] = ids->try_emplace(label->second, static_cast<int32_t>(names->size()));
  if (added) names->push_back(label->second);
  f.domain = id->second;
  f.free_milli = node.view.IdleMilli();
  f.used_milli = int64_t{1000} * node.view.gpu_count - f.free_milli;
  f.takes_gpu_pods = TakesGpuPods(node);
  f.whole = f.takes_gpu_pods && IsWholeNode(node);
  f.stranded = f.takes_gpu_pods && GpusStrandedByOtherResources(node);
  f.other_scheduler = RunsOtherSchedulersPod(node);
  return f;
}

// Fills index->domains and of from index->facts and names.
void SumFacts(DomainIndex* index) {
  std::vector<DomainUse> uses(index->names.size());
  std::vector<int> members(index->names.size(), 0);
  for (const DomainIndex::NodeFacts& f : index->facts) {
    if (f.domain < 0) continue;
    DomainUse& use = uses[f.domain];
    ++members[f.domain];
    use.free_milli += f.free_milli;
    use.used_milli += f.used_milli;
    use.nodes += f.takes_gpu_pods ? 1 : 0;
    use.capacity_milli += f.takes_gpu_pods ? f.free_milli + f.used_milli : 0;
    use.whole_nodes += f.whole ? 1 : 0;
    use.whole_milli += f.whole ? f.free_milli : 0;
    use.other_scheduler_nodes += f.other_scheduler ? 1 : 0;
  }
  std::vector<const DomainUses::value_type*> by_id(uses.size(), nullptr);
  for (size_t id = 0; id < uses.size(); ++id) {
    if (members[id] > 0) by_id[id] = &*index->domains.emplace(index->names[id], uses[id]).first;
  }
  index->of.assign(index->facts.size(), nullptr);
  for (size_t i = 0; i < index->facts.size(); ++i) {
    const DomainIndex::NodeFacts& f = index->facts[i];
    if (f.domain >= 0) index->of[i] = by_id[f.domain];
  }
}

}  // namespace

std::shared_ptr<const DomainIndex> DomainFullness::Of(const inventory::InventorySnapshot& snapshot, const std::string& key) const {
  std::shared_ptr<const DomainIndex> last;  // the last version's, of the same key
  {
    MutexLock lock(&mu_);
    if (index_ != nullptr && version_ == snapshot.version() && key_ == key) return index_;
    if (key_ == key) last = index_;
  }
  auto index = std::make_shared<DomainIndex>();
  const auto& nodes = snapshot.nodes();
  if (last != nullptr) index->names = last->names;
  std::map<std::string, int32_t, std::less<>> ids;
  index->facts.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    uint64_t generation = nodes.generation(i);
    if (last != nullptr && i < last->facts.size() && generation != 0 && last->facts[i].generation == generation) {
      index->facts[i] = last->facts[i];
    } else {
      index->facts[i] = FactsOf(*nodes[i], key, generation, &index->names, &ids);
    }
  }
  SumFacts(index.get());
  if (reserve_ && !index->domains.empty()) index->reserved = ReservedDomain(snapshot, key, *index, scheduler_);
  index->groups_read = snapshot.groups_ptr();
  index->members_read = snapshot.group_members_ptr();
  bool same_groups = last != nullptr && last->groups_read == index->groups_read && last->members_read == index->members_read;
  index->gang_demands = same_groups ? last->gang_demands : GangDemands(snapshot);
  MutexLock lock(&mu_);
  version_ = snapshot.version();
  key_ = key;
  index_ = index;
  return index_;
}

std::vector<int64_t> GangDemands(const inventory::InventorySnapshot& snapshot) {
  std::vector<int64_t> out;
  for (const auto& [member_key, members] : snapshot.group_members()) {
    auto group = snapshot.groups().find(std::string_view(member_key).substr(0, member_key.find('#')));
    if (group == snapshot.groups().end() || !group->second.gang()) continue;
    std::vector<int64_t> gpus;
    for (int64_t d : members.demands) {
      if (d > 0) gpus.push_back(d);
    }
    // A gang whose members are not all created yet has no shape to go by (it is not waiting
    // either, gang_reservation.h).
    if (gpus.empty() || members.demands.size() < static_cast<size_t>(group->second.min_count)) continue;
    size_t launchers = members.demands.size() - gpus.size();
    out.push_back(NeedOf(std::move(gpus), launchers, group->second.min_count).least_milli);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

int64_t LastRoomForGang(const DomainIndex& index, uint32_t n) {
  const DomainIndex::NodeFacts& f = index.facts[n];
  if (!f.whole || index.of[n] == nullptr) return 0;
  int64_t whole = index.of[n]->second.whole_milli;
  // The smallest demand above what the domain's other whole nodes hold, and above what the node
  // holds itself (a gang one node holds needs no domain): the node is its last room if the domain
  // holds it now.
  int64_t at_most = std::max(whole - f.free_milli, f.free_milli);
  auto above = std::upper_bound(index.gang_demands.begin(), index.gang_demands.end(), at_most);
  return above != index.gang_demands.end() && *above <= whole ? *above : 0;
}

bool GpusStrandedByOtherResources(const placement::NodeState& node) {
  if (!TakesGpuPods(node) || node.view.IdleMilli() <= 0 || IsWholeNode(node)) return false;
  // Short by more than one GPU's share: DaemonSets' requests beside GPU pods of proportional
  // CPU do not make a node look stranded.
  double gpu_free = static_cast<double>(node.view.IdleMilli()) / (1000.0 * node.view.gpu_count);
  double bar = gpu_free - 1.0 / node.view.gpu_count;
  for (std::string_view resource : {"cpu", "memory"}) {
    int64_t allocatable = node.node.other_allocatable.Get(resource);
    if (allocatable <= 0) continue;
    int64_t requested = node.uses != nullptr ? node.uses->total().Get(resource) : 0;
    double free = static_cast<double>(std::max<int64_t>(0, allocatable - requested)) / static_cast<double>(allocatable);
    if (free < bar) return true;
  }
  return false;
}

std::vector<std::pair<std::string, std::vector<size_t>>> OutsideFullestDomain(const std::vector<uint32_t>& fits,
                                                                              const std::string& key, const DomainIndex& index,
                                                                              SteeredPod pod) {
  auto in_use = [&](uint32_t n) { return index.of[n] != nullptr && index.of[n]->second.in_use(); };
  auto stranded = [&](uint32_t n) { return pod == SteeredPod::kAsksGpus && index.facts[n].stranded; };
  auto last_room = [&](uint32_t n) { return index.gang_demands.empty() ? 0 : LastRoomForGang(index, n); };
  bool any_stranded = std::any_of(fits.begin(), fits.end(), [&](uint32_t n) { return index.of[n] != nullptr && stranded(n); });
  bool any_spare = !any_stranded && !index.gang_demands.empty() &&
                   std::any_of(fits.begin(), fits.end(), [&](uint32_t n) { return in_use(n) && last_room(n) == 0; });
  // The first step's nodes: stranded ones, else those that take no domain's last room for a gang.
  auto first_step = [&](uint32_t n) { return any_stranded ? stranded(n) : !any_spare || last_room(n) == 0; };
  const DomainUses::value_type* fullest = nullptr;
  for (uint32_t n : fits) {
    const DomainUses::value_type* d = index.of[n];
    if (d == nullptr || !first_step(n) || !d->second.in_use()) continue;
    if (fullest == nullptr || std::tie(d->second.whole_nodes, d->second.free_milli, d->first) <
                                  std::tie(fullest->second.whole_nodes, fullest->second.free_milli, fullest->first)) {
      fullest = d;
    }
  }
  if (fullest == nullptr) return {};
  std::vector<size_t> to_stranded, to_domain;
  std::map<std::pair<std::string_view, int64_t>, std::vector<size_t>> to_spare;  // by domain and demand
  for (size_t i = 0; i < fits.size(); ++i) {
    const DomainUses::value_type* d = index.of[fits[i]];
    if (d == nullptr) continue;
    if (any_stranded && !stranded(fits[i])) {
      to_stranded.push_back(i);
    } else if (!first_step(fits[i])) {
      to_spare[{d->first, last_room(fits[i])}].push_back(i);
    } else if (d != fullest) {
      to_domain.push_back(i);
    }
  }
  std::vector<std::pair<std::string, std::vector<size_t>>> out;
  if (!to_stranded.empty()) {
    out.emplace_back("pods outside gangs go first to GPUs that other pods' CPU or memory leaves idle, so that whole nodes "
                     "stay free for gangs",
                     std::move(to_stranded));
  }
  for (auto& [at, refused] : to_spare) {
    out.emplace_back(fmt::format("pods outside gangs take no whole node from {}={} while it holds a gang of {:g} GPUs only "
                                 "with that node and other nodes fit",
                                 key, at.first, static_cast<double>(at.second) / 1000),
                     std::move(refused));
  }
  if (!to_domain.empty()) {
    out.emplace_back(fmt::format("pods outside gangs go to the fullest domain in use ({}={}), so that whole domains stay "
                                 "free for gangs",
                                 key, fullest->first),
                     std::move(to_domain));
  }
  return out;
}

bool InKeptDomain(const placement::NodeState* node, const std::string& kept, const ServiceOptions& options) {
  if (kept.empty() || node == nullptr || options.topology_levels.empty()) return false;
  auto label = node->node.labels.find(options.topology_levels.front());
  return label != node->node.labels.end() && label->second == kept;
}

bool KeptOffReserved(const Pod& pod, const DomainReservation& reserved) {
  return pod.priority <= reserved.priority && pod.controller_kind != "DaemonSet" && pod.controller_kind != "Node";
}

std::vector<std::pair<std::string, std::vector<size_t>>> InReservedDomain(const std::vector<uint32_t>& fits,
                                                                          const std::string& key, const DomainIndex& index) {
  if (!index.reserved) return {};
  std::vector<size_t> kept_off;
  for (size_t i = 0; i < fits.size(); ++i) {
    const DomainUses::value_type* d = index.of[fits[i]];
    if (d != nullptr && d->first == index.reserved->domain) kept_off.push_back(i);
  }
  if (kept_off.empty()) return {};
  return {{ReservationReason(key, *index.reserved), std::move(kept_off)}};
}

}  // namespace gpusched::extender
