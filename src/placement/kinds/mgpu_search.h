// File: mgpu_search.h (private to the mGPU kind)
//
// The mGPU judgement: a fast path for one shared slice, else a bounded search over GPU sets for
// every container (one NUMA node preferred, init phases placed beside the sidecars before them),
// and the reasons a node refuses. Its buffers are reused across the Evaluate calls of one Planner.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpusched/placement/kind.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/placement/pod_request.h"

namespace gpusched::placement {

class MgpuSearch final : public KindScratch {
 public:
  // Judges an mGPU request on a ready mGPU node (Kind::Evaluate's contract).
  void Evaluate(const PodRequest& request, const NodeState& node, const Judging& how, NodeVerdict* v);

 private:
  struct Work {
    int index;
    int numa;
    bool healthy;
    bool exclusive;
    int instances;
    int64_t free_milli;
    int64_t free_mib;
    int64_t memory_mib;
  };
  // A candidate GPU set for one container: positions into work_, stored in option_pool_.
  struct Option {
    int begin;
    int count;
    double key;
  };

  void EvaluateMgpu(const PodRequest& request, const NodeState& node, Policy gpu_policy, bool want_placement,
                    NodeVerdict* v);
  // Appends the options for container `c` on the current work_ state to option_pool_/options.
  void CollectOptions(const MgpuContainerRequest& c, Policy gpu_policy, std::vector<Option>* options);
  // CollectOptions' first options on a node with links (gpu_links.h): the NVLink-connected sets of
  // the container's GPUs, those leaving the largest connected idle set first, then sets behind
  // one PCIe switch.
  void AddLinkedSets(const MgpuContainerRequest& c, Policy gpu_policy, std::vector<Option>* options);
  // Drops the options that repeat an earlier one's GPUs.
  void DropRepeats(std::vector<Option>* options);
  // EvaluateMgpu's refusals before any per-GPU work, and its one-slice placement.
  static void RejectComputePolicy(const PodRequest& request, const NodeState& node, NodeVerdict* v);
  static void RejectTotals(const PodRequest& request, const NodeState& node, NodeVerdict* v);
  static void PlaceSlice(const MgpuContainerRequest& c, int gpu_index, NodeVerdict* v);
  void SearchMgpu(const PodRequest& request, const NodeState& node, Policy gpu_policy, bool want_placement, NodeVerdict* v);
  bool Search(const PodRequest& request, size_t next, Policy gpu_policy);
  // Places each regular init container for its own phase, beside the other pods and the sidecars
  // declared before it, on the GPUs where the pod's booking grows least. Returns false if one
  // does not fit. REQUIRES: chosen_ holds the other containers' GPUs.
  bool PlaceTransient(const PodRequest& request, Policy gpu_policy);
  void Apply(const MgpuContainerRequest& c, const Option& o, int sign);
  static bool FitsEmptyNode(const PodRequest& request, const NodeState& node);
  std::string ExplainFailure(const PodRequest& request, const NodeState& node, Policy gpu_policy);

  const Judging* how_ = nullptr;  // the current Evaluate's
  const GpuLinks* links_ = nullptr;  // the current node's, or null
  std::vector<Work> work_;
  std::vector<Work> base_;  // work_ before the pod: the other pods' use
  std::vector<std::vector<int>> transient_slots_;  // by container: positions in work_
  std::vector<int> option_pool_;
  std::vector<std::vector<Option>> options_by_depth_;
  std::vector<Option> chosen_;
  std::vector<int> candidates_;
  int steps_ = 0;
  bool budget_hit_ = false;
};

}  // namespace gpusched::placement
