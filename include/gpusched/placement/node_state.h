// File: node_state.h
//
// NodeState: everything placement needs to know about one node, derived from the Node object and
// the allocations booked on it: its mode and condition (ready, switching, invalid, inconsistent),
// its GPUs with their usage, whole-GPU counts, and the pods that block a mode switch.
//
// A NodeState is immutable once built; snapshots share them between readers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpusched/model/allocation.h"
#include "gpusched/model/allocation_list.h"
#include "gpusched/model/gpu.h"
#include "gpusched/model/node.h"
#include "gpusched/model/node_mode.h"
#include "gpusched/model/node_uses.h"
#include "gpusched/model/units.h"
#include "gpusched/placement/gpu_links.h"
#include "gpusched/scoring/node_view.h"

namespace gpusched::placement {

enum class NodeCondition {
  kReady,         // serves pods of its mode
  kSwitching,     // its label names a mode, but GPU pods placed under another mode still run
  kInvalid,       // its label is not a GPU mode
  kInconsistent,  // its published GPUs contradict its allocatable resources or its allocations
};

std::string_view ConditionName(NodeCondition condition);

// One physical GPU and what is booked on it: the hot data placement scans, kept small (40 bytes)
// so that a node's GPUs sit in a few cache lines. Names and UUIDs live in NodeState::devices.
struct GpuSlot {
  int index = 0;           // device index on the node
  int numa_node = -1;
  int64_t memory_mib = 0;
  bool healthy = true;     // false also for a MIG-enabled GPU: it takes no new pods either
  bool mig = false;        // MIG enabled (GpuDevice::mig_enabled)
  bool exclusive = false;  // held whole by one container
  int instances = 0;       // mGPU containers on this GPU
  int64_t used_milli = 0;
  int64_t used_mib = 0;

  int64_t free_milli() const { return kMilliPerGpu - used_milli; }
  int64_t free_mib() const { return memory_mib - used_mib; }
  bool idle() const { return instances == 0; }

  bool operator==(const GpuSlot&) const = default;
};

// One allocation as victim choice reads it (victims.h), packed: a preempt walks every pod of
// hundreds of nodes, and the Allocation objects, scattered in memory, would miss the cache at
// each. Its use of the GPUs is NodeState::packed_uses[first_use, first_use + uses) (PodGpuUse's
// per-GPU use; exact on a ready node, where every container has its GPU indices).
struct PackedAllocation {
  int32_t priority = 0;
  uint32_t uid_rank = 0;   // the position of the pod's UID among the node's, ascending
  uint32_t first_use = 0;
  uint16_t uses = 0;
  uint16_t whole_gpus = 0;  // whole-GPU pods: nvidia.com/gpu booked
  bool terminating = false;
  AllocationOrigin origin = AllocationOrigin::kObserved;
};

// One allocation's use of one GPU, packed (PackedAllocation).
struct PackedUse {
  int16_t index = 0;
  uint8_t instances = 0;
  bool exclusive = false;
  int32_t milli = 0;
  int32_t mib = 0;
};

// A pod that keeps a node from switching modes.
struct Blocker {
  std::string pod_key;  // "namespace/name"
  std::string pod_uid;
  NodeMode mode;

  bool operator==(const Blocker&) const = default;
};

struct NodeState {
  // Hot: what every filter call reads, first, so that it shares cache lines.
  NodeMode mode = NodeMode::kNvidia;
  NodeCondition condition = NodeCondition::kReady;
  int64_t whole_total = 0;  // nvidia.com/gpu the node offers
  int64_t whole_used = 0;   // nvidia.com/gpu booked by whole-GPU pods
  // Healthy mGPU capacity and its use (unassigned usage included).
  int64_t capacity_milli = 0;
  int64_t capacity_mib = 0;
  int64_t used_milli = 0;
  int64_t used_mib = 0;
  std::string compute_policy;  // the node's mGPU compute policy (label, default fixed-share)
  std::vector<GpuSlot> gpus;   // by ascending device index
  // The GPUs' NVLink islands and PCIe switches over positions in `gpus` (gpu_links.h); null when
  // the node publishes none that tell one set from another.
  std::shared_ptr<const GpuLinks> links;
  // The GPUs free by the node agent's PodResources reading against the whole-GPU pods bound here
  // (whole_gpu_sets.h FreeByPublishedPods), worked out once per build on whole-GPU nodes with
  // NVLink islands, where filter reads it; nullopt when unknown, and on other nodes.
  std::optional<GpuSet> published_free;
  scoring::NodeView view;      // what the node policies score (node_ranking.h)
  // Unique per state the inventory builds (a new number for every rebuild of the node); 0 for a
  // state built elsewhere. Caches of per-node results (score_cache.h) are keyed by it.
  uint64_t generation = 0;

