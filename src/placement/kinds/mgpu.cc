// File: mgpu.cc
//
// The mGPU kind's hooks: which pods ask for shares, a node's GPUs (published per GPU, or split
// evenly from its allocatable totals), the compute policy a node must name, the commit-time check
// of each GPU a placement names, and the GPU index annotations bind writes and observation reads.
#include "gpusched/placement/kinds/mgpu.h"

#include <fmt/format.h>

#include "gpusched/model/names.h"
#include "gpusched/model/units.h"
#include "gpusched/placement/allocation_record.h"
#include "gpusched/placement/node_links.h"
#include "gpusched/placement/planner.h"
#include "gpusched/placement/pod_gpu_use.h"
#include "placement/kinds/mgpu_rules.h"
#include "placement/kinds/mgpu_search.h"

namespace gpusched::placement {
namespace {

// The node's GPUs from its allocatable totals, taken as identical (memory split evenly).
std::string LayoutFromTotals(NodeState* state) {
  const NodeAllocatable& alloc = state->node.allocatable;
  if (alloc.mgpu_core_percent % kCorePercentPerGpu != 0) {
    return fmt::format("allocatable {}={} is not a multiple of 100 (100 per GPU)", names::kMgpuCore,
                       alloc.mgpu_core_percent);
  }
  int64_t count = alloc.mgpu_core_percent / kCorePercentPerGpu;
  if (count > 0 && alloc.mgpu_memory_mib < count * kMinPartialMemoryMib) {
    return fmt::format("allocatable {}={} MiB is too small for {} GPUs", names::kMgpuMemory, alloc.mgpu_memory_mib, count);
  }
  for (int64_t i = 0; i < count; ++i) {
    AddGpu(GpuDevice{.index = static_cast<int>(i), .model = state->node.gpu_product, .memory_mib = alloc.mgpu_memory_mib / count},
           state);
  }
  return "";
}

// Checks the published GPUs against the node's allocatable totals.
std::string CheckPublished(const NodeState& state) {
  const NodeAllocatable& alloc = state.node.allocatable;
  int64_t healthy = 0, healthy_mib = 0;
  bool any_mig = false;
  for (const GpuDevice& d : state.devices) {
    any_mig |= d.mig_enabled;
    if (!d.healthy || d.mig_enabled) continue;  // the device plugin serves a MIG GPU's slices, not the GPU
    ++healthy;
    healthy_mib += d.memory_mib;
  }
  std::string_view counted = any_mig ? "healthy GPUs without MIG" : "healthy GPUs";
  if (alloc.mgpu_core_percent != healthy * kCorePercentPerGpu) {
    return fmt::format("allocatable {}={} does not match {} {} in annotation {} (want {})", names::kMgpuCore,
                       alloc.mgpu_core_percent, healthy, counted, names::kGpuDevicesAnnotation, healthy * kCorePercentPerGpu);
  }
  if (alloc.mgpu_memory_mib != healthy_mib) {
    return fmt::format("allocatable {}={} MiB does not match the {} MiB of {} in annotation {}", names::kMgpuMemory,
                       alloc.mgpu_memory_mib, healthy_mib, counted, names::kGpuDevicesAnnotation);
  }
  return "";
}

// The commit-time check of one GPU the placement uses.
Status CheckGpu(const NodeState& node, const GpuUse& use) {
  const GpuSlot* s = node.FindGpu(use.index);
  if (s == nullptr) return FailedPreconditionError(fmt::format("GPU{} does not exist on the node", use.index));
  if (!s->healthy) return FailedPreconditionError(fmt::format("GPU{} {}", use.index, s->mig ? "has MIG enabled" : "is unhealthy"));
  if (s->exclusive) return FailedPreconditionError(fmt::format("GPU{} is held whole by another container", use.index));
  if (use.conflict) {
    return FailedPreconditionError(
        fmt::format("GPU{} is held whole by one of the pod's containers and shared with another", use.index));
  }
  if (use.exclusive) {
    if (s->idle()) return OkStatus();
    return FailedPreconditionError(fmt::format("GPU{} is not idle ({} instances)", use.index, s->instances));
  }
  if (s->instances + use.instances > kMaxInstancesPerGpu) {
    return FailedPreconditionError(fmt::format("GPU{} already runs {} mGPU instances, the pod adds {} (max {})", use.index,
                                               s->instances, use.instances, kMaxInstancesPerGpu));
  }
  if (s->free_milli() < use.milli || s->free_mib() < use.mib) {
    return FailedPreconditionError(fmt::format("GPU{} has {}% core and {} MiB free, the pod needs {}% and {} MiB there",
                                               use.index, CorePercentFromMilli(s->free_milli()), s->free_mib(),
                                               CorePercentFromMilli(use.milli), use.mib));
  }
  return OkStatus();
}

class MgpuKind final : public Kind {
 public:
  MgpuKind() : Kind(*KindOf(RequestKind::kMgpu)) {}

