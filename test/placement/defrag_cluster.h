// A hand-built cluster for the defrag planners' tests: node states with their pods' uses (each
// pod of ReplicaSet rs-<name>, labelled app=<name>), budgets and a workload.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gpusched/model/disruption_budget.h"
#include "gpusched/placement/defrag_planner.h"
#include "gpusched/placement/node_state.h"
#include "gpusched/scoring/target_workload.h"

namespace gpusched::placement {

// A cluster of node states that a DefragInput points into.
struct DefragCluster {
  std::vector<NodeState> nodes;
  std::shared_ptr<std::vector<DisruptionBudget>> budgets = std::make_shared<std::vector<DisruptionBudget>>();
  scoring::TargetWorkload workload;

  void Add(Node node, std::vector<Allocation> allocations) {
    NodeState s = BuildNodeState(std::move(node), allocations);
    auto uses = std::make_shared<NodeUses>();
    for (const Allocation& a : allocations) {
      uses->Put(PodUse{.uid = a.pod_uid, .name = a.pod_name,
                       .labels = std::make_shared<PodLabels>(PodLabels{"ns", {{"app", a.pod_name}}, "rs-" + a.pod_name, "ReplicaSet"})});
    }
    s.uses = uses;
    nodes.push_back(std::move(s));
  }
  // Pod `uid` of node `i` uses host port `port`/TCP on every address.
  void UsesPort(size_t i, const std::string& uid, int32_t port) {
    auto uses = std::make_shared<NodeUses>(*nodes[i].uses);
    PodUse use = *uses->Find(uid);
    auto labels = std::make_shared<PodLabels>(*use.labels);
    labels->constraints.host_ports.push_back(HostPort{.port = port, .protocol = "TCP"});
    use.labels = labels;
    uses->Put(std::move(use));
    nodes[i].uses = uses;
  }
  // A budget over the pod `app` that allows `allowed` disruptions.
  void Protect(const std::string& app, int32_t allowed = 0) {
    budgets->push_back(DisruptionBudget{.namespace_name = "ns", .name = "pdb-" + app,
                                        .selector = {.match_labels = {{"app", app}}}, .selector_set = true,
                                        .disruptions_allowed = allowed});
  }
  DefragInput Input() {
    DefragInput in{.budgets = budgets, .workload = &workload};
    for (const NodeState& n : nodes) in.nodes.push_back(&n);
    return in;
  }
};

}  // namespace gpusched::placement
