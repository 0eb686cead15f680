// File: search.cc
//
// The depth-first search (class Search): claims, requests and device slots in order, firstAvailable
// subrequests tried in turn, All-mode devices that must all join, and allocateDevice's checks, each
// recorded in an Undo rolled back on backtrack; steps bounded.
#include "gpusched/dra/allocator/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>

#include "gpusched/dra/allocator/constraint.h"

namespace gpusched::dra {
namespace {

std::string NewShareId() {
  static std::atomic<uint64_t> counter{0};
  uint64_t n = ++counter;
  return fmt::format("00000000-0000-4000-8000-{:012x}", n & 0xFFFFFFFFFFFFull);
}

// Internal linkage on purpose: the search's helpers are called once per candidate on the hot
// path, and the compiler inlines them only when it can see every caller.
class Search {
 public:
  using Result = SearchOutcome::Result;

  // REQUIRES: every argument outlives the search.
  Search(const AllocatorInput& in, const NodePools& pools, const DeviceChecks& checks, std::vector<ClaimData>* claims);

  // Runs the search once. kError: error() says why; kBound: in.max_steps ran out.
  Result Run();

  // The outcome of Run (moves the results out).
  SearchOutcome Outcome(Result result) {
    return SearchOutcome{.result = result, .steps = steps_, .error = std::move(error_), .results = std::move(results_), .chosen = std::move(chosen_)};
  }

 private:
  // What AllocateDevice changed, for RollBack.
  struct Undo {
    bool counters = false;
    bool allocating = false;
    size_t constraints_added = 0;
    bool capacity = false;
    std::map<std::string, int64_t> consumed;
  };
  using CounterSets = std::map<std::string, std::map<std::string, int64_t>>;

  // allocateOne: `placed` devices of alternative `alternative` of request `request` of claim
  // `claim` are chosen; tries candidates from `first_candidate` for the next one.
  Result AllocateOne(size_t claim, size_t request, size_t alternative, int64_t placed, bool choosing_sub, size_t first_candidate);
  Result ChooseSubrequest(size_t claim, size_t request);
  Result AllocateAllMode(size_t claim, size_t request, size_t alternative, int64_t placed, bool choosing_sub);

  // allocateDevice: returns false with nothing changed if `candidate` cannot join; a hard error
  // (a constraint broken by an All-mode device, `must`) sets error_ and *failed.
  bool AllocateDevice(size_t claim, const RequestData& request, size_t candidate, bool must, Undo* undo, bool* failed);
  bool InUse(const RequestData& request, size_t claim, size_t candidate) const;
  bool TakeCounters(size_t candidate, Undo* undo);
  bool TakeCapacity(size_t claim, const RequestData& request, size_t candidate, Undo* undo);
  void Record(size_t claim, const RequestData& request, size_t candidate, const Undo& undo);
  const CounterSets& Available(size_t pool);
  void ReleaseCounters(const Candidate& c);
  void RollBack(size_t claim, size_t candidate, Undo* undo);
  void Deallocate(size_t claim, size_t candidate, Undo* undo);

