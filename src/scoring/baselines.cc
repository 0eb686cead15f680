// File: baselines.cc
//
// The five baselines of the FGD paper, as its simulator computes them (hkust-adsl/
// kubernetes-scheduler-simulator, see shared/specs/fgd-replay.md §5), integer truncations included.
#include <algorithm>
#include <cmath>
#include <limits>

#include "scoring/scorers.h"

namespace gpusched::scoring {
namespace {

constexpr double kMaxSpecCpu = 128000;  // normalizers of the simulator
constexpr double kMaxSpecGpu = 8000;
constexpr int64_t kMaxNodeScore = 100;

bool CpuTracked(const NodeView& n) { return n.cpu_free < kUntracked / 2; }

class RandomScorer : public Scorer {
 public:
  std::string_view Name() const override { return "random"; }
  bool Batch() const override { return true; }
  void Score(const PodShape& pod, std::span<const Candidate> candidates, std::span<Choice> out,
             Rng& rng) const override {
    for (Choice& c : out) c = Choice{};
    if (candidates.empty()) return;
    // One draw for the node (none when only one fits), then one for the GPU of a sharing pod.
    size_t pick = candidates.size() > 1 ? static_cast<size_t>(rng.Below(candidates.size())) : 0;
    out[pick].score = kMaxNodeScore;
    if (!pod.sharing()) return;
    const NodeView& n = *candidates[pick].node;
    int feasible = 0;
    for (int i = 0; i < n.gpu_count; ++i) feasible += n.gpu_free[i] >= pod.milli ? 1 : 0;
    int k = static_cast<int>(rng.Below(static_cast<uint64_t>(feasible)));
    for (int i = 0; i < n.gpu_count; ++i) {
      if (n.gpu_free[i] >= pod.milli && k-- == 0) {
        out[pick].gpu = i;
        break;
      }
    }
  }
};

class DotProdScorer : public Scorer {
 public:
  std::string_view Name() const override { return "dotprod"; }
  void Score(const PodShape& pod, std::span<const Candidate> candidates, std::span<Choice> out, Rng&) const override {
    for (size_t i = 0; i < candidates.size(); ++i) {
      const NodeView& n = *candidates[i].node;
      double cpu = CpuTracked(n) ? (static_cast<double>(n.cpu_free) / kMaxSpecCpu) *
                                       (static_cast<double>(pod.cpu) / kMaxSpecCpu)
                                 : 0.0;
      double gpu = (static_cast<double>(n.IdleMilli()) / kMaxSpecGpu) *
                   (static_cast<double>(pod.gpu_milli()) / kMaxSpecGpu);
      double dot = (cpu + gpu) / 2;
      out[i] = Choice{.score = static_cast<double>(static_cast<int64_t>(kMaxNodeScore * (1 - dot))),
                      .gpu = pod.sharing() ? BestFitGpu(pod, n) : -1};
    }
  }
};

class PackingScorer : public Scorer {
 public:
  std::string_view Name() const override { return "packing"; }
  void Score(const PodShape& pod, std::span<const Candidate> candidates, std::span<Choice> out, Rng&) const override {
    for (size_t i = 0; i < candidates.size(); ++i) {
      const NodeView& n = *candidates[i].node;
      out[i] = Choice{.score = static_cast<double>(Packing(pod, n)), .gpu = pod.sharing() ? BestFitGpu(pod, n) : -1};
    }
  }

