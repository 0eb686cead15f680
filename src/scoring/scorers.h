// File: scorers.h (private to scoring)
//
// The constructors of the scorers behind MakeScorer() (scorer.cc's table), one per policy family.
#pragma once

#include <memory>

#include "gpusched/scoring/scorer.h"

namespace gpusched::scoring {

std::unique_ptr<Scorer> NewRandomScorer();
std::unique_ptr<Scorer> NewDotProdScorer();
std::unique_ptr<Scorer> NewPackingScorer();
std::unique_ptr<Scorer> NewClusteringScorer();
std::unique_ptr<Scorer> NewBestFitScorer();
std::unique_ptr<Scorer> NewFgdScorer(const TargetWorkload& workload);
std::unique_ptr<Scorer> NewUtilizationScorer(bool binpack);

struct SoftWeights {
  double fgd = 1;       // weight of F_FGD
  double fill = 0.5;    // weight of F_fill
  double gap = 8;       // weight of F_V (needs TargetWorkload::gap_value)
  double lambda = 5000; // rank penalty, milli-GPU per unit of rank
  double reserve = 0;   // penalty for a pod that is not picky on a reserved node (reservation.h)
};
std::unique_ptr<Scorer> NewSoftScorer(std::string_view name, const TargetWorkload& workload, SoftWeights weights);

}  // namespace gpusched::scoring
