// File: cluster_sync.h
//
// Keeps an Inventory in sync with a live cluster: one Reflector each for nodes, pods that are
// bound and not finished (fieldSelector spec.nodeName!=,status.phase!=Succeeded,
// status.phase!=Failed: a pod leaving that set arrives as DELETED), and the DRA objects
// (resourceslices, resourceclaims, deviceclasses of resource.k8s.io at the newest version the
// cluster serves of v1, v1beta2 and v1beta1, found at Start). Nodes and pods with a field that
// cannot be read are kept, marked (their spec_error); objects that cannot be identified are
// logged and skipped. Every few seconds it lets the inventory expire old bookings.
//
// Every replica of gpusched runs its own ClusterSync; after the first full sync its inventory is
// complete, so a replica that becomes leader answers correctly at once.
#pragma once

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/inventory/inventory.h"
#include "gpusched/kubeapi/api_client.h"
#include "gpusched/kubeapi/reflector.h"

namespace gpusched::kubeapi {

struct ClusterSyncOptions {
  ReflectorOptions reflector;
  bool watch_dra = true;  // also watch resource.k8s.io objects
  bool watch_pod_groups = true;  // also watch the pod groups of the versions the cluster serves
  bool watch_kueue = true;       // also watch Kueue's objects (kueue.x-k8s.io) where served
  std::chrono::milliseconds expire_interval{5000};
  // A reflector failing this long (LIST or WATCH refused, timing out, ...) makes the sync
  // unhealthy. Default: 60 s.
  std::chrono::seconds unhealthy_after{60};
};

class ClusterSync {
 public:
  // REQUIRES: `client` and `inventory` outlive this object.
  ClusterSync(ApiClient* client, inventory::Inventory* inventory, ClusterSyncOptions options = {});
  ~ClusterSync();  // Stop()s.
  ClusterSync(const ClusterSync&) = delete;
  ClusterSync& operator=(const ClusterSync&) = delete;

  // Discovers the DRA version (GET /apis/resource.k8s.io; a few seconds at most) and starts the
  // reflectors.
  void Start();
  void Stop();
  // The resource.k8s.io version watched ("v1", "v1beta2", "v1beta1"), "" if none. Set by Start.
  const std::string& dra_version() const { return dra_version_; }
  // The resource.k8s.io version DeviceTaintRules are watched at ("v1", "v1beta2", "v1alpha3"),
  // "" if the cluster serves none. Set by Start.
  const std::string& taint_rule_version() const { return taint_rule_version_; }
  // The versions pod groups are watched at, "" for an API the cluster does not serve: PodGroups
  // of scheduling.k8s.io ("v1beta1", "v1alpha2"), its Workloads ("v1alpha1"), and Coscheduling's
  // PodGroups of scheduling.x-k8s.io ("v1alpha1"). Set by Start.
  struct GroupVersions {
    std::string pod_group;
    std::string workload;
    std::string coscheduling;
  };
  const GroupVersions& group_versions() const { return group_versions_; }
  // The kueue.x-k8s.io version Kueue's objects are watched at ("v1beta2", "v1beta1"), "" when
  // the cluster serves neither (Kueue not installed). Set by Start.
  const std::string& kueue_version() const { return kueue_version_; }
  // True when healthy() and every watch of Kueue's objects has listed and is not failing for
  // longer than unhealthy_after: only then may the admission check act (a Workload, flavor or
  // ClusterQueue not read yet would look deleted). False where Kueue is not served.
  bool kueue_healthy() const;

  // True once every reflector has listed once; an optional one (AddReflector) is not waited for
  // once refused (403: a watch the ClusterRole does not allow) or failing for unhealthy_after.
  bool synced() const;
  // True when synced() and no reflector has been failing for longer than unhealthy_after: the
  // inventory can be trusted for decisions. While false, bookings are not expired either.
  bool healthy() const;
  // Waits until synced() or `timeout`; returns synced().
  bool WaitSynced(std::chrono::milliseconds timeout) const;
  std::vector<std::pair<std::string, ReflectorStats>> stats() const;

 private:
  class Handler;
  class DraFeed;
  enum class Kind;

  // `optional`: its failures (a LIST refused, say) are logged and retried, but neither hold back
  // synced() nor make the sync unhealthy (the pod-group watches: only gangs depend on them).
  void AddReflector(Kind kind, ResourceType type, bool optional = false);
  // Sleeps `interval`, or less if Stop() is called; returns true if stopping.
  bool SleepUnlessStopping(std::chrono::milliseconds interval) GPUSCHED_EXCLUDES(mu_);
  void AddDraReflectors();
  void AddGroupReflectors();
  void AddKueueReflectors();
  // Adds an optional reflector of `type` whose events go to `handler` (owned from then on).
  void AddOptionalReflector(ResourceType type, std::unique_ptr<ReflectorHandler> handler);

  ApiClient* const client_;
  inventory::Inventory* const inventory_;
  const ClusterSyncOptions options_;
  std::unique_ptr<DraFeed> dra_feed_;  // shared by the DRA reflectors' handlers
  std::vector<std::unique_ptr<ReflectorHandler>> handlers_;
  std::vector<std::unique_ptr<Reflector>> reflectors_;
  std::vector<bool> optional_;  // aligned with reflectors_
  std::thread expirer_;
  Mutex mu_;
  CondVar cv_{&mu_};
  bool stopping_ GPUSCHED_GUARDED_BY(mu_) = false;
  std::string dra_version_;
  std::string taint_rule_version_;
  GroupVersions group_versions_;
  std::string kueue_version_;
  std::vector<size_t> kueue_reflectors_;  // positions in reflectors_ of the Kueue watches
};

}  // namespace gpusched::kubeapi
