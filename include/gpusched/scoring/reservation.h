// File: reservation.h
//
// Nodes reserved for picky pods. Some pods fit on only a few nodes even when those are empty (an
// 8-GPU pod asking 120 cores fits only openb's 39 G3 nodes, of 128 cores; an 8-GPU pod where few
// nodes have 8 GPUs only those). Under churn such a pod waits until one of its few nodes drains
// completely, which takes as long as the last pod placed there stays. Pods that fit almost
// anywhere should therefore go to those nodes last: softmix charges them a fixed penalty there
// (SoftWeights::reserve; shared/specs/beyond-fgd.md has the measure it adds to).
//
// A workload sample is picky when it asks whole GPUs, fits, empty, on at most `share` of the
// nodes with GPUs, and needs all the GPUs of each (it can start only on a drained node); a node
// is reserved when a picky sample fits it empty. Pods that need a few GPUs, or a share of one, of
// a rare model are not picky: those free up often. The penalty steers other pods away from
// reserved nodes; it does not forbid them (a larger drop in fragmentation can outweigh it). Capacities are NodeView::cpu_cap and mem_cap
// (kUntracked when nobody tracks them: then only GPU count and model decide).
#pragma once

#include <span>
#include <vector>

#include "gpusched/scoring/node_view.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::scoring {

// The share of the nodes with GPUs at most which a picky shape fits (openb: the 8-GPU pods of
// 120 cores fit the 39 nodes of G3, 3.2%).
inline constexpr double kPickyShare = 0.10;

// True if `pod` fits `node` when nothing runs there: capacity, GPU count and model.
bool FitsEmpty(const PodShape& pod, const NodeView& node);

// The distinct picky shapes of `samples` on `nodes` (see above), each fitting at least one node.
std::vector<PodShape> PickyShapes(std::span<const WorkloadSample> samples, std::span<const NodeView> nodes, double share);

// True if a picky shape of `workload` fits `node` empty.
bool Reserved(const NodeView& node, const TargetWorkload& workload);

// True if `pod` is at least as demanding as a picky shape (CPU, memory, GPUs, milli each at least
// as large, the same model constraint or a narrower one). Such a pod fits only reserved nodes,
// where the penalty would be the same on every candidate: the scorer skips it (a fast path).
bool Picky(const PodShape& pod, const TargetWorkload& workload);

}  // namespace gpusched::scoring
