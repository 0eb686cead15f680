// File: snapshot_source.h
//
// The snapshot cluster source: Kubernetes List JSON files as `kubectl get nodes,pods,
// resourceslices,resourceclaims,deviceclasses -A -o json` prints them, merged in order.
#pragma once

#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/model/cluster_objects.h"

namespace gpusched::k8s {

// Returns the objects of all `files`. Errors name the file and the field.
StatusOr<ClusterObjects> LoadSnapshotFiles(const std::vector<std::string>& files);

}  // namespace gpusched::k8s
