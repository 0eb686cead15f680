// File: dra_planner.h
//
// Placement of a pod with ResourceClaims (DRA) on one node: the structured allocator's answer
// (the device set kube-scheduler's DynamicResources plugin would pick: the compatible choice), a
// ranked choice (the same rules plus topology: each multi-GPU request on NVLink-connected GPUs
// where the node's GPUs form islands (dra_links.h), else each multi-device request inside one
// PCIe root when the node allows it), and a node score for prioritize (topology first, then packing:
// fewer whole idle GPUs left behind).
//
// Holds (nomination.h): devices held on a node for a nominated pod are taken for the pods the
// hold binds (equal or lower priority, not the holder).
//
// Mode rules: a device set holding devices of a GPU driver (DraOptions::gpu_drivers) is only
// placed on nodes in mode nvidia-dra that are ready; claims for other devices (NICs, FPGAs) are
// judged by the allocator alone, as upstream does.
//
// Pure: reads an immutable dra::ClusterState and NodeState; thread-safe to call concurrently.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpusched/dra/allocator.h"
#include "gpusched/dra/cel.h"
#include "gpusched/dra/cluster_state.h"
#include "gpusched/model/pod.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/dra_verdict_cache.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/what_if.h"
#include "gpusched/scoring/node_view.h"

namespace gpusched::placement {

struct DraOptions {
  std::vector<std::string> gpu_drivers = {"gpu.nvidia.com"};
  int64_t max_steps = 200'000;  // allocator steps per claim set and node
  std::string topology_attribute = "resource.kubernetes.io/pcieRoot";
  // Devices held besides the ClusterState's allocated claims (owner mode's writes that the
  // cluster does not show yet); null: none.
  const dra::AllocatedDevices* also_allocated = nullptr;
  // True where gpusched allocates its ranked choice (DRA owner mode); false where kube-scheduler's
  // allocator does (the compatible choice). Decides which set DraVerdict::links judges.
  bool ranked_allocated = false;
};


class DraPlanner {
 public:
  // REQUIRES: state, pod and programs outlive the planner, and `special` (null: none) too: the
  // pod's special claim for extended resources served by DRA (dra/extended_resources.h), to
  // allocate after its own claims.
  DraPlanner(const dra::ClusterState& state, const Pod& pod, dra::cel::ProgramCache* programs, DraOptions options = {},
             const dra::ResourceClaim* special = nullptr);
  // Not copyable: compiled_ is keyed by addresses inside aligned_.
  DraPlanner(const DraPlanner&) = delete;
  DraPlanner& operator=(const DraPlanner&) = delete;

  // Why the pod cannot be placed anywhere yet (a claim missing or not generated), or "".
  const std::string& problem() const { return problem_; }

  // The verdict on `node`; with `rank`, also the ranked choice and the score.
  DraVerdict Evaluate(const NodeState& node, bool rank) const;
  // The same verdict through `cache`, which must hold verdicts for this planner's shape() only
  // (the caller keys caches by it): reused while the node (NodeState::generation) and its DRA
  // inputs (ClusterState::NodeVersion) are unchanged, computed and kept otherwise. `pos` is the
  // node's snapshot position. Falls back to Evaluate when !cacheable().
  std::shared_ptr<const DraVerdict> Evaluate(const NodeState& node, uint32_t pos, bool rank, DraVerdictCache* cache) const;

  // The verdict on a what-if view of a node (what_if.h): its state, and the devices it holds
  // instead of the cluster's when it says so (some claims deallocated, others allocated), the
  // view's holds that bind the pod besides. Never cached; where the view holds devices of its own,
  // a refusal by the allocator says only that no device set fits.
  DraVerdict Evaluate(const WhatIf& view, bool rank) const;

  // True if verdicts depend only on shape() and the node: the pod has no claim allocated already
  // (those are checked against the pod itself) and nothing is held besides the cluster's.
  bool cacheable() const { return problem_.empty() && allocated_.empty() && options_.also_allocated == nullptr; }
  // The claims to allocate as the allocator sees them: their namespaces, requests, constraints
  // and configs, names replaced by placeholders. Pods whose shapes are equal get the same
  // verdicts (the names are put back into reasons afterwards).
  const std::vector<dra::ResourceClaim>& shape() const { return anonymous_; }

  // The pod's claims: those to allocate (in pod order, as DraVerdict's results) and those
  // allocated already.
  const std::vector<const dra::ResourceClaim*>& to_allocate() const { return to_allocate_; }
  const std::vector<const dra::ResourceClaim*>& allocated() const { return allocated_; }

