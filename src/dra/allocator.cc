#include "gpusched/dra/allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>

namespace gpusched::dra {

// ---------------------------------------------------------------------------------------------
// Slices.

IndexedSlice::Verdicts* IndexedSlice::VerdictsFor(const cel::Program* program) const {
  MutexLock lock(&mu_);
  for (auto& [p, v] : verdicts_) {
    if (p == program) return v.get();
  }
  verdicts_.emplace_back(program, std::make_unique<Verdicts>(slice_.devices.size()));
  return verdicts_.back().second.get();
}

void IndexedSlice::MarkHeld(const AllocatedDevices& allocated) {
  held_.assign(slice_.devices.size(), 0);
  for (size_t i = 0; i < slice_.devices.size(); ++i) {
    DeviceId id{slice_.driver, slice_.pool, slice_.devices[i].name};
    if (allocated.exclusive.contains(id)) held_[i] |= kHeldExclusive;
    if (allocated.shared.contains(id) || allocated.consumed_capacity_milli.contains(id)) held_[i] |= kHeldShared;
  }
  held_for_ = &allocated;
}

SliceIndex::SliceIndex(std::vector<ResourceSlice> slices) {
  slices_.reserve(slices.size());
  for (ResourceSlice& s : slices) slices_.push_back(std::make_unique<IndexedSlice>(std::move(s)));
  std::map<std::pair<std::string_view, std::string_view>, std::vector<IndexedSlice*>> by_pool;
  for (const auto& entry : slices_) {
    const ResourceSlice& s = entry->slice();
    if (!s.node_name.empty()) {
      by_node_[s.node_name].push_back(entry.get());
    } else {
      unpinned_.push_back(entry.get());
    }
    by_pool[{s.driver, s.pool}].push_back(entry.get());
  }
  for (auto& [key, members] : by_pool) {
    for (IndexedSlice* s : members) s->pool_id_ = pools_.size();
    pools_.emplace_back(members.begin(), members.end());
  }
}

std::vector<const IndexedSlice*> SliceIndex::Candidates(std::string_view node) const {
  std::vector<const IndexedSlice*> out = unpinned_;
  if (auto it = by_node_.find(node); it != by_node_.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  return out;
}

void AllocatedDevices::Add(const AllocationResult& result) {
  for (const DeviceResult& r : result.results) {
    if (r.admin_access) continue;
    if (!r.share_id.empty()) {
      shared.insert(r.id);
      auto& sum = consumed_capacity_milli[r.id];
      for (const auto& [name, milli] : r.consumed_capacity_milli) sum[name] += milli;
    } else {
      exclusive.insert(r.id);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Node selection and taints.

namespace {

bool ParseInt64(std::string_view s, int64_t* out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

bool RequirementMatches(const NodeSelectorRequirement& r, const std::string* value) {
  auto in = [&] { return value != nullptr && std::find(r.values.begin(), r.values.end(), *value) != r.values.end(); };
  if (r.op == "In") return in();
  if (r.op == "NotIn") return !in();
  if (r.op == "Exists") return value != nullptr;
  if (r.op == "DoesNotExist") return value == nullptr;
  if ((r.op == "Gt" || r.op == "Lt") && value != nullptr && r.values.size() == 1) {
    // As the Kubernetes node selector: both sides integers, or the requirement does not match.
    int64_t have = 0, want = 0;
    if (!ParseInt64(*value, &have) || !ParseInt64(r.values[0], &want)) return false;
    return r.op == "Gt" ? have > want : have < want;
  }
  return false;
}

}  // namespace

bool NodeSelectorMatches(const NodeSelector& selector, const NodeInfo& node) {
  for (const NodeSelectorTerm& term : selector.terms) {
    if (term.match_expressions.empty() && term.match_fields.empty()) continue;  // an empty term matches nothing
    bool all = true;
    for (const NodeSelectorRequirement& r : term.match_expressions) {
      const std::string* value = nullptr;
      if (node.labels != nullptr) {
        auto it = node.labels->find(r.key);
        if (it != node.labels->end()) value = &it->second;
      }
      if (!RequirementMatches(r, value)) all = false;
    }
    std::string name(node.name);
    for (const NodeSelectorRequirement& r : term.match_fields) {
      if (r.key != "metadata.name" || !RequirementMatches(r, &name)) all = false;
    }
    if (all) return true;
  }
  return false;
}

bool ToleratesTaint(const DeviceToleration& t, const DeviceTaint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op == "Exists") return true;
  if (t.op == "Equal" || t.op.empty()) return t.value == taint.value;
  return false;
}

namespace {

NodeSelector LocalNode(std::string_view node) {
  return NodeSelector{.terms = {NodeSelectorTerm{
                          .match_fields = {NodeSelectorRequirement{.key = "metadata.name", .op = "In", .values = {std::string(node)}}}}}};
}

// ---------------------------------------------------------------------------------------------
// Pools.

struct PoolData {
  std::string_view driver;
  std::string_view name;
  bool incomplete = false;
  bool invalid = false;
  std::string invalid_reason;
  std::vector<const IndexedSlice*> slices;     // relevant slices with devices, by name
  std::vector<const IndexedSlice*> all_slices;  // every slice of the pool's generation, any node
  std::map<std::string, std::map<std::string, int64_t>> counter_sets;
};

struct Candidate {
  size_t pool;
  const IndexedSlice* slice;
  size_t index;  // in the slice's devices
  const Device* device;
  DeviceId id;
};

}  // namespace

struct NodePools {
  std::vector<PoolData> pools;
  std::vector<Candidate> candidates;  // devices of complete, valid pools, in canonical order
  bool invalid_pools = false;
};

namespace {

bool DeviceNodeMatches(const Device& d, const NodeInfo& node) {
  if (!d.node_name.empty()) return d.node_name == node.name;
  if (d.all_nodes) return true;
  if (d.node_selector) return NodeSelectorMatches(*d.node_selector, node);
  return false;
}

bool SliceRelevant(const ResourceSlice& s, const NodeInfo& node, const Features& f) {
  if (!f.partitionable_devices && (s.per_device_node_selection || !s.shared_counters.empty())) return false;
  if (!s.node_name.empty()) return s.node_name == node.name;
  if (s.all_nodes) return true;
  if (s.node_selector) return NodeSelectorMatches(*s.node_selector, node);
  if (s.per_device_node_selection) {
    return std::any_of(s.devices.begin(), s.devices.end(), [&](const Device& d) { return DeviceNodeMatches(d, node); });
  }
  return false;
}

// Gathers the pools visible from the node (dra.md §2.2): newest generation only, completeness
// counted cluster-wide, validity checked, sorted by (driver, pool) and slices by name.
std::vector<PoolData> GatherPools(const AllocatorInput& in) {
  // By pool id, which follows (driver, pool) order: the canonical pool order.
  std::map<size_t, std::pair<int64_t, std::vector<const IndexedSlice*>>> gathered;
  for (const IndexedSlice* entry : in.slices->Candidates(in.node->name)) {
    const ResourceSlice& s = entry->slice();
    if (!SliceRelevant(s, *in.node, in.features)) continue;
    auto& [generation, slices] = gathered[entry->pool_id()];
    if (slices.empty() || s.generation > generation) {
      generation = s.generation;
      slices = {entry};
    } else if (s.generation == generation) {
      slices.push_back(entry);
    }
  }
  std::vector<PoolData> pools;
  for (auto& [id, value] : gathered) {
    auto& [generation, slices] = value;
    PoolData pool{.driver = slices.front()->slice().driver, .name = slices.front()->slice().pool};
    int64_t wanted = slices.front()->slice().slice_count;
    pool.all_slices = slices;
    if (static_cast<int64_t>(slices.size()) != wanted) {
      // Locally short (checkSlicesInPool): the rest may target other nodes, or the pool may be
      // mid-update. Count the pool's slices of this generation everywhere; a newer generation
      // anywhere makes the pool obsolete. Counter-only slices come back this way too.
      const auto& everywhere = in.slices->PoolOf(*slices.front());
      bool obsolete = false;
      pool.all_slices.clear();
      for (const IndexedSlice* s : everywhere) {
        if (!in.features.partitionable_devices && (s->slice().per_device_node_selection || !s->slice().shared_counters.empty())) continue;
        if (s->slice().generation > generation) obsolete = true;
        if (s->slice().generation == generation) pool.all_slices.push_back(s);
      }
      if (obsolete) continue;
      pool.incomplete = static_cast<int64_t>(pool.all_slices.size()) != wanted;
    }
    for (const IndexedSlice* s : slices) {
      if (!s->slice().devices.empty()) pool.slices.push_back(s);
    }
    std::sort(pool.slices.begin(), pool.slices.end(),
              [](const IndexedSlice* a, const IndexedSlice* b) { return a->slice().name < b->slice().name; });
    // Validation: unique device names, unique counter sets, consumption of known counters.
    std::set<std::string> names;
    bool simple = pool.all_slices.size() == 1 && pool.all_slices[0]->slice().shared_counters.empty() &&
                  std::none_of(pool.all_slices[0]->slice().devices.begin(), pool.all_slices[0]->slice().devices.end(),
                               [](const Device& d) { return !d.consumes_counters.empty(); });
    for (const IndexedSlice* s : simple ? std::vector<const IndexedSlice*>{} : pool.all_slices) {
      for (const CounterSet& set : s->slice().shared_counters) {
        if (!pool.counter_sets.emplace(set.name, set.counters_milli).second && !pool.invalid) {
          pool.invalid = true;
          pool.invalid_reason = fmt::format("counter set {} is defined more than once", set.name);
        }
      }
    }
    // Device names must be unique among the slices for this node (one slice: API validation
    // guarantees it); counter references are checked across the whole pool.
    for (const IndexedSlice* s : pool.slices.size() > 1 ? pool.slices : std::vector<const IndexedSlice*>{}) {
      for (const Device& d : s->slice().devices) {
        if (!names.insert(d.name).second && !pool.invalid) {
          pool.invalid = true;
          pool.invalid_reason = fmt::format("duplicate device name {}", d.name);
        }
      }
    }
    for (const IndexedSlice* s : simple ? std::vector<const IndexedSlice*>{} : pool.all_slices) {
      for (const Device& d : s->slice().devices) {
        for (const CounterConsumption& c : d.consumes_counters) {
          auto set = pool.counter_sets.find(c.counter_set);
          for (const auto& [counter, unused] : c.counters_milli) {
            if ((set == pool.counter_sets.end() || !set->second.contains(counter)) && !pool.invalid) {
              pool.invalid = true;
              pool.invalid_reason = fmt::format("device {} consumes unknown counter {}/{}", d.name, c.counter_set, counter);
            }
          }
        }
      }
    }
    pools.push_back(std::move(pool));
  }
  return pools;
}

// ---------------------------------------------------------------------------------------------
// Requests.

struct RequestData {
  std::string name;  // "req" or "req/sub"
  const DeviceRequest* parent = nullptr;
  const ExactRequest* req = nullptr;
  bool is_sub = false;
  const DeviceClass* device_class = nullptr;
  std::vector<const cel::Program*> class_programs;    // null: did not compile (error below)
  std::vector<const cel::Program*> request_programs;
  std::vector<std::string> class_errors;
  std::vector<std::string> request_errors;
  bool all_mode = false;
  int64_t num_devices = 0;
  std::vector<size_t> all_devices;  // candidate indices, All mode
  bool admin = false;
};

struct ClaimData {
  const ResourceClaim* claim = nullptr;
  std::vector<std::vector<RequestData>> requests;  // [request][subrequest]; exactly: one entry
  std::vector<size_t> chosen_sub;                  // per request, once allocated
};

// One claim constraint with add/remove in LIFO order.
class Constraint {
 public:
  Constraint(const DeviceConstraint& c) : spec_(c) {}

  bool InScope(const RequestData& r) const {
    if (spec_.requests.empty()) return true;
    for (const std::string& name : spec_.requests) {
      if (name == r.name || (r.is_sub && name == r.parent->name)) return true;
    }
    return false;
  }

  const AttributeValue* Lookup(const Candidate& c) const {
    const std::string& key = spec_.match_attribute.empty() ? spec_.distinct_attribute : spec_.match_attribute;
    const auto& attrs = c.device->attributes;
    if (auto it = attrs.find(key); it != attrs.end()) return &it->second;
    size_t slash = key.find('/');
    if (slash != std::string::npos && key.substr(0, slash) == c.id.driver) {
      if (auto it = attrs.find(key.substr(slash + 1)); it != attrs.end()) return &it->second;
    }
    return nullptr;
  }

  bool Add(const RequestData& r, const Candidate& c) {
    if (!InScope(r)) {
      stack_.push_back(std::nullopt);
      return true;
    }
    const AttributeValue* v = Lookup(c);
    if (v == nullptr || v->kind == AttributeValue::Kind::kUnsupported) return false;
    for (const auto& held : stack_) {
      if (!held) continue;
      bool same = held->kind == v->kind && *held == *v;
      if (!spec_.match_attribute.empty() && !same) return false;
      if (!spec_.distinct_attribute.empty() && same) return false;
    }
    stack_.push_back(*v);
    return true;
  }

  void Remove() { stack_.pop_back(); }

 private:
  DeviceConstraint spec_;
  std::vector<std::optional<AttributeValue>> stack_;
};

std::string NewShareId() {
  static std::atomic<uint64_t> counter{0};
  uint64_t n = ++counter;
  return fmt::format("00000000-0000-4000-8000-{:012x}", n & 0xFFFFFFFFFFFFull);
}

enum class Result { kSuccess, kFail, kMaxSize, kError, kBound };

class Search {
 public:
  Search(const AllocatorInput& in, const NodePools& pools)
      : in_(in), np_(pools), pools_(pools.pools), candidates_(pools.candidates) {}

  AllocatorOutcome Run() {
    AllocatorOutcome out;
    out.invalid_pools = np_.invalid_pools;
    available_.resize(pools_.size());
    allocating_.assign(candidates_.size(), {});
    capacity_allocating_.assign(candidates_.size(), {});
    shares_.assign(candidates_.size(), 0);
    Status prepared = Prepare();
    if (!prepared.ok()) {
      out.kind = AllocatorOutcome::Kind::kError;
      out.reason = std::string(prepared.message());
      return out;
    }
    results_.assign(claims_.size(), {});
    result_cands_.assign(claims_.size(), {});
    for (const ClaimData& c : claims_) {
      std::vector<Constraint> cs;
      for (const DeviceConstraint& dc : c.claim->constraints) cs.emplace_back(dc);
      constraints_.push_back(std::move(cs));
    }
    Result r = AllocateOne(0, 0, 0, 0, false, 0);
    out.steps = steps_;
    switch (r) {
      case Result::kSuccess:
        out.kind = AllocatorOutcome::Kind::kAllocated;
        if (in_.want_results) {
          for (size_t c = 0; c < claims_.size(); ++c) out.results.push_back(BuildResult(c));
        }
        for (const std::vector<size_t>& cands : result_cands_) {
          for (size_t i : cands) out.drivers.insert(candidates_[i].slice->slice().driver);
        }
        return out;
      case Result::kError:
        out.kind = AllocatorOutcome::Kind::kError;
        out.reason = error_;
        return out;
      case Result::kBound:
        out.kind = AllocatorOutcome::Kind::kUnschedulable;
        out.reason = fmt::format("gave up after {} allocation steps (the search bound); no device set found yet", steps_);
        return out;
      default:
        out.kind = AllocatorOutcome::Kind::kUnschedulable;
        out.reason = Diagnose();
        if (out.invalid_pools) out.reason += "; invalid resource pools were encountered";
        return out;
    }
  }

 private:
  // The program of `expr` from the caller's memo (by the string's address), or nullptr.
  const cel::Program* Compiled(const std::string& expr) const {
    if (in_.compiled == nullptr) return nullptr;
    auto it = in_.compiled->find(&expr);
    return it == in_.compiled->end() ? nullptr : it->second;
  }

  Status CheckRequest(const ClaimData& cd, const ExactRequest& r, const std::string& name, bool is_sub, RequestData* rd) {
    const ResourceClaim& claim = *cd.claim;
    auto where = [&] { return fmt::format("claim {}/{}, request {}", claim.namespace_name, claim.name, name); };
    if (!r.capacity_requests_milli.empty() && !in_.features.consumable_capacity) {
      return InvalidArgumentError(where() + ": capacity requests need the DRAConsumableCapacity feature");
    }
    if (r.admin_access && !in_.features.admin_access) {
      return InvalidArgumentError(where() + ": adminAccess needs the DRAAdminAccess feature");
    }
    if (r.admin_access.value_or(false) && in_.admin_namespaces != nullptr && !in_.admin_namespaces->contains(claim.namespace_name)) {
      return InvalidArgumentError(fmt::format("{}: adminAccess requires namespace {} to be labelled "
                                              "resource.kubernetes.io/admin-access=true",
                                              where(), claim.namespace_name));
    }
    if (r.device_class.empty()) return InvalidArgumentError(where() + ": deviceClassName is empty");
    auto cls = in_.classes->find(r.device_class);
    if (cls == in_.classes->end()) {
      return NotFoundError(fmt::format("{}: could not retrieve device class {}", where(), r.device_class));
    }
    rd->device_class = &cls->second;
    for (size_t i = 0; i < cls->second.selectors.size(); ++i) {
      const std::string& expr = cls->second.selectors[i];
      if (expr.empty()) return InvalidArgumentError(fmt::format("class {}: selector #{}: CEL expression empty (unsupported selector type?)", r.device_class, i));
      if (const cel::Program* known = Compiled(expr)) {
        rd->class_programs.push_back(known);
        rd->class_errors.emplace_back();
        continue;
      }
      StatusOr<cel::ProgramPtr> p = in_.programs->Get(expr);
      // A selector that does not compile fails when the search first tests a device with it,
      // as upstream's does (never, if no device gets that far).
      rd->class_programs.push_back(p.ok() ? p->get() : nullptr);
      rd->class_errors.push_back(p.ok() ? "" : fmt::format("class {}: selector #{}: CEL compile error: {}", r.device_class, i,
                                                          p.status().message()));
    }
    for (size_t i = 0; i < r.selectors.size(); ++i) {
      const std::string& expr = r.selectors[i];
      if (expr.empty()) return InvalidArgumentError(fmt::format("{}: selector #{}: CEL expression empty (unsupported selector type?)", where(), i));
      if (const cel::Program* known = Compiled(expr)) {
        rd->request_programs.push_back(known);
        rd->request_errors.emplace_back();
        continue;
      }
      StatusOr<cel::ProgramPtr> p = in_.programs->Get(expr);
      rd->request_programs.push_back(p.ok() ? p->get() : nullptr);
      rd->request_errors.push_back(p.ok() ? "" : fmt::format("claim {}/{}: selector #{}: CEL compile error: {}", claim.namespace_name,
                                                            claim.name, i, p.status().message()));
    }
    rd->req = &r;
    rd->name = name;
    rd->is_sub = is_sub;
    rd->admin = r.admin_access.value_or(false);
    if (r.allocation_mode == "ExactCount") {
      if (r.count <= 0) return InvalidArgumentError(fmt::format("{}: count {} must be positive", where(), r.count));
      rd->num_devices = r.count;
    } else if (r.allocation_mode == "All") {
      rd->all_mode = true;
    } else {
      return InvalidArgumentError(fmt::format("{}: unsupported count mode {}", where(), r.allocation_mode));
    }
    return OkStatus();
  }

  Status Prepare() {
    for (size_t c = 0; c < in_.claims.size(); ++c) {
      const ResourceClaim& claim = *in_.claims[c];
      ClaimData cd{.claim = &claim};
      int64_t min_devices = 0;
      for (const DeviceRequest& req : claim.requests) {
        std::vector<RequestData> alternatives;
        if (req.exactly) {
          RequestData rd{.parent = &req};
          GPUSCHED_RETURN_IF_ERROR(CheckRequest(cd, *req.exactly, req.name, false, &rd));
          alternatives.push_back(std::move(rd));
        } else if (!req.first_available.empty()) {
          if (!in_.features.prioritized_list) {
            return InvalidArgumentError(fmt::format("claim {}/{}, request {}: has subrequests, but the DRAPrioritizedList feature is disabled",
                                                    claim.namespace_name, claim.name, req.name));
          }
          for (const ExactRequest& sub : req.first_available) {
            RequestData rd{.parent = &req};
            GPUSCHED_RETURN_IF_ERROR(CheckRequest(cd, sub, req.name + "/" + sub.name, true, &rd));
            alternatives.push_back(std::move(rd));
          }
        } else {
          return InvalidArgumentError(fmt::format("claim {}/{}, request {}: neither exactly nor firstAvailable is set",
                                                  claim.namespace_name, claim.name, req.name));
        }
        int64_t least = -1;
        for (RequestData& rd : alternatives) {
          if (rd.all_mode) {
            for (size_t p = 0; p < pools_.size(); ++p) {
              const PoolData& pool = pools_[p];
              if (pool.incomplete) {
                return InvalidArgumentError(fmt::format("claim {}/{}, request {}: asks for all devices, but resource pool {}/{} is currently being updated",
                                                        claim.namespace_name, claim.name, rd.name, pool.driver, pool.name));
              }
              if (pool.invalid) {
                return InvalidArgumentError(fmt::format("claim {}/{}, request {}: asks for all devices, but resource pool {}/{} is currently invalid",
                                                        claim.namespace_name, claim.name, rd.name, pool.driver, pool.name));
              }
            }
            for (size_t i = 0; i < candidates_.size(); ++i) {
              StatusOr<bool> ok = Selectable(cd, rd, i);
              if (!ok.ok()) return ok.status();
              if (*ok && StaticCapacityFits(rd, candidates_[i])) rd.all_devices.push_back(i);
            }
            rd.num_devices = static_cast<int64_t>(rd.all_devices.size());
          }
          least = least < 0 ? rd.num_devices : std::min(least, rd.num_devices);
        }
        min_devices += std::max<int64_t>(least, 0);
        cd.requests.push_back(std::move(alternatives));
      }
      if (min_devices > kMaxResults) {
        return InvalidArgumentError(fmt::format("claim {}/{}: number of requested devices {} exceeds the claim limit of {}",
                                                claim.namespace_name, claim.name, min_devices, kMaxResults));
      }
      for (const DeviceConstraint& dc : claim.constraints) {
        if (dc.match_attribute.empty() && dc.distinct_attribute.empty()) {
          return InvalidArgumentError(fmt::format("claim {}/{}: empty constraint (unsupported constraint type?)",
                                                  claim.namespace_name, claim.name));
        }
      }
      cd.chosen_sub.assign(cd.requests.size(), 0);
      claims_.push_back(std::move(cd));
    }
    return OkStatus();
  }

  // The verdict of one selector on one candidate, from the slice's cache.
  StatusOr<bool> Verdict(const cel::Program* program, const Candidate& c) {
    IndexedSlice::Verdicts* v = c.slice->VerdictsFor(program);
    uint8_t state = v->state[c.index].load(std::memory_order_acquire);
    if (state == 0) {
      StatusOr<bool> r = cel::Evaluate(*program, cel::DeviceView{.driver = c.id.driver, .device = c.device});
      if (r.ok()) {
        state = *r ? 1 : 2;
      } else {
        MutexLock lock(&v->mu);
        v->errors.emplace(c.index, std::string(r.status().message()));
        state = 3;
      }
      v->state[c.index].store(state, std::memory_order_release);
    }
    if (state == 3) {
      MutexLock lock(&v->mu);
      return InvalidArgumentError(v->errors.at(c.index));
    }
    return state == 1;
  }

  // isSelectable: class selectors, then request selectors (stopping at the first false), then
  // per-device node selection. Errors name the class or claim and the selector.
  StatusOr<bool> Selectable(const ClaimData& cd, const RequestData& rd, size_t i) {
    const Candidate& c = candidates_[i];
    if (!c.device->binding_conditions.empty() && !in_.features.binding_conditions) return false;
    for (size_t k = 0; k < rd.class_programs.size(); ++k) {
      if (rd.class_programs[k] == nullptr) return InvalidArgumentError(rd.class_errors[k]);
      StatusOr<bool> v = Verdict(rd.class_programs[k], c);
      if (!v.ok()) {
        return InvalidArgumentError(fmt::format("class {}: selector #{}: CEL runtime error: {}", rd.device_class->name, k,
                                                v.status().message()));
      }
      if (!*v) return false;
    }
    for (size_t k = 0; k < rd.request_programs.size(); ++k) {
      if (rd.request_programs[k] == nullptr) return InvalidArgumentError(rd.request_errors[k]);
      StatusOr<bool> v = Verdict(rd.request_programs[k], c);
      if (!v.ok()) {
        return InvalidArgumentError(fmt::format("claim {}/{}: selector #{}: CEL runtime error: {}", cd.claim->namespace_name,
                                                cd.claim->name, k, v.status().message()));
      }
      if (!*v) return false;
    }
    if (c.slice->slice().per_device_node_selection && !DeviceNodeMatches(*c.device, *in_.node)) return false;
    return true;
  }

  // Devices without allowMultipleAllocations: capacity requests are a filter.
  // The request's capacities fit the device's static capacity, after the request policy's
  // rounding (CmpRequestOverCapacity); a request the policy forbids does not fit.
  bool StaticCapacityFits(const RequestData& rd, const Candidate& c) const {
    for (const auto& [name, milli] : rd.req->capacity_requests_milli) {
      auto it = c.device->capacity.find(name);
      if (it == c.device->capacity.end()) return false;
      std::optional<int64_t> want = Consumed(it->second, milli);
      if (!want || *want > it->second.value_milli) return false;
    }
    return true;
  }

  // The amount a shared device's capacity `cap` gives to a request for `requested` (nullopt: none
  // can, the policy forbids it).
  static std::optional<int64_t> Consumed(const Capacity& cap, std::optional<int64_t> requested) {
    const RequestPolicy& p = cap.policy;
    int64_t want = requested ? *requested : p.default_milli ? *p.default_milli : cap.value_milli;
    if (p.default_milli && want == *p.default_milli) return want;
    if (p.range_min_milli) {
      if (want < *p.range_min_milli) want = *p.range_min_milli;
      if (p.range_step_milli && *p.range_step_milli > 0) {
        int64_t over = want - *p.range_min_milli;
        int64_t steps = (over + *p.range_step_milli - 1) / *p.range_step_milli;
        want = *p.range_min_milli + steps * *p.range_step_milli;
      }
      if (p.range_max_milli && want > *p.range_max_milli) return std::nullopt;
    } else if (!p.valid_values_milli.empty()) {
      auto it = std::lower_bound(p.valid_values_milli.begin(), p.valid_values_milli.end(), want);
      if (it == p.valid_values_milli.end()) return std::nullopt;
      want = *it;
    }
    return want;
  }

  // What the cluster's allocated claims hold of candidate `i` (IndexedSlice::kHeld* bits).
  uint8_t Held(size_t i) const {
    const Candidate& c = candidates_[i];
    if (const std::vector<uint8_t>* marks = c.slice->HeldBy(in_.allocated)) return (*marks)[c.index];
    uint8_t held = in_.allocated->exclusive.contains(c.id) ? IndexedSlice::kHeldExclusive : 0;
    if (in_.allocated->shared.contains(c.id) || in_.allocated->consumed_capacity_milli.contains(c.id)) {
      held |= IndexedSlice::kHeldShared;
    }
    return held;
  }

  bool InUse(const RequestData& rd, size_t c_index, size_t i) const {
    const Candidate& c = candidates_[i];
    bool multi = c.device->allow_multiple_allocations && in_.features.consumable_capacity;
    if (rd.admin) {
      // Only this claim's own use counts; multi-allocation devices never enter allocating_.
      return !multi && std::find(allocating_[i].begin(), allocating_[i].end(), c_index) != allocating_[i].end();
    }
    if (multi) return (Held(i) & IndexedSlice::kHeldExclusive) != 0;
    return Held(i) != 0 || !allocating_[i].empty();
  }

  const std::map<std::string, std::map<std::string, int64_t>>& Available(size_t p) {
    const PoolData& pool = pools_[p];
    if (!available_[p]) {
      auto avail = pool.counter_sets;
      for (const IndexedSlice* s : pool.all_slices) {
        for (const Device& d : s->slice().devices) {
          if (!in_.allocated->Holds(DeviceId{std::string(pool.driver), std::string(pool.name), d.name})) continue;
          for (const CounterConsumption& cc : d.consumes_counters) {
            for (const auto& [counter, milli] : cc.counters_milli) avail[cc.counter_set][counter] -= milli;
          }
        }
      }
      available_[p] = std::move(avail);
    }
    return *available_[p];
  }

  struct Undo {
    bool counters = false;
    bool allocating = false;
    size_t constraints_added = 0;
    bool capacity = false;
    std::map<std::string, int64_t> consumed;
  };

  // allocateDevice (dra.md §2.4). Returns false with no trace if the device cannot join; a hard
  // error sets error_ and returns false with *failed set.
  bool AllocateDevice(size_t c, const RequestData& rd, size_t i, bool must, Undo* undo, bool* failed) {
    const Candidate& cand = candidates_[i];
    const Device& d = *cand.device;
    bool multi = d.allow_multiple_allocations && in_.features.consumable_capacity;
    if (InUse(rd, c, i)) return false;
    if (!d.consumes_counters.empty() && !in_.features.partitionable_devices) return false;
    // Counters.
    // A shared device's counters are consumed once, by its first share (in the cluster or here).
    bool partially_consumed = multi && ((Held(i) & IndexedSlice::kHeldShared) != 0 || shares_[i] > 0);
    if (!d.consumes_counters.empty() && !partially_consumed) {
      auto& consumed = consumed_counters_[cand.pool];
      for (const CounterConsumption& cc : d.consumes_counters) {
        for (const auto& [counter, milli] : cc.counters_milli) consumed[cc.counter_set][counter] += milli;
      }
      undo->counters = true;
      // Every counter of every set of the pool: one over-committed set blocks the pool.
      const auto& available = Available(cand.pool);
      bool fits = true;
      for (const auto& [set, counters] : available) {
        auto used_set = consumed.find(set);
        for (const auto& [counter, have] : counters) {
          int64_t milli = 0;
          if (used_set != consumed.end()) {
            auto it = used_set->second.find(counter);
            if (it != used_set->second.end()) milli = it->second;
          }
          if (milli > have) fits = false;
        }
      }
      if (!fits) {
        ReleaseCounters(cand);
        undo->counters = false;
        return false;
      }
    }
    auto reject = [&] {
      RollBack(c, i, undo);
      return false;
    };
    // Taints.
    if (in_.features.device_taints) {
      for (const DeviceTaint& t : d.taints) {
        if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
        bool tolerated = std::any_of(rd.req->tolerations.begin(), rd.req->tolerations.end(),
                                     [&](const DeviceToleration& tol) { return ToleratesTaint(tol, t); });
        if (!tolerated) return reject();
      }
    }
    // Constraints.
    for (Constraint& k : constraints_[c]) {
      if (!k.Add(rd, cand)) {
        if (must) {
          RollBack(c, i, undo);
          error_ = fmt::format("claim {}/{}, request {}: cannot add device {}/{}/{} because a claim constraint would not be satisfied",
                               claims_[c].claim->namespace_name, claims_[c].claim->name, rd.name, cand.id.driver,
                               cand.id.pool, cand.id.device);
          *failed = true;
          return false;
        }
        return reject();
      }
      ++undo->constraints_added;
    }
    // Capacity.
    if (multi) {
      for (const auto& [name, unused] : rd.req->capacity_requests_milli) {
        if (!d.capacity.contains(name)) return reject();
      }
      for (const auto& [name, cap] : d.capacity) {
        auto req = rd.req->capacity_requests_milli.find(name);
        std::optional<int64_t> want =
            Consumed(cap, req == rd.req->capacity_requests_milli.end() ? std::nullopt : std::optional<int64_t>(req->second));
        if (!want) return reject();
        int64_t held = 0;
        if (auto a = in_.allocated->consumed_capacity_milli.find(cand.id); a != in_.allocated->consumed_capacity_milli.end()) {
          if (auto it = a->second.find(name); it != a->second.end()) held = it->second;
        }
        if (auto it = capacity_allocating_[i].find(name); it != capacity_allocating_[i].end()) held += it->second;
        if (held + *want > cap.value_milli) return reject();
        undo->consumed[name] = *want;
      }
      for (const auto& [name, milli] : undo->consumed) capacity_allocating_[i][name] += milli;
      ++shares_[i];
      undo->capacity = true;
    } else if (!StaticCapacityFits(rd, cand)) {
      return reject();
    } else {
      allocating_[i].push_back(c);
      undo->allocating = true;
    }
    if (in_.want_results) {
      DeviceResult r{.request = rd.name, .id = cand.id, .admin_access = rd.admin, .tolerations = rd.req->tolerations};
      if (in_.features.binding_conditions) {
        r.binding_conditions = d.binding_conditions;
        r.binding_failure_conditions = d.binding_failure_conditions;
      }
      if (multi) {
        r.share_id = in_.new_share_id ? in_.new_share_id() : NewShareId();
        r.consumed_capacity_milli = undo->consumed;
      }
      results_[c].push_back(std::move(r));
    }
    result_cands_[c].push_back(i);
    return true;
  }

  void ReleaseCounters(const Candidate& cand) {
    auto& consumed = consumed_counters_[cand.pool];
    for (const CounterConsumption& cc : cand.device->consumes_counters) {
      for (const auto& [counter, milli] : cc.counters_milli) consumed[cc.counter_set][counter] -= milli;
    }
  }

  void RollBack(size_t c, size_t i, Undo* undo) {
    if (undo->counters) ReleaseCounters(candidates_[i]);
    for (size_t k = undo->constraints_added; k > 0; --k) constraints_[c][k - 1].Remove();
    if (undo->allocating) allocating_[i].pop_back();
    if (undo->capacity) {
      for (const auto& [name, milli] : undo->consumed) capacity_allocating_[i][name] -= milli;
      std::erase_if(capacity_allocating_[i], [](const auto& kv) { return kv.second == 0; });
      --shares_[i];
    }
    *undo = Undo{};
  }

  void Deallocate(size_t c, size_t i, Undo* undo) {
    if (in_.want_results) results_[c].pop_back();
    result_cands_[c].pop_back();
    RollBack(c, i, undo);
  }

  Result AllocateOne(size_t c, size_t r, size_t s, int64_t k, bool allocate_sub, size_t start) {
    ++steps_;
    if (steps_ > in_.max_steps) return Result::kBound;
    if (c == claims_.size()) return Result::kSuccess;
    ClaimData& cd = claims_[c];
    if (r == cd.requests.size()) {
      Result res = AllocateOne(c + 1, 0, 0, 0, false, 0);
      return res == Result::kMaxSize ? Result::kFail : res;
    }
    std::vector<RequestData>& alternatives = cd.requests[r];
    if (alternatives.front().is_sub && !allocate_sub) {
      bool all_exceeded = true;
      for (size_t sub = 0; sub < alternatives.size(); ++sub) {
        Result res = AllocateOne(c, r, sub, 0, true, 0);
        if (res == Result::kMaxSize) continue;
        all_exceeded = false;
        if (res == Result::kSuccess) {
          cd.chosen_sub[r] = sub;
          return res;
        }
        if (res != Result::kFail) return res;
      }
      return all_exceeded ? Result::kMaxSize : Result::kFail;
    }
    const RequestData& rd = alternatives[s];
    if (rd.all_mode && rd.all_devices.empty()) return Result::kFail;
    if (k >= rd.num_devices) {
      Result res = AllocateOne(c, r + 1, 0, 0, false, 0);
      if (res == Result::kSuccess && rd.is_sub) cd.chosen_sub[r] = s;
      return res;
    }
    if (static_cast<int64_t>(result_cands_[c].size()) + rd.num_devices - k > kMaxResults) return Result::kMaxSize;
    if (rd.all_mode) {
      size_t i = rd.all_devices[static_cast<size_t>(k)];
      Undo undo;
      bool failed = false;
      if (!AllocateDevice(c, rd, i, /*must=*/true, &undo, &failed)) return failed ? Result::kError : Result::kFail;
      Result res = AllocateOne(c, r, s, k + 1, allocate_sub, 0);
      if (res != Result::kSuccess) Deallocate(c, i, &undo);
      return res;
    }
    for (size_t i = start; i < candidates_.size(); ++i) {
      if (InUse(rd, c, i)) continue;
      StatusOr<bool> selectable = Selectable(cd, rd, i);
      if (!selectable.ok()) {
        error_ = std::string(selectable.status().message());
        return Result::kError;
      }
      if (!*selectable) continue;
      Undo undo;
      bool failed = false;
      if (!AllocateDevice(c, rd, i, /*must=*/false, &undo, &failed)) {
        if (failed) return Result::kError;
        continue;
      }
      Result res = AllocateOne(c, r, s, k + 1, allocate_sub, i + 1);
      if (res == Result::kSuccess) return res;
      Deallocate(c, i, &undo);
      if (res != Result::kFail) return res;
    }
    return Result::kFail;
  }

  AllocationResult BuildResult(size_t c) const {
    const ClaimData& cd = claims_[c];
    AllocationResult out;
    out.results = results_[c];
    // Configs (Kubernetes ≤ 1.36): class configs once per class, listing the requests using it;
    // then the claim's configs.
    std::vector<std::pair<const DeviceClass*, std::vector<std::string>>> by_class;
    std::vector<std::string> chosen_names;
    for (size_t r = 0; r < cd.requests.size(); ++r) {
      const RequestData& rd = cd.requests[r][cd.requests[r].front().is_sub ? cd.chosen_sub[r] : 0];
      chosen_names.push_back(rd.name);
      auto it = std::find_if(by_class.begin(), by_class.end(), [&](const auto& e) { return e.first == rd.device_class; });
      if (it == by_class.end()) {
        by_class.emplace_back(rd.device_class, std::vector<std::string>{rd.name});
      } else {
        it->second.push_back(rd.name);
      }
    }
    for (const auto& [cls, requests] : by_class) {
      for (const OpaqueConfig& config : cls->configs) {
        out.config.push_back(ResultConfig{.source = "FromClass", .requests = requests, .opaque = config});
      }
    }
    for (const ClaimConfig& config : cd.claim->configs) {
      if (config.requests.empty()) {
        out.config.push_back(ResultConfig{.source = "FromClaim", .requests = {}, .opaque = config.opaque});
        continue;
      }
      for (size_t r = 0; r < cd.requests.size(); ++r) {
        const std::string& parent = cd.claim->requests[r].name;
        bool named = std::find(config.requests.begin(), config.requests.end(), parent) != config.requests.end() ||
                     (chosen_names[r] != parent &&
                      std::find(config.requests.begin(), config.requests.end(), chosen_names[r]) != config.requests.end());
        if (named) out.config.push_back(ResultConfig{.source = "FromClaim", .requests = config.requests, .opaque = config.opaque});
      }
    }
    // nodeSelector: pinned to the node if any device is node-local, else the union of the
    // slices' and devices' single-term selectors, else none.
    bool local = false;
    NodeSelectorTerm merged;
    bool any_selector = false;
    auto merge = [](std::vector<NodeSelectorRequirement>* into, const std::vector<NodeSelectorRequirement>& from) {
      for (const NodeSelectorRequirement& r : from) {
        if (std::find(into->begin(), into->end(), r) == into->end()) into->push_back(r);
      }
    };
    for (size_t k = 0; k < out.results.size(); ++k) {
      const Candidate* cand = &candidates_[result_cands_[c][k]];
      const ResourceSlice& s = cand->slice->slice();
      const Device& d = *cand->device;
      const std::optional<NodeSelector>* sel = nullptr;
      if (s.per_device_node_selection) {
        if (!d.node_name.empty()) local = true;
        sel = &d.node_selector;
      } else {
        if (!s.node_name.empty()) local = true;
        sel = &s.node_selector;
      }
      if (d.binds_to_node) local = true;
      if (*sel && !(*sel)->terms.empty()) {
        any_selector = true;
        merge(&merged.match_expressions, (*sel)->terms[0].match_expressions);
        merge(&merged.match_fields, (*sel)->terms[0].match_fields);
      }
    }
    if (local) {
      out.node_selector = LocalNode(in_.node->name);
    } else if (any_selector) {
      out.node_selector = NodeSelector{.terms = {std::move(merged)}};
    }
    return out;
  }

  // Why no device set was found: the first request that lacks devices on its own, counted as the
  // allocator sees them, or else the claim's combination rules.
  std::string Diagnose() {
    if (candidates_.empty() && !claims_.empty()) {
      return fmt::format("claim {}/{}: no ResourceSlice offers devices on this node", claims_[0].claim->namespace_name,
                         claims_[0].claim->name);
    }
    for (ClaimData& cd : claims_) {
      for (size_t r = 0; r < cd.requests.size(); ++r) {
        std::vector<std::string> why;
        bool short_alone = true;
        for (const RequestData& rd : cd.requests[r]) {
          int64_t matching = 0, free = 0, usable = 0;
          for (size_t i = 0; i < candidates_.size(); ++i) {
            StatusOr<bool> ok = Selectable(cd, rd, i);
            if (!ok.ok() || !*ok) continue;
            ++matching;
            const Candidate& c = candidates_[i];
            bool multi = c.device->allow_multiple_allocations && in_.features.consumable_capacity;
            if (rd.admin ? false : multi ? (Held(i) & IndexedSlice::kHeldExclusive) != 0 : Held(i) != 0) continue;
            ++free;
            bool blocked = false;
            if (in_.features.device_taints) {
              for (const DeviceTaint& t : c.device->taints) {
                if (t.effect != "NoSchedule" && t.effect != "NoExecute") continue;
                if (std::none_of(rd.req->tolerations.begin(), rd.req->tolerations.end(),
                                 [&](const DeviceToleration& tol) { return ToleratesTaint(tol, t); })) {
                  blocked = true;
                }
              }
            }
            if (!blocked && StaticCapacityFits(rd, c)) ++usable;
          }
          int64_t need = rd.all_mode ? std::max<int64_t>(rd.num_devices, 1) : rd.num_devices;
          if (rd.all_mode && rd.num_devices > 0) {
            if (free == matching) short_alone = false;
          } else if (usable >= need) {
            short_alone = false;
          }
          std::string selectors = rd.req->selectors.empty() ? "" : fmt::format(" and {} selector{}", rd.req->selectors.size(),
                                                                               rd.req->selectors.size() == 1 ? "" : "s");
          if (rd.all_mode) {
            why.push_back(fmt::format("request {}: wants all {} devices of class {}{}, {} of them are free", rd.name, matching,
                                      rd.device_class->name, selectors, free));
          } else {
            why.push_back(fmt::format("request {}: {} of {} device{} available ({} of {} devices match class {}{}, {} of those "
                                      "free{})",
                                      rd.name, usable, need, need == 1 ? "" : "s", matching, candidates_.size(),
                                      rd.device_class->name, selectors, free,
                                      usable < free ? ", the others tainted or short of capacity" : ""));
          }
        }
        if (short_alone) {
          return fmt::format("claim {}/{}: {}", cd.claim->namespace_name, cd.claim->name, fmt::join(why, "; or "));
        }
      }
    }
    std::vector<std::string> rules;
    for (const ClaimData& cd : claims_) {
      for (const DeviceConstraint& k : cd.claim->constraints) {
        rules.push_back(k.match_attribute.empty() ? "distinctAttribute " + k.distinct_attribute : "matchAttribute " + k.match_attribute);
      }
    }
    bool counters = std::any_of(candidates_.begin(), candidates_.end(), [](const Candidate& c) { return !c.device->consumes_counters.empty(); });
    if (counters) rules.push_back("shared counters");
    if (claims_.size() > 1 || std::any_of(claims_.begin(), claims_.end(), [](const ClaimData& cd) { return cd.requests.size() > 1; })) {
      rules.push_back("distinct devices across requests");
    }
    return fmt::format("every request has enough devices on its own, but no combination satisfies {}",
                       rules.empty() ? "the claims together" : fmt::format("{}", fmt::join(rules, ", ")));
  }

  static constexpr int64_t kMaxResults = 32;

  const AllocatorInput& in_;
  const NodePools& np_;
  const std::vector<PoolData>& pools_;
  const std::vector<Candidate>& candidates_;
  std::vector<std::optional<std::map<std::string, std::map<std::string, int64_t>>>> available_;  // lazily, per pool
  std::vector<std::vector<size_t>> result_cands_;  // per claim: the candidate of each result
  std::vector<ClaimData> claims_;
  std::vector<std::vector<Constraint>> constraints_;
  std::vector<std::vector<DeviceResult>> results_;
  std::vector<std::vector<size_t>> allocating_;  // claim indices per candidate
  std::vector<std::map<std::string, int64_t>> capacity_allocating_;
  std::vector<int> shares_;  // per candidate: shares allocated in this attempt
  std::map<size_t, std::map<std::string, std::map<std::string, int64_t>>> consumed_counters_;
  int64_t steps_ = 0;
  std::string error_;
};

}  // namespace

NodePoolsPtr GatherNodePools(const SliceIndex& slices, const NodeInfo& node, const Features& features) {
  AllocatorInput in{.node = &node, .slices = &slices, .features = features};
  auto out = std::make_shared<NodePools>();
  out->pools = GatherPools(in);
  if (features.binding_conditions) {
    // Pools with devices that have binding conditions go after all others (incubating, 1.36).
    std::stable_partition(out->pools.begin(), out->pools.end(), [](const PoolData& p) {
      return std::none_of(p.slices.begin(), p.slices.end(), [](const IndexedSlice* s) {
        return std::any_of(s->slice().devices.begin(), s->slice().devices.end(),
                           [](const Device& d) { return !d.binding_conditions.empty(); });
      });
    });
  }
  for (size_t p = 0; p < out->pools.size(); ++p) {
    const PoolData& pool = out->pools[p];
    if (pool.invalid) out->invalid_pools = true;
    if (pool.invalid || pool.incomplete) continue;
    for (const IndexedSlice* s : pool.slices) {
      for (size_t i = 0; i < s->slice().devices.size(); ++i) {
        const Device& d = s->slice().devices[i];
        out->candidates.push_back(Candidate{.pool = p, .slice = s, .index = i, .device = &d,
                                            .id = DeviceId{s->slice().driver, s->slice().pool, d.name}});
      }
    }
  }
  return out;
}

AllocatorOutcome Allocate(const AllocatorInput& input) {
  NodePoolsPtr gathered;
  const NodePools* pools = input.pools;
  if (pools == nullptr) {
    gathered = GatherNodePools(*input.slices, *input.node, input.features);
    pools = gathered.get();
  }
  Search search(input, *pools);
  return search.Run();
}

}  // namespace gpusched::dra
