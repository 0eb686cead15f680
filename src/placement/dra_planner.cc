// File: dra_planner.cc
//
// The DRA planner: the pod's claims anonymized under placeholder names so that verdicts are shared
// per shape; per node the allocated-claim and mode checks, the compatible and PCIe-root-ranked
// allocations with holds taken, the score and the scoring view.
#include "gpusched/placement/dra_planner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <set>

#include "gpusched/dra/allocator/pools.h"
#include "gpusched/placement/dra_links.h"
#include "gpusched/placement/what_if.h"

namespace gpusched::placement {
namespace {

// Stands for the name of the pod's i-th claim to allocate; Kubernetes names never hold \x1f.
constexpr char kMark = '\x1f';
std::string Placeholder(size_t i) { return fmt::format("{}{}{}", kMark, i, kMark); }

}  // namespace

DraPlanner::DraPlanner(const dra::ClusterState& state, const Pod& pod, dra::cel::ProgramCache* programs, DraOptions options,
                       const dra::ResourceClaim* special)
    : state_(state), pod_(pod), programs_(programs), options_(std::move(options)) {
  dra::ClusterState::PodClaims resolved = state_.Resolve(pod_);
  problem_ = std::move(resolved.problem);
  for (const dra::ResourceClaim* c : resolved.claims) {
    (c->allocation ? allocated_ : to_allocate_).push_back(c);
  }
  if (special != nullptr) to_allocate_.push_back(special);
  // What the allocator sees: the claims' specs under placeholder names (no uid, version, owner
  // or consumers: it reads none of them), so that verdicts are the same for every pod of a shape.
  for (size_t i = 0; i < to_allocate_.size(); ++i) {
    const dra::ResourceClaim& c = *to_allocate_[i];
    anonymous_.push_back(dra::ResourceClaim{.namespace_name = c.namespace_name,
                                            .name = Placeholder(i),
                                            .requests = c.requests,
                                            .constraints = c.constraints,
                                            .configs = c.configs});
  }
  for (const dra::ResourceClaim& c : anonymous_) anonymous_ptrs_.push_back(&c);
  multi_gpu_ = HasMultiGpuRequest(anonymous_ptrs_, options_.gpu_drivers);
  // The ranked variant: every request for two or more devices stays under one PCIe root.
  for (const dra::ResourceClaim* c : anonymous_ptrs_) {
    dra::ResourceClaim copy = *c;
    for (const dra::DeviceRequest& r : c->requests) {
      bool multi = r.exactly ? (r.exactly->allocation_mode == "ExactCount" && r.exactly->count > 1)
                             : std::any_of(r.first_available.begin(), r.first_available.end(),
                                           [](const dra::ExactRequest& s) { return s.allocation_mode == "ExactCount" && s.count > 1; });
      if (multi) copy.constraints.push_back(dra::DeviceConstraint{.requests = {r.name}, .match_attribute = options_.topology_attribute});
    }
    aligned_.push_back(std::move(copy));
  }
  auto compile = [&](const std::string& expr) {
    StatusOr<dra::cel::ProgramPtr> p = programs_->Get(expr);
    if (!p.ok()) return;  // the allocator reports it, where upstream would
    compiled_[&expr] = p->get();
    keep_.push_back(*p);
  };
  auto requests = [&](const dra::ResourceClaim& c) {
    auto one = [&](const dra::ExactRequest& r) {
      for (const std::string& e : r.selectors) compile(e);
      if (auto cls = state_.classes().find(r.device_class); cls != state_.classes().end()) {
        for (const std::string& e : cls->second.selectors) compile(e);
      }
    };
    for (const dra::DeviceRequest& r : c.requests) {
      if (r.exactly) one(*r.exactly);
      for (const dra::ExactRequest& sub : r.first_available) one(sub);
    }
  };
  for (const dra::ResourceClaim& c : anonymous_) requests(c);
  for (const dra::ResourceClaim& c : aligned_) requests(c);
}

bool DraPlanner::IsGpu(std::string_view driver) const {
  return std::find(options_.gpu_drivers.begin(), options_.gpu_drivers.end(), driver) != options_.gpu_drivers.end();
}

namespace {

NodeVerdict NoFit(Reject reject, std::string reason) {
  return NodeVerdict{.outcome = NodeVerdict::Refusal(reject == Reject::kInsufficient), .reject = reject, .reason = std::move(reason)};
}

DraVerdict RequestError(std::string reason, int64_t steps = 0) {
  return DraVerdict{.node = {.outcome = Outcome::kError, .reject = Reject::kInvalidRequest, .reason = std::move(reason)},
                    .steps = steps};
}

}  // namespace

std::optional<NodeVerdict> DraPlanner::CheckAllocated(const dra::NodeInfo& info) const {
  // Claims already allocated (shared claims, or allocated for this pod earlier) only need a node
  // that can use their devices.
  for (const dra::ResourceClaim* c : allocated_) {
    if (c->allocation->node_selector && !dra::NodeSelectorMatches(*c->allocation->node_selector, info)) {
      return NoFit(Reject::kModeMismatch,
                   fmt::format("claim {}/{} is allocated to devices this node cannot use (its allocation's nodeSelector)",
                               c->namespace_name, c->name));
    }
    bool reserved = std::any_of(c->reserved_for.begin(), c->reserved_for.end(), [&](const dra::ConsumerRef& r) { return r.uid == pod_.uid; });
    if (!reserved && c->reserved_for.size() >= 256) {
      return NoFit(Reject::kInsufficient, fmt::format("claim {}/{} is already reserved for 256 consumers", c->namespace_name, c->name));
    }
  }
  return std::nullopt;
}

std::optional<NodeVerdict> DraPlanner::CheckMode(const NodeState& node, const std::set<std::string>& drivers) const {
  bool gpus = false;
  for (const dra::ResourceClaim* c : allocated_) {
    for (const dra::DeviceResult& r : c->allocation->results) gpus = gpus || IsGpu(r.id.driver);
  }
  for (const std::string& driver : drivers) gpus = gpus || IsGpu(driver);
  if (!gpus) return std::nullopt;  // NICs, FPGAs: the allocator's word is final, as upstream
  if (node.mode != ClaimsMode()) {
    return NoFit(Reject::kModeMismatch,
                 fmt::format("node mode {}; pod claims GPUs through DRA, which only nodes labelled {}=nvidia-dra serve",
                             ModeName(node.mode), "vke.node.gpu.schedule"));
  }
  if (!node.ready()) {
    return NoFit(node.condition == NodeCondition::kSwitching ? Reject::kSwitching : Reject::kInconsistent, node.condition_reason);
  }
  return std::nullopt;
}

const dra::AllocatedDevices* DraPlanner::Held(dra::AllocatedDevices* merged) const {
  if (options_.also_allocated == nullptr) return &state_.allocated();
  *merged = state_.allocated();
  merged->exclusive.insert(options_.also_allocated->exclusive.begin(), options_.also_allocated->exclusive.end());
  merged->shared.insert(options_.also_allocated->shared.begin(), options_.also_allocated->shared.end());
  for (const auto& [id, caps] : options_.also_allocated->consumed_capacity_milli) {
    for (const auto& [name, milli] : caps) merged->consumed_capacity_milli[id][name] += milli;
  }
  return merged;
}

bool DraPlanner::AllHoldsBind(const NodeState& node) const {
  return std::all_of(node.holds.begin(), node.holds.end(), [&](const Allocation& h) { return HoldBinds(h, Viewer::Of(pod_)); });
}

namespace {

// The entries of `from` whose devices are in one of `pools`, added to `to`.
template <typename Set>
void CopyPools(const Set& from, const dra::NodePools& pools, Set* to) {
  for (const dra::PoolData& p : pools.pools) {
    dra::DeviceId first{.driver = std::string(p.driver), .pool = std::string(p.name)};
    for (auto it = from.lower_bound(first); it != from.end(); ++it) {
      const dra::DeviceId& id = [&]() -> const dra::DeviceId& {
        if constexpr (requires { it->first; }) {
          return it->first;
        } else {
          return *it;
        }
      }();
      if (id.driver != p.driver || id.pool != p.name) break;
      to->insert(*it);
    }
  }
}

}  // namespace

const dra::AllocatedDevices* DraPlanner::WithHolds(const NodeState& node, const dra::AllocatedDevices* base,
                                                   const dra::NodePools& pools, dra::AllocatedDevices* merged) const {
  bool any = false;
  for (const Allocation& h : node.holds) {
    if (h.placement.kind != ClaimsKind() || !HoldBinds(h, Viewer::Of(pod_))) continue;
    if (!any) {
      CopyPools(base->exclusive, pools, &merged->exclusive);
      CopyPools(base->shared, pools, &merged->shared);
      CopyPools(base->consumed_capacity_milli, pools, &merged->consumed_capacity_milli);
    }
    any = true;
    for (const std::string& name : h.placement.devices) {
      if (std::optional<dra::DeviceId> id = dra::ParseDeviceName(name)) merged->exclusive.insert(std::move(*id));
    }
  }
  return any ? merged : base;
}

std::string DraPlanner::Personal(std::string reason) const {
  if (reason.find(kMark) == std::string::npos) return reason;
  // Only the placeholders are replaced: a \x1f that a selector's text brought in stays.
  for (size_t i = 0; i < to_allocate_.size(); ++i) {
    std::string mark = Placeholder(i);
    for (size_t at = reason.find(mark); at != std::string::npos; at = reason.find(mark, at + to_allocate_[i]->name.size())) {
      reason.replace(at, mark.size(), to_allocate_[i]->name);
    }
  }
  return reason;
}

DraVerdict DraPlanner::Evaluate(const NodeState& node, bool rank) const {
  DraVerdict v = EvaluateAnonymous(node, rank);
  v.node.reason = Personal(std::move(v.node.reason));
  return v;
}

std::shared_ptr<const DraVerdict> DraPlanner::Evaluate(const NodeState& node, uint32_t pos, bool rank, DraVerdictCache* cache) const {
  // A node with a hold that does not bind this pod is judged for it alone (nomination.h).
  if (!cacheable() || cache == nullptr || !AllHoldsBind(node)) return std::make_shared<const DraVerdict>(Evaluate(node, rank));
  uint64_t version = state_.NodeVersion(node.node.name);
  DraVerdictCache::VerdictPtr v = cache->Find(pos, node.generation, version, rank);
  if (v == nullptr) {
    v = std::make_shared<const DraVerdict>(EvaluateAnonymous(node, rank));
    cache->Put(pos, node.generation, version, rank, v);
  }
  if (v->node.reason.find(kMark) == std::string::npos) return v;
  auto personal = std::make_shared<DraVerdict>(*v);
  personal->node.reason = Personal(std::move(personal->node.reason));
  return personal;
}

DraVerdict DraPlanner::Evaluate(const WhatIf& view, bool rank) const {
  DraVerdict v = EvaluateAnonymous(view.state(), rank, view.devices_held());
  v.node.reason = Personal(std::move(v.node.reason));
  return v;
}

DraVerdict DraPlanner::EvaluateAnonymous(const NodeState& node, bool rank, const dra::AllocatedDevices* held) const {
  if (!problem_.empty()) return RequestError(problem_);
  if (node.condition == NodeCondition::kInvalid) return DraVerdict{.node = NoFit(Reject::kInvalidLabel, node.condition_reason)};
  dra::NodeInfo info{.name = node.node.name, .labels = &node.node.labels};
  if (std::optional<NodeVerdict> no = CheckAllocated(info)) return DraVerdict{.node = std::move(*no)};
  dra::NodePoolsPtr pools = state_.PoolsFor(info);
  bool what_if = held != nullptr;  // devices of a what-if view: only whether it fits matters
  bool links = !what_if && multi_gpu_ && node.links != nullptr && node.links->islands;
  dra::AllocatedDevices merged, with_holds;
  if (held == nullptr) held = Held(&merged);
  const dra::AllocatedDevices* without_holds = held;
  held = WithHolds(node, held, *pools, &with_holds);
  if (links && !options_.ranked_allocated) links = held == without_holds && OneGpuSlice(node);
  auto run = [&](const std::vector<const dra::ResourceClaim*>& claims, const dra::DeviceRestriction* only) {
    return dra::Allocate(dra::AllocatorInput{.node = &info,
                                             .claims = claims,
                                             .slices = &state_.slices(),
                                             .classes = &state_.classes(),
                                             .allocated = held,
                                             .programs = programs_,
                                             .compiled = &compiled_,
                                             .admin_namespaces = state_.admin_namespaces() ? &*state_.admin_namespaces() : nullptr,
                                             .max_steps = options_.max_steps,
                                             .pools = pools.get(),
                                             .want_results = rank || links,
                                             .want_reason = !what_if,
                                             .only = only});
  };
  dra::AllocatorOutcome compat = run(anonymous_ptrs_, nullptr);
  if (compat.kind == dra::AllocatorOutcome::Kind::kError) return RequestError(std::move(compat.reason), compat.steps);
  DraVerdict v{.steps = compat.steps};
  if (compat.kind != dra::AllocatorOutcome::Kind::kAllocated) {
    v.node = NoFit(Reject::kInsufficient, std::move(compat.reason));
    return v;
  }
  if (std::optional<NodeVerdict> no = CheckMode(node, compat.drivers)) {
    v.node = std::move(*no);
    return v;
  }
  v.node.outcome = Outcome::kFits;
  v.compat = std::move(compat.results);
  // The set to be allocated is ranked where gpusched allocates: ranked even for filter, then.
  if (rank || (links && options_.ranked_allocated)) Rank(node, *held, run, &v);
  if (links) {
    v.links = LinksOfChoice(node, anonymous_ptrs_, options_.ranked_allocated ? v.ranked : v.compat, state_.slices(), options_.gpu_drivers);
  }
  return v;
}

void DraPlanner::Rank(const NodeState& node, const dra::AllocatedDevices& held, const Run& run, DraVerdict* v) const {
  if (!RankLinked(node, held, run, v)) RankAligned(run, v);
  // NVLink-connected counts as aligned, no more: NVSwitch nodes (no islands) connect every set.
  v->score = (v->topology_aligned ? 10.0 : 0.0) + 5.0 * PackingScore(node, v->ranked);
  v->gpu_view = GpuView(node);
  std::tie(v->gpus_taken, v->milli_taken) = Taken(node, *v);
}

bool DraPlanner::RankLinked(const NodeState& node, const dra::AllocatedDevices& held, const Run& run, DraVerdict* v) const {
  constexpr size_t kMaxLinkedChoices = 8;
  for (const dra::DeviceRestriction& only :
       LinkedChoices(node, anonymous_ptrs_, state_.slices(), held, options_.gpu_drivers, kMaxLinkedChoices)) {
    dra::AllocatorOutcome linked = run(anonymous_ptrs_, &only);
    v->steps += linked.steps;
    if (linked.kind != dra::AllocatorOutcome::Kind::kAllocated) continue;
    v->ranked = std::move(linked.results);
    v->topology_aligned = true;
    v->nvlink_connected = true;
    return true;
  }
  return false;
}

void DraPlanner::RankAligned(const Run& run, DraVerdict* v) const {
  std::vector<const dra::ResourceClaim*> aligned;
  for (const dra::ResourceClaim& c : aligned_) aligned.push_back(&c);
  dra::AllocatorOutcome ranked = aligned_.empty() ? dra::AllocatorOutcome{} : run(aligned, nullptr);
  v->steps += ranked.steps;
  bool multi = false;  // some request asked for several devices, so alignment means something
  for (size_t i = 0; i < aligned_.size(); ++i) multi = multi || aligned_[i].constraints.size() > to_allocate_[i]->constraints.size();
  if (ranked.kind == dra::AllocatorOutcome::Kind::kAllocated) {
    v->ranked = std::move(ranked.results);
    v->topology_aligned = multi;
  } else {
    v->ranked = v->compat;
  }
}

template <typename F>
void DraPlanner::ForEachGpuDevice(const NodeState& node, F&& f) const {
  for (const dra::IndexedSlice* s : state_.slices().PinnedTo(node.node.name)) {
    if (!IsGpu(s->slice().driver)) continue;
    const std::vector<uint8_t>* held = s->HeldBy(&state_.allocated());  // marked when the state was built
    for (size_t i = 0; i < s->slice().devices.size(); ++i) {
      const dra::Device& d = s->slice().devices[i];
      f(held != nullptr ? (*held)[i] != 0 : state_.allocated().Holds(dra::DeviceId{s->slice().driver, s->slice().pool, d.name}), d);
    }
  }
}

double DraPlanner::PackingScore(const NodeState& node, const std::vector<dra::AllocationResult>& chosen) const {
  // The node's GPU devices left free after this pod: fewer is better.
  int64_t total = 0, free = 0;
  ForEachGpuDevice(node, [&](bool taken, const dra::Device&) {
    ++total;
    if (!taken) ++free;
  });
  int64_t used = 0;
  for (const dra::AllocationResult& a : chosen) {
    for (const dra::DeviceResult& r : a.results) used += IsGpu(r.id.driver) ? 1 : 0;
  }
  double left = total > 0 ? static_cast<double>(std::max<int64_t>(free - used, 0)) / static_cast<double>(total) : 0;
  return 1.0 - left;
}

namespace {

// The mean over `set`'s counters of the share `used` leaves (1 = all free).
double FreeShare(const dra::CounterSet& set, const std::map<std::string, int64_t>& used) {
  double sum = 0;
  int n = 0;
  for (const auto& [name, capacity] : set.counters_milli) {
    if (capacity <= 0) continue;
    auto it = used.find(name);
    int64_t taken = it == used.end() ? 0 : std::min(it->second, capacity);
    sum += static_cast<double>(capacity - taken) / static_cast<double>(capacity);
    ++n;
  }
  return n > 0 ? sum / n : 0;
}

// A counter set of a node's GPU pools: (driver, pool, set). A pool may publish its sets in a
// slice of their own (Kubernetes 1.35+) or beside its devices (1.34).
using CounterSetKey = std::tuple<std::string, std::string, std::string>;

}  // namespace

bool DraPlanner::OneGpuSlice(const NodeState& node) const {
  int slices = 0;
  // Slices with devices: a pool may publish its counter sets in a slice of their own (1.35+).
  ForEachGpuSlice(node, [&](const dra::IndexedSlice& s) { slices += s.slice().devices.empty() ? 0 : 1; });
  return slices == 1;
}

template <typename F>
void DraPlanner::ForEachGpuSlice(const NodeState& node, F&& f) const {
  for (const dra::IndexedSlice* s : state_.slices().PinnedTo(node.node.name)) {
    if (IsGpu(s->slice().driver)) f(*s);
  }
}

std::optional<scoring::NodeView> DraPlanner::GpuView(const NodeState& node) const {
  scoring::NodeView view;
  std::vector<CounterSetKey> order;  // counter sets, as published
  std::map<CounterSetKey, const dra::CounterSet*> sets;
  std::map<CounterSetKey, std::map<std::string, int64_t>> used;  // set -> counter -> consumed
  bool fits = true;
  ForEachGpuSlice(node, [&](const dra::IndexedSlice& s) {
    const dra::ResourceSlice& slice = s.slice();
    for (const dra::CounterSet& set : slice.shared_counters) {
      auto key = std::make_tuple(slice.driver, slice.pool, set.name);
      if (sets.emplace(key, &set).second) order.push_back(key);
    }
    const std::vector<uint8_t>* held = s.HeldBy(&state_.allocated());  // marked when the state was built
    for (size_t i = 0; i < slice.devices.size(); ++i) {
      const dra::Device& d = slice.devices[i];
      bool taken = held != nullptr ? (*held)[i] != 0 : state_.allocated().Holds(dra::DeviceId{slice.driver, slice.pool, d.name});
      if (d.consumes_counters.empty()) {
        if (view.gpu_count == scoring::kMaxGpus) fits = false;
        if (fits) view.gpu_free[view.gpu_count++] = taken ? 0 : static_cast<int32_t>(kMilliPerGpu);
        continue;
      }
      if (!taken) continue;
      for (const dra::CounterConsumption& c : d.consumes_counters) {
        for (const auto& [name, milli] : c.counters_milli) used[std::make_tuple(slice.driver, slice.pool, c.counter_set)][name] += milli;
      }
    }
  });
  for (const auto& key : order) {
    if (view.gpu_count == scoring::kMaxGpus) fits = false;
    if (fits) view.gpu_free[view.gpu_count++] = static_cast<int32_t>(std::floor(FreeShare(*sets[key], used[key]) * kMilliPerGpu));
  }
  if (!fits) return std::nullopt;
  return view;
}

std::pair<int, int32_t> DraPlanner::Taken(const NodeState& node, const DraVerdict& v) const {
  // The device of a result and its pool's counter set, looked up among the node's GPU slices.
  auto find_device = [&](const dra::DeviceId& id) -> const dra::Device* {
    const dra::Device* found = nullptr;
    ForEachGpuSlice(node, [&](const dra::IndexedSlice& s) {
      if (found != nullptr || s.slice().driver != id.driver || s.slice().pool != id.pool) return;
      for (const dra::Device& d : s.slice().devices) {
        if (d.name == id.device) found = &d;
      }
    });
    return found;
  };
  auto find_set = [&](const dra::DeviceId& id, const std::string& name) -> const dra::CounterSet* {
    const dra::CounterSet* found = nullptr;
    ForEachGpuSlice(node, [&](const dra::IndexedSlice& s) {
      if (found != nullptr || s.slice().driver != id.driver || s.slice().pool != id.pool) return;
      for (const dra::CounterSet& c : s.slice().shared_counters) {
        if (c.name == name) found = &c;
      }
    });
    return found;
  };
  int whole = 0;
  std::vector<int32_t> partitions;  // the share of each partition taken
  for (const dra::AllocationResult& a : v.ranked) {
    for (const dra::DeviceResult& r : a.results) {
      if (!IsGpu(r.id.driver) || r.admin_access) continue;
      const dra::Device* device = find_device(r.id);
      if (device != nullptr && device->consumes_counters.size() > 1) return {0, 0};  // spans counter sets
      if (device == nullptr || device->consumes_counters.empty()) {
        ++whole;
        continue;
      }
      const dra::CounterConsumption& c = device->consumes_counters[0];
      const dra::CounterSet* set = find_set(r.id, c.counter_set);
      if (set == nullptr) return {0, 0};
      partitions.push_back(static_cast<int32_t>(std::ceil((1.0 - FreeShare(*set, c.counters_milli)) * kMilliPerGpu - 1e-9)));
    }
  }
  bool all_full = std::all_of(partitions.begin(), partitions.end(), [](int32_t m) { return m >= kMilliPerGpu; });
  if (all_full) return {whole + static_cast<int>(partitions.size()), static_cast<int32_t>(kMilliPerGpu)};
  if (whole == 0 && partitions.size() == 1) return {1, partitions[0]};
  return {0, 0};
}

}  // namespace gpusched::placement
