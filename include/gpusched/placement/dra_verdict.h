// File: dra_verdict.h
//
// DraVerdict: what the DRA planner (dra_planner.h) says of one pod on one node: the verdict every
// pod gets, and for a fit the device sets upstream and gpusched would allocate, and the score.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "gpusched/dra/types.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/dra_links.h"
#include "gpusched/scoring/node_view.h"

namespace gpusched::placement {

struct DraVerdict {
  // The verdict every pod gets on a node: fits, or why not (reject, reason), and whether freeing
  // devices there could help (kUnschedulable: only kInsufficient). Outcome::kError when the fault
  // is the pod's request, not the node (a claim missing, a selector that does not compile, an
  // unknown class), with reject kInvalidRequest: as upstream, it stops the scheduling attempt.
  NodeVerdict node;
  std::vector<dra::AllocationResult> compat;  // fits: what kube-scheduler would allocate
  std::vector<dra::AllocationResult> ranked;  // fits, when ranked: gpusched's choice
  bool topology_aligned = false;             // ranked keeps every multi-device request in one root
                                             // or (nvlink_connected) on NVLink-connected GPUs
  bool nvlink_connected = false;             // ranked gives each multi-GPU request an NVLink-connected set
  // Fits, on a node with NVLink islands, for a pod with a multi-GPU request: whether the set that
  // will be allocated (compat, or ranked where DraOptions::ranked_allocated) is NVLink-connected
  // (dra_links.h LinksOfChoice). Filter refuses kScattered nodes where another offered one is
  // kConnected. kUnknown elsewhere.
  ChosenLinks links;
  double score = 0;                          // fits, when ranked: higher is better
  // Fits, when ranked: the node's GPU devices as the scoring library sees them before the pod
  // (DraPlanner::GpuView; nullopt where that view would be wrong) and how many the ranked choice
  // takes. The node policy scores with them (kept here, so cached verdicts need no recount).
  std::optional<scoring::NodeView> gpu_view;
  int gpus_taken = 0;
  int32_t milli_taken = 0;  // of each GPU it takes: 1000 for whole devices, a share for a partition
  int64_t steps = 0;

  bool fits() const { return node.fits(); }
};

}  // namespace gpusched::placement
