// File: domain_steering.h
//
// Pods outside gangs, steered into domains already in use (docs/topology.md). Single GPU pods
// and small pods do not care which NVLink domain they run in; scattered over domains they strand
// them, so that no domain is left whole for a gang. Where topology levels are configured and
// `topology.steer` is on, filter keeps a GPU pod that belongs to no group, among the nodes where
// it fits, on those of the fullest domain in use of the lowest level, and on nodes without that
// level's label. Only the lowest level: packing zones would take away the spread that services
// want from them. The fullest domain is the one with the fewest whole nodes (IsWholeNode), then
// the least free GPU: a domain whose nodes run CPU-only jobs has its GPUs free, but no gang can
// use them, and a small GPU pod there strands nothing more. Before the domain, the node: where
// some fitting node's GPUs are stranded by its CPU or memory (GpusStrandedByOtherResources), the
// pod goes to such a node, in the fullest domain among theirs. Else, while the cluster has gangs,
// it takes no whole node that is a domain's last room for one of them (LastRoomForGang) where
// another node fits: FGD one level up, with the gangs the cluster runs and queues as the target.
//
// Thread-safe: the per-domain sums are kept for the newest snapshot under one mutex.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/extender/gang_reservation.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/inventory/snapshot.h"
#include "gpusched/placement/node_state.h"

namespace gpusched::extender {

// True for a node that could take GPU pods now: it has GPUs whose description was read, and it
// is Ready and not cordoned. Only these count as a domain's nodes.
bool TakesGpuPods(const placement::NodeState& node);

// True for a node that a gang member could take whole: it takes GPU pods, every GPU is free,
// nothing is held or nominated there, and no pod is bound there but those recreated on the node
// (DaemonSets' and static pods', which run on every node). A terminating pod still counts until
// it is gone: the node is not free before then.
bool IsWholeNode(const placement::NodeState& node);

// True if a pod that names another scheduler than gpusched's runs on `node` (PodUse::kOtherScheduler),
// not terminating and not recreated on its node (a DaemonSet's or a static pod, on every node
// anyway): gpusched did not place it and cannot keep its like off the node, so the node's domain
// need not drain while a gang waits for it (gang_domains.h's drain wait).
bool RunsOtherSchedulersPod(const placement::NodeState& node);

// A domain's GPU, free and allocated milli-GPU over its nodes, and its nodes that take GPU pods,
// whole or not. It is in use when it has GPU allocated or such a node that is not whole.
struct DomainUse {
  int64_t free_milli = 0;
  int64_t used_milli = 0;
  int64_t capacity_milli = 0;  // the GPUs of its nodes that take GPU pods
  int nodes = 0;
  int whole_nodes = 0;
  int64_t whole_milli = 0;  // the GPUs of its whole nodes
  int other_scheduler_nodes = 0;  // its nodes that run a pod of another scheduler (RunsOtherSchedulersPod)
  bool in_use() const { return used_milli > 0 || whole_nodes < nodes; }
};
using DomainUses = std::map<std::string, DomainUse, std::less<>>;

// The domains of one label key on one snapshot: each domain's sums, and by the node's position
// in the snapshot, its domain and whether other resources strand its GPUs. Not copyable: `of`
// points into `domains`.
struct DomainIndex {
  DomainIndex() = default;
  DomainIndex(const DomainIndex&) = delete;
  DomainIndex& operator=(const DomainIndex&) = delete;

  DomainUses domains;
  std::vector<const DomainUses::value_type*> of;  // the node's domain (into `domains`); null: none