 private:
  bool IsGpu(std::string_view driver) const;
  // Evaluate's verdict with placeholders where the claims' names go; `held`: the devices held
  // instead of the cluster's, or null.
  DraVerdict EvaluateAnonymous(const NodeState& node, bool rank, const dra::AllocatedDevices* held = nullptr) const;
  // True if every hold on `node` binds the pod (nomination.h): then its verdict is the same for
  // every pod of its shape judged there.
  bool AllHoldsBind(const NodeState& node) const;
  // `base` with the devices of the DRA holds on `node` that bind the pod added (in `merged`), or
  // `base` itself when none does. `merged` keeps only the devices of `pools` (the node's), which
  // are all the allocator reads: a copy of the cluster's every device per node was most of a
  // gang plan's time.
  const dra::AllocatedDevices* WithHolds(const NodeState& node, const dra::AllocatedDevices* base, const dra::NodePools& pools,
                                         dra::AllocatedDevices* merged) const;
  // `reason` with the placeholders replaced by the claims' names.
  std::string Personal(std::string reason) const;
  // Why `node` cannot use the pod's allocated claims, or nullopt.
  std::optional<NodeVerdict> CheckAllocated(const dra::NodeInfo& info) const;
  // Why GPUs held by `drivers` (and the allocated claims) cannot go to `node`, or nullopt.
  std::optional<NodeVerdict> CheckMode(const NodeState& node, const std::set<std::string>& drivers) const;
  // The devices held: the cluster's, plus options_.also_allocated into `merged`.
  const dra::AllocatedDevices* Held(dra::AllocatedDevices* merged) const;
  // The allocator on the node, for claims, restricted to `only` (null: not).
  using Run = std::function<dra::AllocatorOutcome(const std::vector<const dra::ResourceClaim*>&, const dra::DeviceRestriction*)>;
  // Fills v.ranked, v.topology_aligned, v.nvlink_connected, v.score, v.gpu_view and v.gpus_taken:
  // NVLink-connected GPUs for the multi-GPU requests where the node has islands and `held` leaves
  // such sets free (dra_links.h), else the claims aligned under one PCIe root, else compat.
  void Rank(const NodeState& node, const dra::AllocatedDevices& held, const Run& run, DraVerdict* v) const;
  // Rank's choices: the NVLink-connected one (false when there is none), and the PCIe-aligned one
  // or compat.
  bool RankLinked(const NodeState& node, const dra::AllocatedDevices& held, const Run& run, DraVerdict* v) const;
  void RankAligned(const Run& run, DraVerdict* v) const;
  double PackingScore(const NodeState& node, const std::vector<dra::AllocationResult>& chosen) const;
  // The node's GPUs (the devices of DraOptions::gpu_drivers pinned to it) as the scoring library
  // sees a node. A device that consumes no counters is one GPU, 1000 milli free unless the
  // cluster's claims hold it. Partitionable devices (MIG) are one GPU per shared counter set, free
  // by the mean over its counters of the share left after the held devices' consumption (the
  // full GPU consumes all of it; a MIG device its compute, memory and memory slices), wherever
  // the pool publishes the set (its own slice, 1.35+, or beside the devices). nullopt beyond
  // scoring::kMaxGpus GPUs.
  std::optional<scoring::NodeView> GpuView(const NodeState& node) const;
  // What `v`'s ranked choice takes as the scoring library counts a pod: {GPUs, milli of each}.
  // Whole devices, or full counter sets each on its own, give {n, 1000}; one partition {1, its
  // share of its set}; {0, 0} for what the library cannot express (several partitions).
  std::pair<int, int32_t> Taken(const NodeState& node, const DraVerdict& v) const;
  // Calls f(taken, device) for each GPU device pinned to `node`, taken: held by the cluster's
  // claims.
  template <typename F>
  void ForEachGpuDevice(const NodeState& node, F&& f) const;
  // True if `node`'s GPU devices come from one slice. Where kube-scheduler allocates, its first
  // fit is known exactly only then: upstream takes a node's pools in map order, gpusched by name.
  // Nor where devices are held for a nominated pod (WithHolds): upstream knows no such holds.
  // DraVerdict::links is left unknown in both cases.
  bool OneGpuSlice(const NodeState& node) const;
  // Calls f(slice) for each slice of a GPU driver pinned to `node`.
  template <typename F>
  void ForEachGpuSlice(const NodeState& node, F&& f) const;

  const dra::ClusterState& state_;
  const Pod& pod_;
  dra::cel::ProgramCache* programs_;
  DraOptions options_;
  std::string problem_;
  std::vector<const dra::ResourceClaim*> allocated_;    // claims already allocated
  std::vector<const dra::ResourceClaim*> to_allocate_;  // in pod order
  std::vector<dra::ResourceClaim> anonymous_;            // to_allocate_ as shape() describes
  std::vector<const dra::ResourceClaim*> anonymous_ptrs_;
  bool multi_gpu_ = false;  // some request asks two or more GPUs (dra_links.h HasMultiGpuRequest)
  std::vector<dra::ResourceClaim> aligned_;              // anonymous_ plus topology constraints
  // Every selector of the claims above and of their classes, compiled once for all nodes.
  std::unordered_map<const std::string*, const dra::cel::Program*> compiled_;
  std::vector<dra::cel::ProgramPtr> keep_;  // owners of compiled_'s programs
};

}  // namespace gpusched::placement
