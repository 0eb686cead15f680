// File: cluster_objects.h
//
// What a cluster source (snapshot file, API watch, replay) hands the inventory: the whole cluster
// in one go, or the changes of one read of a watch. Objects arrive decoded (kubejson/).
#pragma once

#include <string>
#include <vector>

#include "gpusched/dra/cluster_state.h"
#include "gpusched/dra/object_set.h"
#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/kueue.h"
#include "gpusched/model/node.h"
#include "gpusched/model/pod.h"
#include "gpusched/model/pod_group.h"

namespace gpusched {

struct ClusterObjects {
  std::vector<Node> nodes;
  std::vector<Pod> pods;
  std::vector<DisruptionBudget> budgets;
  // Pod groups (gangs), every group each object declares.
  std::vector<PodGroup> pod_groups;
  // resource.k8s.io objects (ResourceSlices, DeviceClasses, ResourceClaims), decoded; those that
  // could not be are held as their errors.
  std::vector<dra::DraObject> dra_objects;
  // Kueue's objects (kueue.x-k8s.io): what gpusched's admission check reads (docs/kueue.md).
  kueue::Objects kueue;
  // ResourceClaimTemplates, each as the claim it makes (name and namespace the template's): the
  // admission check judges a Workload's pods before their claims exist.
  std::vector<dra::ResourceClaim> claim_templates;
  // Objects that were left out because they could not be identified (no kind, name or uid), each
  // naming the object and the field. Nodes and pods that were identified are above, with their
  // spec_error when a field of theirs could not be read.
  std::vector<std::string> errors;
};

// Changes a watching cluster source hands the inventory in one go: the events of one read of a
// watch stream, or a relist.
struct ClusterDelta {
  std::vector<Node> upsert_nodes;
  std::vector<std::string> deleted_nodes;  // names
  std::vector<Pod> upsert_pods;
  std::vector<std::string> deleted_pods;  // UIDs
  // Set after a relist: upsert_nodes (upsert_pods) is then the complete set of its kind, and
  // the nodes (bound pods) it does not hold are deleted.
  bool all_nodes = false;
  bool all_pods = false;
  // Pending pods from the watch of pending pods: those with status.nominatedNodeName have GPUs
  // held there (placement/nomination.h); one without, or a deletion, ends its hold. After a
  // relist (all_nominated) the holds of pods not listed end too.
  std::vector<Pod> upsert_pending;
  std::vector<std::string> deleted_pending;  // UIDs
  bool all_pending = false;
  // PodDisruptionBudgets (preemption counts violations); deleted by "namespace/name"; after a
  // relist (all_budgets) those not listed are gone.
  std::vector<DisruptionBudget> upsert_budgets;
  std::vector<std::string> deleted_budgets;
  bool all_budgets = false;
  // Pod groups: every group of each object listed (GroupTable::Apply); objects deleted by
  // GroupTable::ObjectKey; after a relist of an API (relisted_groups) its objects not listed are gone.
  std::vector<PodGroup> upsert_groups;
  std::vector<std::string> deleted_groups;
  std::vector<GroupApi> relisted_groups;
  // When set, the DRA objects changed and this is their complete new state, built by the source
  // (dra::DraObjectSet::Build) outside the inventory's lock.
  dra::ClusterStatePtr dra_state;
};

}  // namespace gpusched
