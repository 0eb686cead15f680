// File: reservation.h
//
// Nodes reserved for picky pods. Some pods fit on only a few nodes even when those are empty (an
// 8-GPU pod asking 120 cores fits only the 128-core nodes of openb; a pod of a rare GPU model
// only that model's nodes). Under churn such a pod waits until one of its few nodes drains
// completely, which takes as long as the last pod placed there stays. Pods that fit almost
// anywhere should therefore go to those nodes last: softmix charges them a fixed penalty there
// (SoftWeights::reserve; shared/specs/beyond-fgd.md has the measure it adds to).
//
// A workload sample is picky when it fits, empty, on at most `share` of the nodes and needs all
// the GPUs of each (it can start only on a drained node); a node is reserved when a picky sample
// fits it empty. Pods that need a few GPUs of a rare model are not picky: single GPUs free up often. Capacities are NodeView::cpu_cap and mem_cap
// (kUntracked when nobody tracks them: then only GPU count and model decide).
#pragma once

#include <span>
#include <vector>

#include "gpusched/scoring/node_view.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::scoring {

// The share of nodes at most which a picky shape fits (openb: the 128-core nodes are 3.4%).
inline constexpr double kPickyShare = 0.10;

// True if `pod` fits `node` when nothing runs there: capacity, GPU count and model.
bool FitsEmpty(const PodShape& pod, const NodeView& node);

// The distinct picky shapes of `samples` on `nodes` (see above), each fitting at least one node.
std::vector<PodShape> PickyShapes(std::span<const WorkloadSample> samples, std::span<const NodeView> nodes, double share);

// True if a picky shape of `workload` fits `node` empty.
bool Reserved(const NodeView& node, const TargetWorkload& workload);

// True if `pod` is at least as demanding as a picky shape (CPU, memory, GPUs, milli each at least
// as large, the same model constraint or a narrower one): it pays nothing on reserved nodes.
bool Picky(const PodShape& pod, const TargetWorkload& workload);

}  // namespace gpusched::scoring
