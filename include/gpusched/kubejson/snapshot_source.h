// File: snapshot_source.h
//
// The snapshot cluster source: Kubernetes List JSON files as `kubectl get nodes,pods,
// resourceslices,resourceclaims,deviceclasses -A -o json` prints them, merged in order.
#pragma once

#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/inventory/cluster_objects.h"

namespace gpusched::kubejson {

// Returns the objects of all `files`, of each object its newest copy (KeepNewestObjects). An
// object that cannot be read is isolated (objects.h AppendClusterJson), named with its file.
// Errors: a file that cannot be opened, or is not a Kubernetes List or object; they name the file.
StatusOr<ClusterObjects> LoadSnapshotFiles(const std::vector<std::string>& files);

// Keeps one copy of each object: of copies with the same name (pods: the same UID, then the same
// namespace/name, since a pod created again under its name is the same pod to the cluster) the
// one with the highest resourceVersion, or the later one when versions are not numbers.
void KeepNewestObjects(ClusterObjects* objects);

}  // namespace gpusched::kubejson
