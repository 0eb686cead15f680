// File: soft.cc
//
// gpusched's fragmentation-aware policies (shared/specs/beyond-fgd.md §3). A node's potential is
//
//   Phi(n) = a F_FGD(n) + b F_fill(n) + c F_V(n)
//
// and a placement scores Phi(n) - Phi(n after) - lambda * rank(n): the exact drop in
// fragmentation (no sigmoid, no quantization), minus a smooth penalty along a fixed random node
// order. The penalty keeps what FGD got from its tie-break (a consolidating First-Fit) as a
// trade-off rather than a bucket edge; F_fill sees how many more pods of each class the node can
// really take; F_V values a GPU gap by whether common sharing pods can refill it.
//
// softmix also charges a pod that fits almost anywhere 5000 on a node reserved for picky pods
// (reservation.h): under churn those nodes must drain for the pods only they can hold.
//
//   softmix   a = 1, b = 0.5, c = 8, lambda = 5000, reserve = 5000 (P1 softMixV)
//   softfill  a = 0, b = 1,   c = 0, lambda = 3200 (P2)
//   softfgd   a = 1, b = 0,   c = 0, lambda = 3200 (P3)
#include <cmath>
#include <string>

#include "gpusched/scoring/fragmentation.h"
#include "gpusched/scoring/reservation.h"
#include "scoring/scorers.h"

namespace gpusched::scoring {
namespace {

class SoftScorer : public Scorer {
 public:
  SoftScorer(std::string_view name, const TargetWorkload& workload, SoftWeights w)
      : name_(name), workload_(workload), w_(w) {}

  std::string_view Name() const override { return name_; }
  bool UsesRank() const override { return w_.lambda != 0; }
  bool HasPotential() const override { return true; }
  double Potential(const NodeView& node) const override {
    double phi = 0;
    if (w_.fgd != 0) phi += w_.fgd * FgdFragmentation(node, workload_);
    if (w_.fill != 0) phi += w_.fill * FillFragmentation(node, workload_);
    if (w_.gap != 0) phi += w_.gap * GapFragmentation(node, workload_);
    return phi;
  }

  void Score(const PodShape& pod, std::span<const Candidate> candidates, std::span<Choice> out, Rng&) const override {
    bool keeps_off = w_.reserve != 0 && !workload_.picky.empty() && !Picky(pod, workload_);  // reserved nodes
    for (size_t c = 0; c < candidates.size(); ++c) {
      const NodeView& n = *candidates[c].node;
      double before = std::isnan(candidates[c].potential) ? Potential(n) : candidates[c].potential;
      double penalty = w_.lambda * candidates[c].rank + (keeps_off && Reserved(n, workload_) ? w_.reserve : 0.0);
      if (!pod.sharing()) {
        NodeView after = n;
        Place(pod, -1, &after);
        out[c] = Choice{.score = before - Potential(after) - penalty, .gpu = -1};
        continue;
      }
      // Each distinct free value once, lowest index first.
      std::array<int32_t, kMaxGpus> seen{};
      int seen_count = 0;
      Choice best{.score = -HUGE_VAL, .gpu = -1};
      for (int i = 0; i < n.gpu_count; ++i) {
        if (n.gpu_free[i] < pod.milli) continue;
        bool repeat = false;
        for (int j = 0; j < seen_count; ++j) repeat |= seen[j] == n.gpu_free[i];
        if (repeat) continue;
        seen[seen_count++] = n.gpu_free[i];
        NodeView after = n;
        Place(pod, i, &after);
        double s = before - Potential(after) - penalty;
        if (s > best.score) best = Choice{.score = s, .gpu = i};
      }
      out[c] = best;
    }
  }

 private:
  const std::string name_;
  const TargetWorkload& workload_;
  const SoftWeights w_;
};

class UtilizationScorer : public Scorer {
 public:
  explicit UtilizationScorer(bool binpack) : binpack_(binpack) {}
  std::string_view Name() const override { return binpack_ ? "binpack" : "spread"; }

  void Score(const PodShape& pod, std::span<const Candidate> candidates, std::span<Choice> out, Rng&) const override {
    for (size_t c = 0; c < candidates.size(); ++c) {
      const NodeView& n = *candidates[c].node;
      double total = static_cast<double>(n.gpu_count) * kMilliPerGpu;
      double used_after = total - static_cast<double>(n.IdleMilli()) + static_cast<double>(pod.gpu_milli());
      double utilization = total > 0 ? used_after / total : 0.0;
      out[c] = Choice{.score = binpack_ ? utilization : 1.0 - utilization, .gpu = pod.sharing() ? Gpu(pod, n) : -1};
    }
  }

 private:
  int Gpu(const PodShape& pod, const NodeView& n) const {
    if (binpack_) return BestFitGpu(pod, n);
    int best = -1;
    for (int i = 0; i < n.gpu_count; ++i) {
      if (n.gpu_free[i] >= pod.milli && (best < 0 || n.gpu_free[i] > n.gpu_free[best])) best = i;
    }
    return best;
  }
  const bool binpack_;
};

}  // namespace

std::unique_ptr<Scorer> NewSoftScorer(std::string_view name, const TargetWorkload& workload, SoftWeights weights) {
  return std::make_unique<SoftScorer>(name, workload, weights);
}

std::unique_ptr<Scorer> NewUtilizationScorer(bool binpack) { return std::make_unique<UtilizationScorer>(binpack); }

}  // namespace gpusched::scoring
