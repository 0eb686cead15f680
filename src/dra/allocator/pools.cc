// File: pools.cc
//
// What a node sees: the relevant slices' newest generation per pool, completeness against
// resourceSliceCount, pool validation (duplicate devices, counter sets, unknown counters), pools
// with binding conditions last, and the candidates of the usable pools.
#include "gpusched/dra/allocator/pools.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "gpusched/dra/allocator.h"

namespace gpusched::dra {
namespace {

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

// The newest generation of each pool among the slices relevant to `node`, by pool id (which
// follows (driver, pool) order: the canonical pool order).
std::map<size_t, std::pair<int64_t, std::vector<const IndexedSlice*>>> NewestRelevant(const SliceIndex& index, const NodeInfo& node,
                                                                                    const Features& features) {
  std::map<size_t, std::pair<int64_t, std::vector<const IndexedSlice*>>> gathered;
  for (const IndexedSlice* entry : index.Candidates(node.name)) {
    const ResourceSlice& s = entry->slice();
    if (!SliceRelevant(s, node, features)) continue;
    auto& [generation, slices] = gathered[entry->pool_id()];
    if (slices.empty() || s.generation > generation) {
      generation = s.generation;
      slices = {entry};
    } else if (s.generation == generation) {
      slices.push_back(entry);
    }
  }
  return gathered;
}

void MarkInvalid(PoolData* pool, std::string reason) {
  if (pool->invalid) return;  // the first problem is the one reported
  pool->invalid = true;
  pool->invalid_reason = std::move(reason);
}

// Validation: unique counter sets and consumption of known counters across the whole pool;
// unique device names among the slices for this node (one slice: API validation guarantees it).
void Validate(PoolData* pool) {
  const std::vector<const IndexedSlice*>& all = pool->all_slices;
  bool simple = all.size() == 1 && all[0]->slice().shared_counters.empty() &&
                std::none_of(all[0]->slice().devices.begin(), all[0]->slice().devices.end(),
                             [](const Device& d) { return !d.consumes_counters.empty(); });
  for (const IndexedSlice* s : simple ? std::vector<const IndexedSlice*>{} : all) {
    for (const CounterSet& set : s->slice().shared_counters) {
      if (!pool->counter_sets.emplace(set.name, set.counters_milli).second) {
        MarkInvalid(pool, fmt::format("counter set {} is defined more than once", set.name));
      }
    }
  }
  std::set<std::string> names;
  for (const IndexedSlice* s : pool->slices.size() > 1 ? pool->slices : std::vector<const IndexedSlice*>{}) {
    for (const Device& d : s->slice().devices) {
      if (!names.insert(d.name).second) MarkInvalid(pool, fmt::format("duplicate device name {}", d.name));
    }
  }
  for (const IndexedSlice* s : simple ? std::vector<const IndexedSlice*>{} : all) {
    for (const Device& d : s->slice().devices) {
      for (const CounterConsumption& c : d.consumes_counters) {
        auto set = pool->counter_sets.find(c.counter_set);
        for (const auto& [counter, unused] : c.counters_milli) {
          if (set == pool->counter_sets.end() || !set->second.contains(counter)) {
            MarkInvalid(pool, fmt::format("device {} consumes unknown counter {}/{}", d.name, c.counter_set, counter));
          }
        }
      }
    }
  }
}

// The pool of `slices` (its newest generation seen from the node), or nullopt if a newer
// generation exists elsewhere.
std::optional<PoolData> MakePool(const SliceIndex& index, const Features& features, int64_t generation,
                                 const std::vector<const IndexedSlice*>& slices) {
  PoolData pool{.driver = slices.front()->slice().driver, .name = slices.front()->slice().pool};
  int64_t wanted = slices.front()->slice().slice_count;
  pool.all_slices = slices;
  if (static_cast<int64_t>(slices.size()) != wanted) {
    // Locally short (checkSlicesInPool): the rest may target other nodes, or the pool may be
    // mid-update. Count the pool's slices of this generation everywhere; a newer generation
    // anywhere makes the pool obsolete. Counter-only slices come back this way too.
    pool.all_slices.clear();
    for (const IndexedSlice* s : index.PoolOf(*slices.front())) {
      if (!features.partitionable_devices && (s->slice().per_device_node_selection || !s->slice().shared_counters.empty())) continue;
      if (s->slice().generation > generation) return std::nullopt;
      if (s->slice().generation == generation) pool.all_slices.push_back(s);
    }
    pool.incomplete = static_cast<int64_t>(pool.all_slices.size()) != wanted;
  }
  for (const IndexedSlice* s : slices) {
    if (!s->slice().devices.empty()) pool.slices.push_back(s);
  }
  std::sort(pool.slices.begin(), pool.slices.end(),
            [](const IndexedSlice* a, const IndexedSlice* b) { return a->slice().name < b->slice().name; });
  Validate(&pool);
  return pool;
}

// Gathers the pools visible from the node (dra.md §2.2), in canonical order.
std::vector<PoolData> GatherPools(const SliceIndex& index, const NodeInfo& node, const Features& features) {
  std::vector<PoolData> pools;
  for (const auto& [id, newest] : NewestRelevant(index, node, features)) {
    if (std::optional<PoolData> pool = MakePool(index, features, newest.first, newest.second)) pools.push_back(std::move(*pool));
  }
  return pools;
}

}  // namespace

NodePoolsPtr GatherNodePools(const SliceIndex& slices, const NodeInfo& node, const Features& features) {
  auto out = std::make_shared<NodePools>();
  out->pools = GatherPools(slices, node, features);
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

}  // namespace gpusched::dra