  // Cold: reasons, descriptions and bookkeeping for /debug and failures.
  std::string condition_reason;    // empty when ready
  int64_t unassigned_milli = 0;    // mGPU compute booked without a usable GPU index
  int64_t unassigned_mib = 0;
  std::vector<GpuDevice> devices;  // gpus[i] is devices[i]: UUID, model
  AllocationList allocations;           // every allocation on the node, by pod namespace/name
  std::vector<PackedAllocation> packed;  // allocations[i] as victim choice reads it
  std::vector<PackedUse> packed_uses;
  std::vector<uint32_t> by_importance;   // positions into packed: decreasing priority, then UID
  // (hash of the pod's UID, position into allocations), ascending: FindAllocation's index, which
  // reads one allocation (they are scattered in memory) per pod looked up.
  std::vector<std::pair<uint64_t, uint32_t>> uid_keys;
  // GPUs held for pending pods nominated to this node (nomination.h), counted as used; not in
  // `allocations`: no pod runs on them yet, and none can be evicted from them.
  std::vector<Allocation> holds;
  // Every bound, non-terminal pod's use of the node besides GPUs (node_uses.h), GPU pods or
  // not, for kube-scheduler's NodeResourcesFit in preemption; shared between states. Null: none.
  std::shared_ptr<const NodeUses> uses;
  // Pending pods nominated to this node (status.nominatedNodeName), GPU pods or not: what they
  // ask besides GPUs counts against pods of lower or equal priority, as kube-scheduler's
  // RunFilterPluginsWithNominatedPods counts it (resource_fit.h). Empty: none.
  std::vector<PodUse> nominated;
  // The namespace, labels and controller of bound pod `uid` (from uses), or nullptr.
  const PodLabels* LabelsOf(std::string_view uid) const {
    const PodUse* use = uses != nullptr ? uses->Find(uid) : nullptr;
    return use != nullptr ? use->labels.get() : nullptr;
  }
  std::vector<Blocker> blockers;        // GPU pods of a mode other than the label's
  Node node;

  bool ready() const { return condition == NodeCondition::kReady; }
  // Returns the GPU with device index `index`, or nullptr.
  const GpuSlot* FindGpu(int index) const;
  // Returns the allocation of pod `uid` on this node, or nullptr.
  const Allocation* FindAllocation(std::string_view uid) const;
};

// Returns the state of `node` with `allocations` booked on it, sharing them. Pure.
// REQUIRES: every allocation's node_name is node.name; pod UIDs are distinct; none is null.
NodeState BuildNodeStateSharing(Node node, std::vector<AllocationPtr> allocations);
// The same with the allocations copied in.
NodeState BuildNodeState(Node node, std::vector<Allocation> allocations);

// Appends `device` to state->devices and its slot to state->gpus (Kind::ReadLayout).
// REQUIRES: its index is above every GPU's already there.
void AddGpu(const GpuDevice& device, NodeState* state);

// What-ifs on a node's use (victims.h): EmptyUsage returns what Planner::Evaluate reads of `node`
// (mode, condition, compute policy, whole-GPU total, GPU slots and mGPU totals) with nothing
// booked, and AddUse books one allocation there exactly as BuildNodeStateSharing does. The
// result has no node object, allocations, blockers or scoring view: it is for Evaluate only.
// REQUIRES: `node` was built by BuildNodeState*.
NodeState EmptyUsage(const NodeState& node);
// EmptyUsage into *usage, reusing its buffers. REQUIRES: *usage came from EmptyUsage or
// ResetUsage (or is default): the fields they do not set are unset there.
void ResetUsage(const NodeState& node, NodeState* usage);
void AddUse(const Allocation& a, NodeState* usage);
// AddUse of node.allocations[i] from its packed form. Where `before` is given, appends to it each
// GPU slot changed (its position in usage->gpus and its value before; a GPU the pod uses twice
// comes twice), so that the change can be undone. REQUIRES: node is ready.
void AddPackedUse(const NodeState& node, size_t i, NodeState* usage,
                  std::vector<std::pair<size_t, GpuSlot>>* before = nullptr);
// Books `hold` on `state` as used (its scoring view included) and appends it to state->holds.
void AddHold(Allocation hold, NodeState* state);

}  // namespace gpusched::placement
