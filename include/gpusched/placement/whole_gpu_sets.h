// File: whole_gpu_sets.h
//
// Whole GPUs and NVLink islands. On a node in mode nvidia the device plugin picks a pod's cards
// (NVIDIA's prefers an NVLink-connected set, best effort, and the kubelet may override it), so
// gpusched's part is the node: a pod asking two or more GPUs goes where that many free GPUs form
// an NVLink-connected set (gpu_links.h). A preference in prioritize would not do: kube-scheduler
// skips scoring when one node is left and adds other plugins' scores. So filter keeps, where some
// offered node has such a set, only those nodes.
//
// Which GPUs are free comes from the node agent's reading of the kubelet's PodResources
// (GpuDevice::pods) against the whole-GPU pods gpusched sees bound there: a GPU is busy while a
// pod it names is still bound on the node. The answer is unknown, and the node never refused for
// it, where the node publishes no islands or no PodResources reading, where a bound pod's GPUs are
// not published yet (the agent reads every few seconds), or where GPUs are held for pending pods.
//
// Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/placement/gpu_links.h"
#include "gpusched/placement/node_state.h"

namespace gpusched::placement {

// The free GPUs of `node` (healthy, without MIG, no bound pod on them), or nullopt when unknown:
// NodeState::published_free, unless GPUs are held there for a pending pod.
std::optional<GpuSet> KnownFreeGpus(const NodeState& node);
// The GPUs no bound whole-GPU pod of `node` holds by the agent's reading, nullopt when unknown
// (no reading, or a bound pod's GPUs not published yet); holds not counted. What a node state
// keeps as published_free, worked out when it is built.
std::optional<GpuSet> FreeByPublishedPods(const NodeState& node);

enum class LinkedStanding {
  kUnknown,    // no islands, or which GPUs are free is unknown
  kConnected,  // `gpus` free GPUs form an NVLink-connected set
  kScattered,  // they do not; the reason says what is free
};
struct LinkedFit {
  LinkedStanding standing = LinkedStanding::kUnknown;
  std::string reason;  // kScattered: "no NVLink-connected set of 2 free GPUs (free: GPU0, GPU3)"
};
// How `node` stands for a whole-GPU pod asking `gpus` GPUs (kUnknown below two).
LinkedFit LinkedFitOf(const NodeState& node, int64_t gpus);

// Of `nodes` (each fits a whole-GPU pod asking `gpus`), those filter refuses, by position into
// `nodes`, with the reason: the kScattered ones when some node is kConnected; none otherwise.
std::vector<std::pair<size_t, std::string>> ScatteredNodes(const std::vector<const NodeState*>& nodes, int64_t gpus);

}  // namespace gpusched::placement