 private:
  static int64_t Packing(const PodShape& pod, const NodeView& n) {
    if (!pod.uses_gpu()) return 0;
    int fully_free = n.FullyFree();
    if (fully_free == n.gpu_count) return std::max<int64_t>(kMaxNodeScore / 3 - fully_free, fully_free);
    // Take the GPUs with the least free milli first.
    std::array<int, kMaxGpus> order{};
    for (int i = 0; i < n.gpu_count; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.begin() + n.gpu_count,
                     [&](int a, int b) { return n.gpu_free[a] < n.gpu_free[b]; });
    int need = pod.gpus;
    int fully_free_used = 0;
    int64_t free_ratio = 0;
    for (int j = 0; j < n.gpu_count && need > 0; ++j) {
      int32_t left = n.gpu_free[order[j]];
      if (left < pod.milli) continue;
      --need;
      if (left == kMilliPerGpu) ++fully_free_used;
      free_ratio += static_cast<int64_t>(left) * 100 / kMilliPerGpu;
    }
    if (need > 0) return 0;
    if (fully_free_used > 0) return std::max<int64_t>(kMaxNodeScore / 2 - fully_free_used, kMaxNodeScore / 3);
    return std::max<int64_t>(kMaxNodeScore - free_ratio / 10, kMaxNodeScore / 2);
  }
};

class ClusteringScorer : public Scorer {
 public:
  std::string_view Name() const override { return "clustering"; }
  void Score(const PodShape& pod, std::span<const Candidate> candidates, std::span<Choice> out, Rng&) const override {
    int tag = pod.tag();
    for (size_t i = 0; i < candidates.size(); ++i) {
      const NodeView& n = *candidates[i].node;
      out[i] = Choice{.score = 0, .gpu = pod.sharing() ? BestFitGpu(pod, n) : -1};
      if (tag < 0) continue;
      int64_t base = kMaxNodeScore / 4 * (static_cast<int64_t>(kMaxSpecGpu) - n.IdleMilli()) /
                     static_cast<int64_t>(kMaxSpecGpu);
      int kinds = 0;
      for (int16_t t : n.tags) kinds += t > 0 ? 1 : 0;
      int64_t bonus = 0;
      if (n.tags[tag] > 0) {
        bonus = kinds == 1 ? kMaxNodeScore * 3 / 4 : kMaxNodeScore * 2 / 4;
      } else if (kinds == 0) {
        bonus = kMaxNodeScore / 4;
      }
      out[i].score = static_cast<double>(base + bonus);
    }
  }
};

class BestFitScorer : public Scorer {
 public:
  std::string_view Name() const override { return "bestfit"; }
  bool Batch() const override { return true; }
  void Score(const PodShape& pod, std::span<const Candidate> candidates, std::span<Choice> out, Rng&) const override {
    int64_t lo = std::numeric_limits<int64_t>::max();
    int64_t hi = std::numeric_limits<int64_t>::min();
    std::vector<int64_t> raw(candidates.size());
    for (size_t i = 0; i < candidates.size(); ++i) {
      const NodeView& n = *candidates[i].node;
      double s = 0;
      if (CpuTracked(n)) s += static_cast<double>(n.cpu_free - pod.cpu) / kMaxSpecCpu * 0.5;
      s += static_cast<double>(n.IdleMilli() - pod.gpu_milli()) / kMaxSpecGpu * 0.5;
      raw[i] = static_cast<int64_t>((1.0 - s) * static_cast<double>(kMaxNodeScore));
      lo = std::min(lo, raw[i]);
      hi = std::max(hi, raw[i]);
      out[i].gpu = pod.sharing() ? BestFitGpu(pod, n) : -1;
    }
    for (size_t i = 0; i < candidates.size(); ++i) {
      out[i].score = hi == lo ? 0.0 : static_cast<double>((raw[i] - lo) * kMaxNodeScore / (hi - lo));
    }
  }
};

}  // namespace

std::unique_ptr<Scorer> NewRandomScorer() { return std::make_unique<RandomScorer>(); }
std::unique_ptr<Scorer> NewDotProdScorer() { return std::make_unique<DotProdScorer>(); }
std::unique_ptr<Scorer> NewPackingScorer() { return std::make_unique<PackingScorer>(); }
std::unique_ptr<Scorer> NewClusteringScorer() { return std::make_unique<ClusteringScorer>(); }
std::unique_ptr<Scorer> NewBestFitScorer() { return std::make_unique<BestFitScorer>(); }

}  // namespace gpusched::scoring
