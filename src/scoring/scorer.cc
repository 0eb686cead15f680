// File: scorer.cc
//
// The registry of node policies: one row per policy (name, FGD-paper baseline, needs a workload,
// factory), the lookups and name lists built from it, and the best choice (ties to the lowest
// order). The policies: baselines.cc, fgd.cc and soft.cc (scorers.h).
#include "gpusched/scoring/scorer.h"

#include <fmt/format.h>

#include <vector>

#include "scoring/scorers.h"

namespace gpusched::scoring {
namespace {

// Every node policy, once: its name, whether it is one of the FGD paper's baselines, and how it is
// made (those planning for a target workload get it; it is never null for them).
struct Entry {
  std::string_view name;
  bool paper;
  bool workload;
  StatusOr<std::unique_ptr<Scorer>> (*make)(const TargetWorkload* workload);
};

StatusOr<std::unique_ptr<Scorer>> MakeSoftmix(const TargetWorkload* w) {
  if (w->gap_value.size() != kMilliPerGpu + 1) {
    return InvalidArgumentError("policy softmix needs the gap values of the target workload");
  }
  return NewSoftScorer("softmix", *w, SoftWeights{.reserve = 5000});
}

constexpr Entry kScorers[] = {
    {"random", true, false, [](const TargetWorkload*) -> StatusOr<std::unique_ptr<Scorer>> { return NewRandomScorer(); }},
    {"dotprod", true, false, [](const TargetWorkload*) -> StatusOr<std::unique_ptr<Scorer>> { return NewDotProdScorer(); }},
    {"clustering", true, false,
     [](const TargetWorkload*) -> StatusOr<std::unique_ptr<Scorer>> { return NewClusteringScorer(); }},
    {"packing", true, false, [](const TargetWorkload*) -> StatusOr<std::unique_ptr<Scorer>> { return NewPackingScorer(); }},
    {"bestfit", true, false, [](const TargetWorkload*) -> StatusOr<std::unique_ptr<Scorer>> { return NewBestFitScorer(); }},
    {"fgd", true, true, [](const TargetWorkload* w) -> StatusOr<std::unique_ptr<Scorer>> { return NewFgdScorer(*w); }},
    {"binpack", false, false,
     [](const TargetWorkload*) -> StatusOr<std::unique_ptr<Scorer>> { return NewUtilizationScorer(true); }},
    {"spread", false, false,
     [](const TargetWorkload*) -> StatusOr<std::unique_ptr<Scorer>> { return NewUtilizationScorer(false); }},
    {"softmix", false, true, &MakeSoftmix},
    {"softfill", false, true,
     [](const TargetWorkload* w) -> StatusOr<std::unique_ptr<Scorer>> {
       return NewSoftScorer("softfill", *w, SoftWeights{.fgd = 0, .fill = 1, .gap = 0, .lambda = 3200});
     }},
    {"softfgd", false, true,
     [](const TargetWorkload* w) -> StatusOr<std::unique_ptr<Scorer>> {
       return NewSoftScorer("softfgd", *w, SoftWeights{.fgd = 1, .fill = 0, .gap = 0, .lambda = 3200});
     }},
};

template <bool kPaperOnly>
std::span<const std::string_view> Names() {
  static const std::vector<std::string_view>* names = [] {
    auto* out = new std::vector<std::string_view>;
    for (const Entry& e : kScorers) {
      if (!kPaperOnly || e.paper) out->push_back(e.name);
    }
    return out;
  }();
  return *names;
}

const Entry* Find(std::string_view name) {
  for (const Entry& e : kScorers) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

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

std::span<const std::string_view> ScorerNames() { return Names<false>(); }
std::span<const std::string_view> PaperPolicies() { return Names<true>(); }

bool NeedsWorkload(std::string_view name) {
  const Entry* e = Find(name);
  return e != nullptr && e->workload;
}

StatusOr<std::unique_ptr<Scorer>> MakeScorer(std::string_view name, const TargetWorkload* workload) {
  const Entry* e = Find(name);
  if (e == nullptr) {
    return InvalidArgumentError(fmt::format("unknown policy \"{}\" (want one of {})", name, fmt::join(ScorerNames(), ", ")));
  }
  if (e->workload && workload == nullptr) {
    return InvalidArgumentError(fmt::format("policy {} needs a target workload", name));
  }
  return e->make(workload);
}

}  // namespace gpusched::scoring
