// File: fgd.cc
//
// FGD (Weng et al., USENIX ATC'23) as its simulator scores it: the drop in the node's expected
// fragmentation F_n(M), mapped through floor(100 * sigmoid(dF / 1000)); a sharing pod's GPU is the
// lowest index with the best such score. The quantization is kept on purpose: with a fixed node
// order behind its ties it is what the published numbers measure.
#include <cmath>

#include "gpusched/scoring/fragmentation.h"
#include "scoring/scorers.h"

namespace gpusched::scoring {
namespace {

double Quantized(double delta) { return std::floor(100.0 / (1.0 + std::exp(-delta / 1000.0))); }

class FgdScorer : public Scorer {
 public:
  explicit FgdScorer(const TargetWorkload& workload) : workload_(workload) {}

  std::string_view Name() const override { return "fgd"; }
  bool HasPotential() const override { return true; }
  double Potential(const NodeView& node) const override { return FgdFragmentation(node, workload_); }

  void Score(const PodShape& pod, std::span<const Candidate> candidates, std::span<Choice> out, Rng&) const override {
    for (size_t c = 0; c < candidates.size(); ++c) {
      const NodeView& n = *candidates[c].node;
      double before = std::isnan(candidates[c].potential) ? Potential(n) : candidates[c].potential;
      if (!pod.sharing()) {
        NodeView after = n;
        Place(pod, -1, &after);
        out[c] = Choice{.score = Quantized(before - Potential(after)), .gpu = -1};
        continue;
      }
      // F is symmetric in GPU order: equal free values give equal scores, computed once.
      std::array<int32_t, kMaxGpus> seen_free{};
      std::array<double, kMaxGpus> seen_score{};
      int seen = 0;
      Choice best{.score = -1, .gpu = -1};
      for (int i = 0; i < n.gpu_count; ++i) {
        if (n.gpu_free[i] < pod.milli) continue;
        double s = -1;
        for (int j = 0; j < seen; ++j) {
          if (seen_free[j] == n.gpu_free[i]) s = seen_score[j];
        }
        if (s < 0) {
          NodeView after = n;
          Place(pod, i, &after);
          s = Quantized(before - Potential(after));
          seen_free[seen] = n.gpu_free[i];
          seen_score[seen++] = s;
        }
        if (s > best.score) best = Choice{.score = s, .gpu = i};
      }
      out[c] = best;
    }
  }

 private:
  const TargetWorkload& workload_;
};

}  // namespace

std::unique_ptr<Scorer> NewFgdScorer(const TargetWorkload& workload) { return std::make_unique<FgdScorer>(workload); }

}  // namespace gpusched::scoring