  const AllocatorInput& in_;
  const std::vector<PoolData>& pools_;
  const std::vector<Candidate>& candidates_;
  const DeviceChecks& checks_;
  std::vector<ClaimData>& claims_;
  std::vector<std::vector<Constraint>> constraints_;  // per claim
  std::vector<std::vector<DeviceResult>> results_;    // per claim
  std::vector<std::vector<size_t>> chosen_;           // per claim: the candidate of each result
  std::vector<std::vector<size_t>> allocating_;       // per candidate: the claims holding it
  std::vector<std::map<std::string, int64_t>> capacity_allocating_;  // per candidate
  std::vector<int> shares_;                           // per candidate: shares allocated in this attempt
  std::vector<std::optional<CounterSets>> available_;  // per pool, lazily: counters the cluster leaves
  std::map<size_t, CounterSets> consumed_counters_;    // per pool: counters this attempt uses
  int64_t steps_ = 0;
  std::string error_;
};

Search::Search(const AllocatorInput& in, const NodePools& pools, const DeviceChecks& checks, std::vector<ClaimData>* claims)
    : in_(in), pools_(pools.pools), candidates_(pools.candidates), checks_(checks), claims_(*claims) {
  available_.resize(pools_.size());
  allocating_.assign(candidates_.size(), {});
  capacity_allocating_.assign(candidates_.size(), {});
  shares_.assign(candidates_.size(), 0);
  results_.assign(claims_.size(), {});
  chosen_.assign(claims_.size(), {});
  for (const ClaimData& c : claims_) {
    std::vector<Constraint> constraints;
    for (const DeviceConstraint& spec : c.claim->constraints) constraints.emplace_back(spec);
    constraints_.push_back(std::move(constraints));
  }
}

Search::Result Search::Run() { return AllocateOne(0, 0, 0, 0, false, 0); }

Search::Result Search::AllocateOne(size_t claim, size_t request, size_t alternative, int64_t placed, bool choosing_sub,
                                   size_t first_candidate) {
  ++steps_;
  if (steps_ > in_.max_steps) return Result::kBound;
  if (claim == claims_.size()) return Result::kSuccess;
  ClaimData& cd = claims_[claim];
  if (request == cd.requests.size()) {
    Result res = AllocateOne(claim + 1, 0, 0, 0, false, 0);
    return res == Result::kMaxSize ? Result::kFail : res;
  }
  if (cd.requests[request].front().is_sub && !choosing_sub) return ChooseSubrequest(claim, request);
  const RequestData& rd = cd.requests[request][alternative];
  if (rd.all_mode && rd.all_devices.empty()) return Result::kFail;
  if (placed >= rd.num_devices) {
    Result res = AllocateOne(claim, request + 1, 0, 0, false, 0);
    if (res == Result::kSuccess && rd.is_sub) cd.chosen_sub[request] = alternative;
    return res;
  }
  if (static_cast<int64_t>(chosen_[claim].size()) + rd.num_devices - placed > kMaxResults) return Result::kMaxSize;
  if (rd.all_mode) return AllocateAllMode(claim, request, alternative, placed, choosing_sub);
  for (size_t i = first_candidate; i < candidates_.size(); ++i) {
    if (InUse(rd, claim, i)) continue;
    StatusOr<bool> selectable = checks_.Selectable(cd, rd, i);
    if (!selectable.ok()) {
      error_ = std::string(selectable.status().message());
      return Result::kError;
    }
    if (!*selectable) continue;
    Undo undo;
    bool failed = false;
    if (!AllocateDevice(claim, rd, i, /*must=*/false, &undo, &failed)) {
      if (failed) return Result::kError;
      continue;
    }
    Result res = AllocateOne(claim, request, alternative, placed + 1, choosing_sub, i + 1);
    if (res == Result::kSuccess) return res;
    Deallocate(claim, i, &undo);
    if (res != Result::kFail) return res;
  }
  return Result::kFail;
}

// firstAvailable: the first subrequest that leads to a complete assignment.
Search::Result Search::ChooseSubrequest(size_t claim, size_t request) {
  bool all_exceeded = true;
  for (size_t sub = 0; sub < claims_[claim].requests[request].size(); ++sub) {
    Result res = AllocateOne(claim, request, sub, 0, true, 0);
    if (res == Result::kMaxSize) continue;
    all_exceeded = false;
    if (res == Result::kSuccess) {
      claims_[claim].chosen_sub[request] = sub;
      return res;
    }
    if (res != Result::kFail) return res;
  }
  return all_exceeded ? Result::kMaxSize : Result::kFail;
}

// allocationMode All: the devices are fixed; each must join.
Search::Result Search::AllocateAllMode(size_t claim, size_t request, size_t alternative, int64_t placed, bool choosing_sub) {
  const RequestData& rd = claims_[claim].requests[request][alternative];
  size_t i = rd.all_devices[static_cast<size_t>(placed)];
  Undo undo;
  bool failed = false;
  if (!AllocateDevice(claim, rd, i, /*must=*/true, &undo, &failed)) return failed ? Result::kError : Result::kFail;
  Result res = AllocateOne(claim, request, alternative, placed + 1, choosing_sub, 0);
  if (res != Result::kSuccess) Deallocate(claim, i, &undo);
  return res;
}

bool Search::InUse(const RequestData& request, size_t claim, size_t candidate) const {
  bool shareable = checks_.Shareable(candidates_[candidate]);
  if (request.admin) {
    // Only this claim's own use counts; shareable devices never enter allocating_.
    return !shareable && std::find(allocating_[candidate].begin(), allocating_[candidate].end(), claim) != allocating_[candidate].end();
  }
  if (shareable) return (checks_.Held(candidate) & IndexedSlice::kHeldExclusive) != 0;
  return checks_.Held(candidate) != 0 || !allocating_[candidate].empty();
}

bool Search::AllocateDevice(size_t claim, const RequestData& request, size_t candidate, bool must, Undo* undo, bool* failed) {
  const Candidate& cand = candidates_[candidate];
  if (InUse(request, claim, candidate)) return false;
  if (!cand.device->consumes_counters.empty() && !in_.features.partitionable_devices) return false;
  if (!TakeCounters(candidate, undo)) return false;
  auto reject = [&] {
    RollBack(claim, candidate, undo);
    return false;
  };
  if (in_.features.device_taints && !TaintsTolerated(*cand.device, request.req->tolerations)) return reject();
  for (Constraint& constraint : constraints_[claim]) {
    if (!constraint.Add(request, cand)) {
      if (!must) return reject();
      RollBack(claim, candidate, undo);
      error_ = fmt::format("claim {}/{}, request {}: cannot add device {}/{}/{} because a claim constraint would not be satisfied",
                           claims_[claim].claim->namespace_name, claims_[claim].claim->name, request.name, cand.id.driver, cand.id.pool,
                           cand.id.device);
      *failed = true;
      return false;
    }
    ++undo->constraints_added;
  }
  if (!TakeCapacity(claim, request, candidate, undo)) return reject();
  Record(claim, request, candidate, *undo);
  return true;
}

// Shared counters: a device's consumption must fit what every counter set of its pool has left.
// A shared device's counters are consumed once, by its first share (in the cluster or here).
bool Search::TakeCounters(size_t candidate, Undo* undo) {
  const Candidate& cand = candidates_[candidate];
  bool partially_consumed =
      checks_.Shareable(cand) && ((checks_.Held(candidate) & IndexedSlice::kHeldShared) != 0 || shares_[candidate] > 0);
  if (cand.device->consumes_counters.empty() || partially_consumed) return true;
  CounterSets& consumed = consumed_counters_[cand.pool];
  for (const CounterConsumption& cc : cand.device->consumes_counters) {
    for (const auto& [counter, milli] : cc.counters_milli) consumed[cc.counter_set][counter] += milli;
  }
  // Every counter of every set of the pool: one over-committed set blocks the pool.
  for (const auto& [set, counters] : Available(cand.pool)) {
    auto used_set = consumed.find(set);
    for (const auto& [counter, have] : counters) {
      int64_t used = 0;
      if (used_set != consumed.end()) {
        if (auto it = used_set->second.find(counter); it != used_set->second.end()) used = it->second;
      }
      if (used > have) {
        ReleaseCounters(cand);
        return false;
      }
    }
  }
  undo->counters = true;
  return true;
}

// Capacity: a shareable device gives each share what its request policy grants, within what the
// cluster and this attempt leave; any other device is taken whole if its static capacity fits.
bool Search::TakeCapacity(size_t claim, const RequestData& request, size_t candidate, Undo* undo) {
  const Candidate& cand = candidates_[candidate];
  if (!checks_.Shareable(cand)) {
    if (!DeviceChecks::StaticCapacityFits(request, cand)) return false;
    allocating_[candidate].push_back(claim);
    undo->allocating = true;
    return true;
  }
  const auto& requested = request.req->capacity_requests_milli;
  for (const auto& [name, unused] : requested) {
    if (!cand.device->capacity.contains(name)) return false;
  }
  for (const auto& [name, cap] : cand.device->capacity) {
    auto req = requested.find(name);
    std::optional<int64_t> want = DeviceChecks::Consumed(cap, req == requested.end() ? std::nullopt : std::optional<int64_t>(req->second));
    if (!want) return false;
    int64_t held = 0;
    if (auto a = in_.allocated->consumed_capacity_milli.find(cand.id); a != in_.allocated->consumed_capacity_milli.end()) {
      if (auto it = a->second.find(name); it != a->second.end()) held = it->second;
    }
    if (auto it = capacity_allocating_[candidate].find(name); it != capacity_allocating_[candidate].end()) held += it->second;
    if (held + *want > cap.value_milli) return false;
    undo->consumed[name] = *want;
  }
  for (const auto& [name, milli] : undo->consumed) capacity_allocating_[candidate][name] += milli;
  ++shares_[candidate];
  undo->capacity = true;
  return true;
}

void Search::Record(size_t claim, const RequestData& request, size_t candidate, const Undo& undo) {
  const Candidate& cand = candidates_[candidate];
  if (in_.want_results) {
    DeviceResult r{.request = request.name, .id = cand.id, .admin_access = request.admin, .tolerations = request.req->tolerations};
    if (in_.features.binding_conditions) {
      r.binding_conditions = cand.device->binding_conditions;
      r.binding_failure_conditions = cand.device->binding_failure_conditions;
    }
    if (checks_.Shareable(cand)) {
      r.share_id = in_.new_share_id ? in_.new_share_id() : NewShareId();
      r.consumed_capacity_milli = undo.consumed;
    }
    results_[claim].push_back(std::move(r));
  }
  chosen_[claim].push_back(candidate);
}

const Search::CounterSets& Search::Available(size_t pool) {
  if (!available_[pool]) {
    const PoolData& data = pools_[pool];
    CounterSets left = data.counter_sets;
    for (const IndexedSlice* s : data.all_slices) {
      for (const Device& d : s->slice().devices) {
        if (!in_.allocated->Holds(DeviceId{std::string(data.driver), std::string(data.name), d.name})) continue;
        for (const CounterConsumption& cc : d.consumes_counters) {
          for (const auto& [counter, milli] : cc.counters_milli) left[cc.counter_set][counter] -= milli;
        }
      }
    }
    available_[pool] = std::move(left);
  }
  return *available_[pool];
}

void Search::ReleaseCounters(const Candidate& c) {
  CounterSets& consumed = consumed_counters_[c.pool];
  for (const CounterConsumption& cc : c.device->consumes_counters) {
    for (const auto& [counter, milli] : cc.counters_milli) consumed[cc.counter_set][counter] -= milli;
  }
}

void Search::RollBack(size_t claim, size_t candidate, Undo* undo) {
  if (undo->counters) ReleaseCounters(candidates_[candidate]);
  for (size_t k = undo->constraints_added; k > 0; --k) constraints_[claim][k - 1].Remove();
  if (undo->allocating) allocating_[candidate].pop_back();
  if (undo->capacity) {
    for (const auto& [name, milli] : undo->consumed) capacity_allocating_[candidate][name] -= milli;
    std::erase_if(capacity_allocating_[candidate], [](const auto& kv) { return kv.second == 0; });
    --shares_[candidate];
  }
  *undo = Undo{};
}

void Search::Deallocate(size_t claim, size_t candidate, Undo* undo) {
  if (in_.want_results) results_[claim].pop_back();
  chosen_[claim].pop_back();
  RollBack(claim, candidate, undo);
}

}  // namespace

SearchOutcome RunSearch(const AllocatorInput& in, const NodePools& pools, const DeviceChecks& checks, std::vector<ClaimData>* claims) {
  Search search(in, pools, checks, claims);
  return search.Outcome(search.Run());
}

}  // namespace gpusched::dra
