// File: score_cache.h
//
// ScoreCache: each node's verdict for one pod shape (the node policy's score of a fit, or the
// refusal with its reason), by snapshot position, valid while that node's state is the one it
// was computed on (NodeState::generation).
// A node's score for a shape changes only when the node changes (or, for fgd and the soft
// policies, the target workload: the caller keys caches by workload too), and consecutive pods
// repeat shapes, so a filter over 5,000 nodes re-evaluates only the nodes that changed since the
// last pod of the same shape.
//
// Not thread-safe: one request uses a cache at a time (extender/cache_store.h lends them).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::placement {

class ScoreCache {
 public:
  // What the cache holds for a node: a fit with its score, or a refusal.
  struct Hit {
    double score = 0;
    const NodeVerdict* refusal = nullptr;  // null for a fit
  };

  // Returns true and sets *hit if position `pos` holds a verdict computed on `generation`.
  // generation 0 (a state no inventory built) never hits. *hit stays valid until the next Put.
  bool Find(uint32_t pos, uint64_t generation, Hit* hit) const {
    if (pos >= entries_.size() || generation == 0 || entries_[pos].generation != generation) return false;
    *hit = Hit{entries_[pos].score, entries_[pos].refusal.get()};
    return true;
  }
  // Records that the node at `pos`, in state `generation`, fits with `score`.
  void PutFit(uint32_t pos, uint64_t generation, double score) { Put(pos, generation, score, nullptr); }
  // Records that the node at `pos`, in state `generation`, refuses with `verdict`.
  void PutRefusal(uint32_t pos, uint64_t generation, const NodeVerdict& verdict) {
    Put(pos, generation, 0, std::make_unique<NodeVerdict>(verdict));
  }

 private:
  struct Entry {
    uint64_t generation = 0;
    double score = 0;
    std::unique_ptr<NodeVerdict> refusal;
  };
  void Put(uint32_t pos, uint64_t generation, double score, std::unique_ptr<NodeVerdict> refusal) {
    if (generation == 0) return;
    if (pos >= entries_.size()) entries_.resize(pos + 1);
    entries_[pos] = Entry{generation, score, std::move(refusal)};
  }
  std::vector<Entry> entries_;
};

// Returns a key that is equal for two requests exactly when every node gives them the same
// verdict, score and refusal text under one node policy: the request's shape, its container
// names and how it spelled its quantities.
std::string ShapeKey(const PodRequest& request);

}  // namespace gpusched::placement
