// File: resource_fit.h
//
// kube-scheduler's NodeResourcesFit on what the GPU rules do not cover: the node's pod count and
// every other resource a pod requests (cpu, memory, ephemeral storage, hugepages, extended
// resources), against its allocatable, with some of its pods gone. Preemption keeps the victims
// kube-scheduler needs for these checks (preemption.h).
//
// As upstream: a resource is checked only if the pod requests it, and a node that does not list
// a requested resource has none of it; the pod count always. A node whose allocatable gpusched
// does not know (an object without status.allocatable) is not checked at all.
//
// Not thread-safe; pure: depends only on what it was given.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/node_uses.h"
#include "gpusched/placement/node_state.h"

namespace gpusched::placement {

class ResourceFit {
 public:
  // The pod asking `request` on `node`, with every pod of node.uses still there.
  ResourceFit(const NodeState& node, const ResourceList& request);

  // Counts the pods nominated to the node (node.nominated) that kube-scheduler counts for a pod
  // `uid` of `priority`: those of equal or higher priority, but the pod itself and pods the node's
  // uses already hold (a pod being bound is nominated too, since KEP-5278).
  void CountNominated(std::string_view uid, int32_t priority);
  // Takes a use of node.uses off the node (a victim), or puts it back.
  void Remove(const PodUse& use) { Move(use, -1); }
  void Restore(const PodUse& use) { Move(use, 1); }
  // Returns true if the pod fits the node's other resources as they are now (always, when the
  // node's allocatable is not known).
  bool Fits() const;
  // Why the pod does not fit ("cpu: asks 8000m, 0m of 4000m free", "pods: 110 of 110 used"), or
  // "" when it does.
  std::string Why() const;
  // Returns true if the pod asks more of some resource than the node's allocatable holds, so that
  // no eviction can make it fit (NodeResourcesFit's UnschedulableAndUnresolvable); the pod count
  // never is, as upstream.
  bool Unresolvable() const;
  // Returns true if the node's allocatable is known (it lists any resource besides GPUs).
  bool known() const { return !node_.node.other_allocatable.empty(); }
  // Returns the use of pod `uid` on the node, or nullptr.
  const PodUse* Find(std::string_view uid) const;

 private:
  void Move(const PodUse& use, int sign);

  const NodeState& node_;
  const ResourceList& request_;
  std::vector<int64_t> used_;         // by the pods still on the node, of each resource the pod requests
  std::vector<int64_t> allocatable_;  // of each resource the pod requests
  int64_t pods_ = 0;          // on the node
  int64_t pods_allowed_ = 0;
};

}  // namespace gpusched::placement
