// File: node_state.cc
//
// Building a NodeState: the GPU layout from the published description or the aggregates, each
// allocation booked onto its GPUs (mGPU phases included), condition and switch blockers, packed
// allocations; and the usage what-ifs (add a pod, a packed use, a hold).
#include "gpusched/placement/node_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <set>

#include "gpusched/model/names.h"
#include "gpusched/placement/kinds.h"
#include "gpusched/placement/node_ranking.h"
#include "gpusched/placement/pod_gpu_use.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/whole_gpu_sets.h"

namespace gpusched::placement {
namespace {

constexpr size_t kBlockersInReason = 3;

std::string PodKey(const Allocation& a) { return fmt::format("{}/{}", a.pod_namespace, a.pod_name); }

GpuSlot SlotOf(const GpuDevice& d) {
  return GpuSlot{.index = d.index,
                 .numa_node = d.numa_node,
                 .memory_mib = d.memory_mib,
                 .healthy = d.healthy && !d.mig_enabled,
                 .mig = d.mig_enabled};
}

// Fills state->gpus and devices from the node's published GPUs, then lets the kind of the node's
// mode read what the node offers (Kind::ReadLayout). Returns the reason the description cannot
// be trusted, or "".
std::string BuildLayout(NodeState* state) {
  const Node& node = state->node;
  if (!node.spec_error.empty()) return node.spec_error;
  state->whole_total = node.allocatable.nvidia_gpus;
  const Kind* kind = KindFor(state->mode);
  if (node.published_gpus) {
    std::vector<GpuDevice> devices = *node.published_gpus;
    std::sort(devices.begin(), devices.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    for (size_t i = 0; i < devices.size(); ++i) {
      const GpuDevice& d = devices[i];
      if (d.index < 0) return fmt::format("annotation {}: GPU index {} is negative", names::kGpuDevicesAnnotation, d.index);
      if (i > 0 && devices[i - 1].index == d.index) {
        return fmt::format("annotation {}: GPU index {} is listed twice", names::kGpuDevicesAnnotation, d.index);
      }
      if (std::string why = kind != nullptr ? kind->CheckDevice(d) : ""; !why.empty()) return why;
      AddGpu(d, state);
    }
  }
  return kind != nullptr ? kind->ReadLayout(state) : "";
}

// Returns the slot with device index `index` in `gpus` (sorted by index), or nullptr.
template <typename Slots>
auto FindSlot(Slots& gpus, int index) -> decltype(&gpus[0]) {
  // Devices are usually numbered 0..n-1: then the index is the position.
  if (index >= 0 && static_cast<size_t>(index) < gpus.size() && gpus[static_cast<size_t>(index)].index == index) {
    return &gpus[static_cast<size_t>(index)];
  }
  auto it = std::lower_bound(gpus.begin(), gpus.end(), index,
                             [](const GpuSlot& s, int i) { return s.index < i; });
  return it != gpus.end() && it->index == index ? &*it : nullptr;
}

// Books what one pod uses of GPU `slot`.
void BookOnSlot(const GpuUse& use, GpuSlot* slot) {
  slot->instances += use.instances;
  if (use.exclusive) {
    slot->exclusive = true;
    slot->used_milli += kMilliPerGpu;
    slot->used_mib += slot->memory_mib;
  } else {
    slot->used_milli += use.milli;
    slot->used_mib += use.mib;
  }
}

// Books what one pod uses of one GPU. Returns false if the node has no GPU `use.index`.
bool BookOnGpu(const GpuUse& use, NodeState* state) {
  GpuSlot* slot = FindSlot(state->gpus, use.index);
  if (slot == nullptr) {
    state->unassigned_milli += use.milli;
    state->unassigned_mib += use.mib;
    return false;
  }
  BookOnSlot(use, slot);
  return true;
}

// Books an mGPU allocation's containers onto the GPUs. Returns a reason if an index is unknown.
std::string BookMgpu(const Allocation& a, NodeState* state) {
  std::string problem;
  bool phases = false;
  for (const ContainerAssignment& c : a.placement.containers) {
    phases = phases || c.transient();
    if (!c.gpu_indices.empty()) continue;
    // Recorded without a GPU index (no or a malformed result annotation): the node agent's choice
    // is unknown, so no GPU of this node can be trusted to be free.
    state->unassigned_milli += c.milli_per_gpu;
    state->unassigned_mib += c.mib_per_gpu;
    if (problem.empty()) {
      problem = fmt::format("pod {} container {} has no valid {}{} annotation; its GPUs are unknown", PodKey(a),
                            c.container, names::kGpuIndexContainerPrefix, c.container);
    }
  }
  auto book = [&](const GpuUse& use) {
    if (!BookOnGpu(use, state) && problem.empty()) {
      problem = fmt::format("pod {} holds GPU index {} which the node does not have", PodKey(a), use.index);
    }
  };
  if (phases) {
    for (const GpuUse& use : PodGpuUse(a.placement.containers)) book(use);
    return problem;
  }
  // One phase: the containers' shares add up (the common case, without building a map).
  for (const ContainerAssignment& c : a.placement.containers) {
    for (int index : c.gpu_indices) {
      book(GpuUse{.index = index, .milli = c.milli_per_gpu, .mib = c.mib_per_gpu, .instances = 1,
                  .exclusive = c.exclusive});
    }
  }
  return problem;
}

// Sets the node's share totals from its GPUs (healthy ones, on a node whose kind shares GPUs) and
// unassigned use.
void SumUsage(NodeState* state) {
  bool shares = HasPayload(state->mode, Payload::kShares);
  state->capacity_milli = state->capacity_mib = state->used_milli = state->used_mib = 0;
  for (const GpuSlot& s : state->gpus) {
    if (!s.healthy || !shares) continue;
    state->capacity_milli += kMilliPerGpu;
    state->capacity_mib += s.memory_mib;
    state->used_milli += s.used_milli;
    state->used_mib += s.used_mib;
  }
  state->used_milli += state->unassigned_milli;
  state->used_mib += state->unassigned_mib;
}

// Books what `a` holds by its payload, as BuildNodeStateSharing does; returns a reason if a GPU
// index is unknown. Named devices are booked by the DRA cluster state, not here.
std::string Book(const Allocation& a, NodeState* state) {
  if (HasPayload(a.mode, Payload::kCount)) state->whole_used += a.placement.whole_gpus;
  if (HasPayload(a.mode, Payload::kShares)) return BookMgpu(a, state);
  return "";
}

std::string SwitchingReason(const NodeState& state) {
  std::set<std::string_view> from;
  for (const Blocker& b : state.blockers) from.insert(ModeName(b.mode));
  std::vector<std::string_view> shown;
  for (size_t i = 0; i < state.blockers.size() && i < kBlockersInReason; ++i) shown.push_back(state.blockers[i].pod_key);
  std::string more = state.blockers.size() > kBlockersInReason
                         ? fmt::format(" and {} more", state.blockers.size() - kBlockersInReason)
                         : "";
  return fmt::format("node is switching from {} to {}: {} GPU pod{} of the old mode still run{} ({}{}); it takes no "
                     "new GPU pods until they are gone",
                     fmt::join(from, ","), ModeName(state.mode), state.blockers.size(),
                     state.blockers.size() == 1 ? "" : "s", state.blockers.size() == 1 ? "s" : "",
                     fmt::join(shown, ", "), more);
}

}  // namespace

std::string_view ConditionName(NodeCondition condition) {
  switch (condition) {
    case NodeCondition::kReady:
      return "ready";
    case NodeCondition::kSwitching:
      return "switching";
    case NodeCondition::kInvalid:
      return "invalid";
    case NodeCondition::kInconsistent:
      return "inconsistent";
  }
  return "invalid";
}

const GpuSlot* NodeState::FindGpu(int index) const {
  return FindSlot(gpus, index);
}

const Allocation* NodeState::FindAllocation(std::string_view uid) const {
  uint64_t key = std::hash<std::string_view>{}(uid);
  auto it = std::lower_bound(uid_keys.begin(), uid_keys.end(), std::make_pair(key, uint32_t{0}));
  for (; it != uid_keys.end() && it->first == key; ++it) {
    if (allocations[it->second].pod_uid == uid) return &allocations[it->second];
  }
  return nullptr;
}

NodeState BuildNodeState(Node node, std::vector<Allocation> allocations) {
  std::vector<AllocationPtr> shared;
  shared.reserve(allocations.size());
  for (Allocation& a : allocations) shared.push_back(std::make_shared<const Allocation>(std::move(a)));
  return BuildNodeStateSharing(std::move(node), std::move(shared));
}

// Fills state->packed and state->packed_uses from state->allocations.
void Pack(NodeState* state) {
  const std::vector<AllocationPtr>& all = state->allocations.shared();
  std::vector<uint32_t> by_uid(all.size());
  for (uint32_t i = 0; i < by_uid.size(); ++i) by_uid[i] = i;
  std::sort(by_uid.begin(), by_uid.end(), [&](uint32_t a, uint32_t b) { return all[a]->pod_uid < all[b]->pod_uid; });
  state->packed.resize(all.size());
  for (uint32_t rank = 0; rank < by_uid.size(); ++rank) state->packed[by_uid[rank]].uid_rank = rank;
  for (size_t i = 0; i < all.size(); ++i) {
    const Allocation& a = *all[i];
    PackedAllocation& p = state->packed[i];
    p.priority = a.priority;
    p.terminating = a.terminating;
    p.origin = a.origin;
    p.first_use = static_cast<uint32_t>(state->packed_uses.size());
    if (!a.problem.empty()) continue;  // books nothing, as AddUse
    if (HasPayload(a.mode, Payload::kCount)) p.whole_gpus = static_cast<uint16_t>(std::clamp<int64_t>(a.placement.whole_gpus, 0, UINT16_MAX));
    if (!HasPayload(a.mode, Payload::kShares)) continue;
    for (const GpuUse& u : PodGpuUse(a.placement.containers)) {
      state->packed_uses.push_back(PackedUse{.index = static_cast<int16_t>(u.index),
                                             .instances = static_cast<uint8_t>(std::min(u.instances, 255)),
                                             .exclusive = u.exclusive,
                                             .milli = static_cast<int32_t>(u.milli),
                                             .mib = static_cast<int32_t>(u.mib)});
    }
    p.uses = static_cast<uint16_t>(state->packed_uses.size() - p.first_use);
  }
  state->uid_keys.resize(all.size());
  for (uint32_t i = 0; i < all.size(); ++i) state->uid_keys[i] = {std::hash<std::string_view>{}(all[i]->pod_uid), i};
  std::sort(state->uid_keys.begin(), state->uid_keys.end());
  state->by_importance.resize(all.size());
  for (uint32_t i = 0; i < all.size(); ++i) state->by_importance[i] = i;
  std::sort(state->by_importance.begin(), state->by_importance.end(), [&](uint32_t a, uint32_t b) {
    const PackedAllocation& x = state->packed[a];
    const PackedAllocation& y = state->packed[b];
    return x.priority != y.priority ? x.priority > y.priority : x.uid_rank < y.uid_rank;
  });
}

NodeState BuildNodeStateSharing(Node node, std::vector<AllocationPtr> shared) {
  NodeState state;
  state.node = std::move(node);
  state.mode = ModeFromLabel(state.node.mode_label);
  state.compute_policy = state.node.compute_policy_label.value_or(std::string(names::kPolicyFixedShare));
  std::string layout_problem = BuildLayout(&state);
  state.links = LinksOf(state.devices);

  std::sort(shared.begin(), shared.end(), [](const AllocationPtr& a, const AllocationPtr& b) {
    return std::tie(a->pod_namespace, a->pod_name, a->pod_uid) < std::tie(b->pod_namespace, b->pod_name, b->pod_uid);
  });
  AllocationList allocations(std::move(shared));
  std::string booking_problem;
  std::string pod_problem;
  for (const Allocation& a : allocations) {
    if (!a.problem.empty()) {
      if (pod_problem.empty()) pod_problem = a.problem;
      continue;
    }
    std::string p = Book(a, &state);
    if (booking_problem.empty()) booking_problem = std::move(p);
    if (a.mode != state.mode) state.blockers.push_back(Blocker{PodKey(a), a.pod_uid, a.mode});
  }
  state.allocations = std::move(allocations);
  Pack(&state);
  // Read only for whole GPUs on nodes with islands (whole_gpu_sets.h); not worked out elsewhere.
  if (HasPayload(state.mode, Payload::kCount) && state.links != nullptr && state.links->islands) {
    state.published_free = FreeByPublishedPods(state);
  }

  SumUsage(&state);
  state.view = ScoringView(state);

  const Kind* kind = KindFor(state.mode);
  std::string kind_problem = kind != nullptr ? kind->NodeProblem(state) : "";
  if (kind == nullptr) {
    state.condition = NodeCondition::kInvalid;
    state.condition_reason =
        fmt::format("node label {}=\"{}\" is not a GPU scheduling mode (want {}); the node takes no GPU pods",
                    names::kScheduleModeLabel, state.node.mode_label.value_or(""), LabelValues());
  } else if (!kind_problem.empty()) {
    state.condition = NodeCondition::kInvalid;
    state.condition_reason = std::move(kind_problem);
  } else if (!pod_problem.empty()) {
    state.condition = NodeCondition::kInconsistent;
    state.condition_reason = fmt::format("node GPU inventory is inconsistent: {}", pod_problem);
  } else if (!state.blockers.empty()) {
    state.condition = NodeCondition::kSwitching;
    state.condition_reason = SwitchingReason(state);
  } else if (!layout_problem.empty() || !booking_problem.empty()) {
    state.condition = NodeCondition::kInconsistent;
    state.condition_reason = fmt::format("node GPU inventory is inconsistent: {}",
                                         layout_problem.empty() ? booking_problem : layout_problem);
  }
  return state;
}

void AddGpu(const GpuDevice& device, NodeState* state) {
  state->gpus.push_back(SlotOf(device));
  state->devices.push_back(device);
}

NodeState EmptyUsage(const NodeState& node) {
  NodeState usage;
  ResetUsage(node, &usage);
  return usage;
}

void ResetUsage(const NodeState& node, NodeState* usage) {
  usage->mode = node.mode;
  usage->condition = node.condition;
  usage->whole_total = node.whole_total;
  usage->whole_used = 0;
  usage->compute_policy = node.compute_policy;
  usage->gpus.assign(node.gpus.begin(), node.gpus.end());
  usage->links = node.links;
  usage->generation = 0;
  usage->unassigned_milli = 0;
  usage->unassigned_mib = 0;
  for (GpuSlot& s : usage->gpus) {
    s.exclusive = false;
    s.instances = 0;
    s.used_milli = 0;
    s.used_mib = 0;
  }
  SumUsage(usage);
}

void AddUse(const Allocation& a, NodeState* usage) {
  if (!a.problem.empty()) return;  // as BuildNodeStateSharing: such a pod makes the node inconsistent
  Book(a, usage);
  SumUsage(usage);
}

void AddPackedUse(const NodeState& node, size_t i, NodeState* usage, std::vector<std::pair<size_t, GpuSlot>>* before) {
  const PackedAllocation& p = node.packed[i];
  usage->whole_used += p.whole_gpus;
  // The totals move with the slots (SumUsage's sums, kept without summing again: a what-if adds
  // dozens of pods one at a time). Every index is the node's (a ready node books no other).
  bool shares = HasPayload(usage->mode, Payload::kShares);
  for (uint32_t k = p.first_use; k < p.first_use + p.uses; ++k) {
    const PackedUse& u = node.packed_uses[k];
    GpuSlot* slot = FindSlot(usage->gpus, u.index);
    if (slot == nullptr) continue;
    if (before != nullptr) before->emplace_back(static_cast<size_t>(slot - usage->gpus.data()), *slot);
    int64_t milli = slot->used_milli, mib = slot->used_mib;
    BookOnSlot(GpuUse{.index = u.index, .milli = u.milli, .mib = u.mib, .instances = u.instances, .exclusive = u.exclusive}, slot);
    if (!shares || !slot->healthy) continue;
    usage->used_milli += slot->used_milli - milli;
    usage->used_mib += slot->used_mib - mib;
  }
}

void AddHold(Allocation hold, NodeState* state) {
  AddUse(hold, state);
  state->view = ScoringView(*state);
  state->holds.push_back(std::move(hold));
}

}  // namespace gpusched::placement
