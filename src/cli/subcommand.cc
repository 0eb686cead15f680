// File: subcommand.cc
//
// The offline cluster the answering subcommands share: an Inventory filled from snapshot files, or
// from the demo cluster when none is given, and a Service with default options over it.
#include "cli/subcommand.h"

#include "demo/demo_cluster.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/kubejson/snapshot_source.h"

namespace gpusched::cli {

StatusOr<std::unique_ptr<OfflineCluster>> OfflineCluster::Load(const std::vector<std::string>& snapshots) {
  ClusterObjects objects;
  if (snapshots.empty()) {
    GPUSCHED_RETURN_IF_ERROR(kubejson::AppendClusterJson(demo::DemoClusterJson(), &objects));
  } else {
    GPUSCHED_ASSIGN_OR_RETURN(objects, kubejson::LoadSnapshotFiles(snapshots));
  }
  std::unique_ptr<OfflineCluster> c(new OfflineCluster());
  c->inventory_.ReplaceCluster(std::move(objects));
  c->service_ = std::make_unique<extender::Service>(&c->inventory_, extender::ServiceOptions{});
  return c;
}

}  // namespace gpusched::cli