  bool Asks(const Pod& pod) const override {
    return SetsPositive(pod, &GpuResources::mgpu_core_percent) || SetsPositive(pod, &GpuResources::mgpu_memory_mib);
  }
  std::string_view Resources() const override { return "vke.volcengine.com/mgpu-*"; }
  void Analyze(const Pod& pod, PodRequest* out, Violations* invalid, Violations* unplaceable) const override {
    AnalyzeMgpuPod(pod, out, invalid, unplaceable);
  }
  PodRequest RequestHeldBy(const Allocation& a, std::string_view compute_policy) const override {
    return MgpuRequestHeldBy(a, compute_policy);
  }

  std::optional<GpuSet> FreeGpuSet(const NodeState& node) const override {
    GpuSet free = 0;
    for (size_t p = 0; p < node.gpus.size() && p < 64; ++p) {
      const GpuSlot& s = node.gpus[p];
      if (s.healthy && !s.exclusive && s.instances == 0) free |= GpuSet{1} << p;
    }
    return free;
  }

  std::string LinksNote(const NodeState& node, const PodRequest& request, const PlacementOptions& options) const override {
    Planner planner(options);
    NodeVerdict v = planner.Evaluate(request, node);
    std::optional<GpuSet> idle = FreeGpuSet(node);
    return v.fits() ? DescribeContainerSets(node, v.placement, *idle) : "";
  }

  void Record(const Pod& pod, const PodRequest& request, Placement* placement) const override {
    for (const MgpuContainerRequest& c : request.containers) {
      ContainerAssignment ca{.container = c.container, .exclusive = c.whole_card, .init_position = c.init_position,
                             .sidecar = c.sidecar};
      auto it = pod.annotations.find(fmt::format("{}{}", names::kGpuIndexContainerPrefix, c.container));
      if (it != pod.annotations.end()) ca.gpu_indices = ParseGpuIndexList(it->second);
      // A list that does not name exactly the container's cards cannot say where the rest went.
      if (static_cast<int>(ca.gpu_indices.size()) != c.cards) ca.gpu_indices.clear();
      ca.milli_per_gpu = c.milli_per_card;
      ca.mib_per_gpu = c.mib_per_card;
      if (ca.gpu_indices.empty()) {  // unassigned: the container's totals count against the node
        ca.milli_per_gpu *= c.cards;
        ca.mib_per_gpu *= c.cards;
      }
      placement->containers.push_back(std::move(ca));
    }
  }

  AnnotationMap ResultAnnotations(const Placement& placement) const override {
    AnnotationMap out;
    for (const ContainerAssignment& c : placement.containers) {
      out[fmt::format("{}{}", names::kGpuIndexContainerPrefix, c.container)] = fmt::format("{}", fmt::join(c.gpu_indices, ","));
    }
    out[std::string(names::kAssumed)] = "true";
    return out;
  }

  std::string CheckDevice(const GpuDevice& d) const override {
    if (d.memory_mib > 0) return "";
    return fmt::format("annotation {}: GPU {} has memoryMiB {}", names::kGpuDevicesAnnotation, d.index, d.memory_mib);
  }

  std::string ReadLayout(NodeState* state) const override {
    return state->node.published_gpus ? CheckPublished(*state) : LayoutFromTotals(state);
  }

  std::string NodeProblem(const NodeState& state) const override {
    if (IsComputePolicy(state.compute_policy)) return "";
    return fmt::format("node label {}=\"{}\" is not an mGPU compute policy (want {}, {} or {}); the node takes no GPU pods",
                       names::kComputePolicy, state.compute_policy, names::kPolicyFixedShare,
                       names::kPolicyGuaranteedBurstShare, names::kPolicyNativeBurstShare);
  }

  std::unique_ptr<KindScratch> NewScratch() const override { return std::make_unique<MgpuSearch>(); }

  void Evaluate(const PodRequest& request, const NodeState& node, const Judging& how, NodeVerdict* v) const override {
    static_cast<MgpuSearch*>(how.scratch)->Evaluate(request, node, how, v);
  }

  Status CheckFits(const NodeState& node, const Placement& placement) const override {
    for (const ContainerAssignment& c : placement.containers) {
      if (c.gpu_indices.empty()) return FailedPreconditionError(fmt::format("container {} has no GPU assigned", c.container));
    }
    for (const GpuUse& use : PodGpuUse(placement.containers)) {
      if (Status s = CheckGpu(node, use); !s.ok()) return s;
    }
    return OkStatus();
  }
};

}  // namespace

std::unique_ptr<Kind> MakeMgpuKind() { return std::make_unique<MgpuKind>(); }

}  // namespace gpusched::placement
