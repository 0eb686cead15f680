#include "gpusched/scoring/scorer.h"

#include <fmt/format.h>

#include "scoring/scorers.h"

namespace gpusched::scoring {
namespace {

constexpr std::string_view kNames[] = {"random",  "dotprod", "packing", "clustering", "bestfit", "fgd",
                                       "binpack", "spread",  "softmix", "softfill",   "softfgd"};
constexpr std::string_view kPaper[] = {"random", "dotprod", "clustering", "packing", "bestfit", "fgd"};

}  // namespace

size_t Best(std::span<const Candidate> candidates, std::span<const Choice> choices) {
  size_t best = 0;
  for (size_t i = 1; i < candidates.size(); ++i) {
    if (choices[i].score > choices[best].score ||
        (choices[i].score == choices[best].score && candidates[i].order < candidates[best].order)) {
      best = i;
    }
  }
  return best;
}

std::span<const std::string_view> ScorerNames() { return kNames; }

bool NeedsWorkload(std::string_view name) {
  return name == "fgd" || name == "softmix" || name == "softfill" || name == "softfgd";
}
std::span<const std::string_view> PaperPolicies() { return kPaper; }

StatusOr<std::unique_ptr<Scorer>> MakeScorer(std::string_view name, const TargetWorkload* workload) {
  auto need_workload = [&]() -> Status {
    if (workload == nullptr) return InvalidArgumentError(fmt::format("policy {} needs a target workload", name));
    return OkStatus();
  };
  static_assert(std::size(kNames) == 11, "keep NeedsWorkload() in step with the names");
  if (name == "random") return NewRandomScorer();
  if (name == "dotprod") return NewDotProdScorer();
  if (name == "packing") return NewPackingScorer();
  if (name == "clustering") return NewClusteringScorer();
  if (name == "bestfit") return NewBestFitScorer();
  if (name == "binpack") return NewUtilizationScorer(true);
  if (name == "spread") return NewUtilizationScorer(false);
  if (name == "fgd") {
    GPUSCHED_RETURN_IF_ERROR(need_workload());
    return NewFgdScorer(*workload);
  }
  if (name == "softmix" || name == "softfill" || name == "softfgd") {
    GPUSCHED_RETURN_IF_ERROR(need_workload());
    if (name == "softmix") {
      if (workload->gap_value.size() != kMilliPerGpu + 1) {
        return InvalidArgumentError("policy softmix needs the gap values of the target workload");
      }
      return NewSoftScorer(name, *workload, SoftWeights{});
    }
    if (name == "softfill") return NewSoftScorer(name, *workload, SoftWeights{.fgd = 0, .fill = 1, .gap = 0, .lambda = 3200});
    return NewSoftScorer(name, *workload, SoftWeights{.fgd = 1, .fill = 0, .gap = 0, .lambda = 3200});
  }
  return InvalidArgumentError(fmt::format("unknown policy \"{}\" (want one of {})", name, fmt::join(kNames, ", ")));
}

}  // namespace gpusched::scoring
