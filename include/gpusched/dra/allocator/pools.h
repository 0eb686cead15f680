// File: pools.h
//
// What one node sees (dra.md §2.2): the resource pools whose slices are relevant to it, newest
// generation only, completeness counted cluster-wide, validity checked (unique device names and
// counter sets, known counters), in canonical order (driver, pool; slices by name); and the
// candidate devices of the complete, valid pools, in the order the search tries them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/dra/slice_index.h"
#include "gpusched/dra/types.h"

namespace gpusched::dra {

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

struct NodePools {
  std::vector<PoolData> pools;
  std::vector<Candidate> candidates;  // devices of complete, valid pools, in canonical order
  bool invalid_pools = false;
};

}  // namespace gpusched::dra
