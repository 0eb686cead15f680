// File: scorer.h
//
// Node scoring policies, one implementation each, shared by the replay and the extender:
//
//   random      one feasible node uniformly at random (score 100, others 0); random GPU
//   dotprod     the artifact's DotProd: 1 - mean of (free x request) products, CPU and GPU
//   packing     the artifact's GpuPacking (shared GPUs > free GPUs on a used node > idle nodes)
//   clustering  the artifact's GpuClustering (nodes whose pods share the pod's affinity tag)
//   bestfit     the artifact's BestFit: least free CPU + GPU left, min-max normalized
//   fgd         Fragmentation Gradient Descent: floor(100 sigmoid(dF/1000)), GPU by the same score
//   binpack     gpusched's default: highest GPU utilization after placement
//   spread      lowest GPU utilization after placement
//   softmix     ours: dF for F_FGD + 0.5 F_fill + 8 F_V, minus a rank penalty and a penalty on
//               nodes reserved for picky pods (see soft.cc, reservation.h)
//   softfill    ours, ablation: F_fill only
//   softfgd     ours, ablation: FGD's F without the sigmoid
//
// A Scorer scores every feasible candidate of one pod at once (Random and BestFit need the whole
// set). The caller picks the highest score; ties go to the lowest Candidate::order. Scorers are
// immutable after construction and thread-compatible; randomness comes only from the Rng passed in.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/common/random.h"
#include "gpusched/common/status.h"
#include "gpusched/scoring/node_view.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::scoring {

struct Candidate {
  const NodeView* node = nullptr;
  uint32_t order = 0;  // tie-break: lower wins; distinct per node
  double rank = 0;     // the node's place in a fixed random order, in [0, 1)
  // The scorer's Potential(*node) when the caller caches it; NaN makes the scorer compute it.
  double potential = std::numeric_limits<double>::quiet_NaN();
};

struct Choice {
  double score = 0;  // higher is better
  int gpu = -1;      // sharing pods: the GPU to use; -1: the lowest-index rule
};

class Scorer {
 public:
  virtual ~Scorer() = default;
  virtual std::string_view Name() const = 0;

  // True if a candidate's score depends on the other candidates (Random, BestFit's normalization):
  // such a scorer must see all candidates in one Score() call. Others may be called in chunks.
  virtual bool Batch() const { return false; }
  // True if the scores depend on Candidate::rank (callers may skip computing it otherwise).
  virtual bool UsesRank() const { return false; }
  // True if Potential() is a per-node quantity worth caching between placements.
  virtual bool HasPotential() const { return false; }
  // Returns the node's potential (e.g. its fragmentation). Pure.
  virtual double Potential(const NodeView& node) const { return 0; }

  // Scores each candidate for `pod`: out[i] belongs to candidates[i].
  // REQUIRES: out.size() == candidates.size(); every candidate node Fits(pod).
  virtual void Score(const PodShape& pod, std::span<const Candidate> candidates, std::span<Choice> out,
                     Rng& rng) const = 0;
};

// Returns the position of the best candidate: highest score, then lowest order.
// REQUIRES: !candidates.empty().
size_t Best(std::span<const Candidate> candidates, std::span<const Choice> choices);

// Returns the scorer named `name`. `workload` (M) is needed by fgd and the soft policies and must
// outlive the scorer. Errors: InvalidArgument for an unknown name or a missing workload.
StatusOr<std::unique_ptr<Scorer>> MakeScorer(std::string_view name, const TargetWorkload* workload);

// Returns true if policy `name` needs a target workload (fgd and the soft policies).
bool NeedsWorkload(std::string_view name);

// Returns every policy name MakeScorer knows, in the order of the header comment.
std::span<const std::string_view> ScorerNames();

// The six policies of the FGD paper, in the paper's order.
std::span<const std::string_view> PaperPolicies();

}  // namespace gpusched::scoring
