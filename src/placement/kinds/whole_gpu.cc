// File: whole_gpu.cc
//
// Whole GPUs: the pod's nvidia.com/gpu aggregated as Kubernetes does (init and sidecar phases),
// and the node's GPUs from its published description or, without one, its allocatable count; among
// fitting nodes, those where the pod's GPUs can be NVLink-connected (whole_gpu_sets.h).
#include "gpusched/placement/kinds/whole_gpu.h"

#include <fmt/format.h>

#include <algorithm>

#include "gpusched/model/names.h"
#include "gpusched/placement/kinds/counted.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/pod_request.h"
#include "gpusched/placement/whole_gpu_sets.h"

namespace gpusched::placement {
namespace {

class WholeGpuKind final : public CountedKind {
 public:
  WholeGpuKind() : CountedKind(*KindOf(RequestKind::kWholeGpu)) {}

  bool Asks(const Pod& pod) const override { return SetsPositive(pod, &GpuResources::nvidia_gpus); }

  int64_t Requested(const Pod& pod, Violations* invalid) const override {
    return AggregateLikeKubernetes(pod, [invalid](const Container& c) {
      return EffectiveResource(c, &GpuResources::nvidia_gpus, names::kNvidiaGpu, invalid).value_or(0);
    });
  }

  int64_t LargestSet(const Pod& pod, int64_t) const override {
    int64_t most = 0;
    for (const auto* list : {&pod.init_containers, &pod.containers}) {
      for (const Container& c : *list) most = std::max(most, c.limits.nvidia_gpus.value_or(0));
    }
    return most;
  }

  std::string ReadLayout(NodeState* state) const override {
    const Node& node = state->node;
    int64_t gpus = node.allocatable.nvidia_gpus;
    if (!node.published_gpus) {
      for (int64_t i = 0; i < gpus && i < 1024; ++i) AddGpu(GpuDevice{.index = static_cast<int>(i), .model = node.gpu_product}, state);
      return "";
    }
    int64_t healthy = 0;
    bool any_mig = false;
    for (const GpuDevice& d : state->devices) {
      any_mig |= d.mig_enabled;
      healthy += d.healthy && !d.mig_enabled ? 1 : 0;  // the device plugin serves a MIG GPU's slices
    }
    if (gpus == healthy) return "";
    return fmt::format("allocatable {}={} does not match {} {} in annotation {}{}", names::kNvidiaGpu, gpus, healthy,
                       any_mig ? "healthy GPUs without MIG" : "healthy GPUs", names::kGpuDevicesAnnotation,
                       any_mig ? " (MIG slices are not whole GPUs: run the device plugin with MIG strategy mixed)" : "");
  }

  std::vector<std::pair<size_t, std::string>> RefuseAmongFits(const PodRequest& request,
                                                              const std::vector<const NodeState*>& fits) const override {
    return ScatteredNodes(fits, request.largest_set);
  }
  bool MayRefuseAmongFits(const PodRequest& request) const override { return request.largest_set >= 2; }

  std::optional<GpuSet> FreeGpuSet(const NodeState& node) const override { return KnownFreeGpus(node); }

  std::string LinksNote(const NodeState& node, const PodRequest& request, const PlacementOptions&) const override {
    LinkedFit fit = LinkedFitOf(node, request.largest_set);
    // A scattered node that fits was kept: no other node judged with it has a connected set.
    if (fit.standing == LinkedStanding::kScattered) return fit.reason + "; no node judged with it has one";
    if (fit.standing == LinkedStanding::kConnected) {
      return fmt::format("an NVLink-connected set of {} free GPUs is here (the device plugin picks the cards)", request.largest_set);
    }
    return request.largest_set < 2 ? "" : "which GPUs are free is not known yet (the node agent's PodResources reading)";
  }
};

}  // namespace

std::unique_ptr<Kind> MakeWholeGpuKind() { return std::make_unique<WholeGpuKind>(); }

}  // namespace gpusched::placement
