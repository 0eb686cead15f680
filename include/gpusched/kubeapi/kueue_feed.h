// File: kueue_feed.h
//
// A Reflector's handler for one of Kueue's kinds (Workloads, ResourceFlavors, AdmissionChecks,
// ClusterQueues of kueue.x-k8s.io): objects decoded (kubejson/kueue_objects.h) and applied to the
// inventory's KueueTable, a LIST as a relist of the kind, a watch read as one delta in order. An
// object that cannot be read is logged and dropped (what it said before no longer holds).
#pragma once

#include <vector>

#include "gpusched/inventory/kueue_table.h"
#include "gpusched/kubeapi/reflector.h"

namespace gpusched::kubeapi {

class KueueFeed : public ReflectorHandler {
 public:
  // kClaimTemplate: resource.k8s.io's ResourceClaimTemplates, which a Workload's pods name.
  enum class Kind { kWorkload, kResourceFlavor, kAdmissionCheck, kClusterQueue, kClaimTemplate };
  // REQUIRES: `table` outlives the feed.
  KueueFeed(Kind kind, inventory::KueueTable* table) : kind_(kind), table_(table) {}

  void Replace(const std::vector<const rapidjson::Value*>& items) override;
  void Apply(const std::vector<const WatchEvent*>& events) override;

 private:
  // Adds object `v` to `delta` (a later event of one read replaces an earlier one's).
  void Add(const rapidjson::Value& v, inventory::KueueDelta* delta) const;
  void Delete(const rapidjson::Value& v, inventory::KueueDelta* delta) const;

  const Kind kind_;
  inventory::KueueTable* const table_;
};

}  // namespace gpusched::kubeapi
