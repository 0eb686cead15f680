// File: target_workload.h
//
// The workload a fragmentation-aware policy plans for (FGD's "typical pods" M): the task classes
// that make up most of the pods, with their probabilities, plus the value of a free GPU gap for
// the sharing pods that could still fill it.
//
// Classes are keyed by (CPU, milli per GPU, GPU count, model constraint). They are ordered by pod
// count, descending (ties: larger CPU, then milli, then GPU count, then constraint text), and the
// shortest prefix covering `coverage` of all pods is kept; p = count / covered count.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpusched/scoring/node_view.h"

namespace gpusched::scoring {

struct TaskClass {
  int64_t cpu = 0;
  int32_t milli = 0;
  int gpus = 0;
  uint64_t spec = 0;
  double p = 0;          // probability within the kept classes
  double mem_mean = 0;   // mean memory request of the class's pods (MiB)
  int64_t count = 0;     // pods of the class
};

// One pod of the workload sample, with the text of its model constraint ("" for none).
struct WorkloadSample {
  PodShape shape;
  std::string spec_key;
};

struct TargetWorkload {
  std::vector<TaskClass> classes;
  // gap_value[g], g in 0..1000: what a GPU with g free milli is worth as a fragment (see
  // BuildGapValue). Empty when not computed.
  std::vector<double> gap_value;
  // Shapes that fit, empty, on few nodes (reservation.h PickyShapes). Empty when not computed.
  std::vector<PodShape> picky;
};

// Returns M for `samples`. REQUIRES: 0 < coverage <= 1.
TargetWorkload BuildTargetWorkload(std::span<const WorkloadSample> samples, double coverage = 0.95);

// Fills workload->gap_value from the sizes of the sharing pods in `samples`: V(g) = g when no
// sharing pod fits in g, else pi(g) * E[V(g - s) | s <= g] + (1 - pi(g)) * g with
// pi(g) = Q(g) / (Q(g) + kappa), Q(g) the share of sharing pods of size <= g. A gap that the common
// sizes can refill is worth less than a dead one of the same size.
void BuildGapValue(std::span<const WorkloadSample> samples, double kappa, TargetWorkload* workload);

}  // namespace gpusched::scoring
