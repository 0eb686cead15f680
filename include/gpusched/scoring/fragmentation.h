// File: fragmentation.h
//
// How much of a node's free GPU the target workload M cannot use, in milli-GPU:
//
//   FgdFragmentation  F_n(M) of the FGD paper (USENIX ATC'23): for each class m, the idle GPU
//                     if the class cannot run on the node at all (CPU-only class, model
//                     excluded, too few GPUs with enough free, or too little CPU), else the free
//                     milli on GPUs too small for it; weighted by p_m.
//   FillFragmentation F_fill: for each GPU class, the idle GPU that the class could not fill even
//                     with as many more pods as the node's GPUs, CPU and memory allow.
//   GapFragmentation  F_V: the gap value of each partly used GPU (TargetWorkload::gap_value).
//
// Pure.
#pragma once

#include "gpusched/scoring/node_view.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::scoring {

double FgdFragmentation(const NodeView& node, const TargetWorkload& workload);
double FillFragmentation(const NodeView& node, const TargetWorkload& workload);
// REQUIRES: workload.gap_value has 1001 entries.
double GapFragmentation(const NodeView& node, const TargetWorkload& workload);

}  // namespace gpusched::scoring
