// File: dra_verdict_cache.h
//
// DraVerdictCache: each node's DraVerdict for one shape of claims (DraPlanner::shape()), by
// snapshot position, valid while the node object (NodeState::generation) and the node's DRA
// inputs (dra::ClusterState::NodeVersion) are those it was computed on. The DRA analogue of
// score_cache.h: consecutive pods of a Job ask for claims of one shape, and between two of them
// only the nodes that a bind or a slice touched change, so a prioritize over 500 DRA nodes runs
// the allocator on those alone.
//
// Not thread-safe: one request uses a cache at a time (the service lends them).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "gpusched/placement/dra_verdict.h"

namespace gpusched::placement {

class DraVerdictCache {
 public:
  using VerdictPtr = std::shared_ptr<const DraVerdict>;

  // The verdict held for position `pos` computed on (generation, dra_version) that answers
  // `rank` (a refusal answers both; a fit answers a ranking only if it was ranked), or null.
  // A generation or version of 0 (a state no inventory built) never hits.
  VerdictPtr Find(uint32_t pos, uint64_t generation, uint64_t dra_version, bool rank) const {
    if (pos >= entries_.size() || generation == 0 || dra_version == 0) return nullptr;
    const Entry& e = entries_[pos];
    if (e.generation != generation || e.dra_version != dra_version) return nullptr;
    if (rank && !e.ranked && e.verdict->fits()) return nullptr;
    return e.verdict;
  }
  // Keeps `verdict`, computed with `rank` for the node at `pos` in (generation, dra_version).
  void Put(uint32_t pos, uint64_t generation, uint64_t dra_version, bool rank, VerdictPtr verdict) {
    if (generation == 0 || dra_version == 0) return;
    if (pos >= entries_.size()) entries_.resize(pos + 1);
    entries_[pos] = Entry{generation, dra_version, rank, std::move(verdict)};
  }

 private:
  struct Entry {
    uint64_t generation = 0;
    uint64_t dra_version = 0;
    bool ranked = false;
    VerdictPtr verdict;
  };
  std::vector<Entry> entries_;
};

}  // namespace gpusched::placement