  // What was found on each node, by position (among it, whether other resources strand its GPUs:
  // GpusStrandedByOtherResources), kept for the next snapshot version: a node whose state
  // (NodeState::generation) is the same is not read again.
  struct NodeFacts {
    uint64_t generation = 0;
    int32_t domain = -1;  // into `names`; -1: no label
    int64_t free_milli = 0, used_milli = 0;
    bool takes_gpu_pods = false, whole = false, stranded = false, other_scheduler = false;
  };
  std::vector<NodeFacts> facts;
  std::vector<std::string> names;  // the domains' label values by id
  // The domain kept for the first waiting gang (gang_reservation.h), if any.
  std::optional<DomainReservation> reserved;
  // What the declared gangs of the snapshot ask (GangDemands), and the group tables they were
  // read from (the next version reads them again only when these changed).
  std::vector<int64_t> gang_demands;
  std::shared_ptr<const inventory::GroupTable::Groups> groups_read;
  std::shared_ptr<const inventory::GroupTable::MembersByKey> members_read;
};

// The distinct GPU demands, in milli-GPU ascending, of the snapshot's declared gangs whose members
// (pending or bound) are all created and ask for GPUs: each gang's minCount of GPU members
// (launchers without GPUs not counted), the smallest first. The target workload of domain
// steering: the gangs the cluster runs and queues, as FGD's target workload is the pods it
// observes. Gangs whose GPUs come through claims ask nothing known here, and are not counted.
std::vector<int64_t> GangDemands(const inventory::InventorySnapshot& snapshot);

// If node `n` (a snapshot position) is whole and its domain holds, on its whole nodes' GPUs, one
// of index.gang_demands larger than the node's own GPUs that it would no longer hold without the
// node: that demand; else 0.
int64_t LastRoomForGang(const DomainIndex& index, uint32_t n);

class DomainFullness {
 public:
  DomainFullness() = default;  // no domain kept for gangs
  // With ReservesForGangs(options), each index also has the domain kept for the first waiting
  // gang of options.scheduler_name (DomainIndex::reserved).
  explicit DomainFullness(const ServiceOptions& options)
      : reserve_(ReservesForGangs(options)), scheduler_(options.scheduler_name) {}

  // The domains of label `key` on `snapshot`, computed once per snapshot version and key; from
  // the last version's, only the nodes whose state changed are read again.
  std::shared_ptr<const DomainIndex> Of(const inventory::InventorySnapshot& snapshot, const std::string& key) const
      GPUSCHED_EXCLUDES(mu_);

 private:
  const bool reserve_ = false;
  const std::string scheduler_;
  mutable Mutex mu_;
  mutable uint64_t version_ GPUSCHED_GUARDED_BY(mu_) = 0;
  mutable std::string key_ GPUSCHED_GUARDED_BY(mu_);
  mutable std::shared_ptr<const DomainIndex> index_ GPUSCHED_GUARDED_BY(mu_);
};

// True for a node whose free GPUs other resources strand: it takes GPU pods, is not whole, has a
// GPU free, and the share of its allocatable CPU or memory that is free (by what its bound pods
// request, node_uses.h) is below the share of its GPUs that is free by more than one GPU's share. It runs out of CPU or memory first: a small GPU pod
// there uses GPUs that would otherwise stay idle, and that no gang member of whole nodes could
// have. A node beside a CPU-only job is the common case.
bool GpusStrandedByOtherResources(const placement::NodeState& node);

// Which pod is steered: one that asks for GPUs, or one without GPUs (a CPU-only pod that names
// gpusched's scheduler). Only a GPU pod is sent first to nodes whose GPUs other resources strand:
// a pod without GPUs uses none of them there.
enum class SteeredPod { kAsksGpus, kWithoutGpus };

// Of `fits` (the snapshot positions of the nodes where the pod fits), those filter refuses: each
// reason with the places in `fits` it refuses. For a GPU pod, where some fit in a domain has its
// GPUs stranded by other resources, the fits in domains that do not. Else, where some fit in a
// domain in use takes no domain's last room for a gang (LastRoomForGang), the fits that do: FGD
// one level up, a pod does not strand a domain's GPUs for the gangs of the cluster while another
// node fits. Then those in a domain other than the fullest in use among the rest's domains. None
// when no fitting node is in a domain in use. `key` names the label in the reasons.
std::vector<std::pair<std::string, std::vector<size_t>>> OutsideFullestDomain(const std::vector<uint32_t>& fits,
                                                                              const std::string& key, const DomainIndex& index,
                                                                              SteeredPod pod = SteeredPod::kAsksGpus);

// True if `node` (null: none) lies in domain `kept` ("" none) of the first topology level of
// `options`.
bool InKeptDomain(const placement::NodeState* node, const std::string& kept, const ServiceOptions& options);

// True if `pod` (not of a declared gang: GangKeptOff judges those) stays off the domain kept for a
// gang (gang_reservation.h): its priority is not above the gang's, and it is not recreated on its
// node (a DaemonSet's or a static pod runs on every node, and is no competition for the gang's).
bool KeptOffReserved(const Pod& pod, const DomainReservation& reserved);

// Of `fits` (snapshot positions), those in the domain kept for a gang (index.reserved), with the
// reason: every one, even when no other node fits (the pod then waits, as the gang does).
std::vector<std::pair<std::string, std::vector<size_t>>> InReservedDomain(const std::vector<uint32_t>& fits,
                                                                          const std::string& key, const DomainIndex& index);

}  // namespace gpusched::extender
