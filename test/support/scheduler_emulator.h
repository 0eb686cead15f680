// File: scheduler_emulator.h
//
// kube-scheduler's side of the extender protocol for tests and gpusched-load: a single pod's
// cycle, and a gang's two flows, as they reach an extender (issue 33 §4).
//   - One pod: the in-tree NodeResourcesFit on node totals (the GPU resources' allocatable less
//     what bound and assumed pods request), then the extender's filter with the fitting nodes'
//     names, prioritize only when more than one node is left (the best score wins; ties go to the
//     first), then bind.
//   - The 1.37 pod-group cycle (pkg/scheduler/algorithm_podgroup.go): members filtered back to
//     back, each assumed into the cycle's snapshot once placed (so the next member's node totals
//     count it) and never told to the extender; once at least minCount members fit, the fitting
//     ones are bound; otherwise none is, and the assumed members are forgotten. A group with a
//     topology key is tried one domain at a time (the nodes sharing the key's label value, in
//     the values' order), each pass among that domain's nodes alone and forgotten after; the
//     first domain where minCount members fit is bound (kube-scheduler picks the best scored).
//   - Coscheduling (scheduler-plugins): each member in a cycle of its own, assumed in the cache at
//     Reserve and held at Permit until minMember are; a member that fits nowhere makes PostFilter
//     reject the waiting ones (unreserved with no call to the extender); otherwise the held
//     members are bound, one binding cycle each.
//   - DRA (the DynamicResources plugin): a node's devices are its ResourceSlices'; a pod's
//     unallocated claims ask their requests' counts, checked as node totals like the other
//     resources (the emulated clusters' devices of a node are interchangeable). At PreBind,
//     before the extender's bind, each claim is allocated to the node's first free devices and
//     reserved for the pod, and handed to `on_claim` (as the watch of claims would hand it to
//     gpusched); a failed bind or the pod's deletion deallocates it again.
//   - Extended resources served by DRA (DRAExtendedResource, KEP 5004): on an nvidia-dra node
//     whose allocatable lists no nvidia.com/gpu and a DeviceClass maps it, a pod's nvidia.com/gpu
//     counts as devices (NodeResourcesFit leaves it to DynamicResources); at PreBind the pod's
//     special claim (dra/extended_resources.h's shape) is created allocated and reserved for it,
//     handed to `on_claim`, and the pod's status.extendedResourceClaimStatus to `on_pod`; a
//     failed bind or the pod's deletion deallocates it.
//   - A nominated node (status.nominatedNodeName, KEP-5278: set by gpusched for a gang member's
//     slot) is tried first, alone, as PreferNominatedNode does: where its node totals fit and the
//     extender's filter keeps it, the pod goes there without prioritize; otherwise the cycle goes
//     on over every node, the pod still naming it; a cycle that places the pod nowhere clears it
//     (1.35 and later), and so does its bind. Not emulated: other pods' nominations counted
//     against a pod's node totals.
// The extender is reached through a callable (HTTP or in process). Binds the extender refuses
// are counted as failed binds; the pod stays unbound and its node totals are given back.
//
// Not thread-safe: one emulator is one scheduler's loop.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/dra/extended_resources.h"
#include "gpusched/dra/object_set.h"
#include "gpusched/inventory/cluster_objects.h"
#include "gpusched/model/pod.h"

namespace gpusched::testing {

// Sends `body` to the extender's verb ("filter", "prioritize", "bind") and returns the reply.
using ExtenderCall = std::function<std::string(std::string_view verb, const std::string& body)>;
// A claim the emulated scheduler allocated (PreBind) or deallocated: its new state.
using ClaimWrite = std::function<void(const dra::ResourceClaim& claim)>;
// A pod whose status the emulated scheduler wrote (its special claim named): its new state.
using PodWrite = std::function<void(const Pod& pod)>;

struct EmulatedPod {
  Pod pod;           // as decoded from `json`
  std::string json;  // the Pod as the API server holds it, sent in ExtenderArgs
};
EmulatedPod Emulated(const std::string& pod_json);

enum class GangFlow { kPodGroupCycle, kCoscheduling };

struct GangOutcome {
  size_t members = 0;
  size_t min_count = 0;
  size_t bound = 0;         // members bound
  size_t failed_binds = 0;  // binds the extender refused
  // Some members bound, fewer than the gang needs to start.
  bool partial() const { return bound > 0 && bound < min_count; }
};

class SchedulerEmulator {
 public:
  // `cluster`: the nodes, and the pods bound when the emulator starts (counted in node totals).
  // `on_claim` and `on_pod` (optional) receive each claim write and pod status write.
  SchedulerEmulator(ExtenderCall call, const ClusterObjects& cluster, ClaimWrite on_claim = nullptr, PodWrite on_pod = nullptr);

  // Schedules one pod in its own cycle; returns whether it was bound.
  bool Schedule(const EmulatedPod& pod);
  // Schedules a gang of `members` needing `min_count` of them placed together; with
  // `topology_key` (the pod-group cycle only), inside one domain of it.
  GangOutcome ScheduleGang(const std::vector<EmulatedPod>& members, size_t min_count, GangFlow flow,
                           const std::string& topology_key = "");
  // A claim was created (the resourceclaim controller's, for a pod's template).
  void Created(const dra::ResourceClaim& claim) { claims_[claim.namespace_name + "/" + claim.name] = claim; }
  // A bound pod was deleted: its node totals and claims are free again.
  void Deleted(const EmulatedPod& pod);
  // Pod `uid`'s status.nominatedNodeName was set to `node` ("" cleared; by an extender, KEP-5278).
  void Nominated(const std::string& uid, const std::string& node) {
    if (node.empty()) {
      nominated_.erase(uid);
    } else {
      nominated_[uid] = node;
    }
  }

  // The extender's filter calls so far, and the node names they carried in all.
  size_t filter_calls() const { return filter_calls_; }
  size_t filtered_nodes() const { return filtered_nodes_; }

  // Where each pod the emulator bound went, by UID.
  const std::map<std::string, std::string>& bound() const { return bound_; }
  size_t failed_binds() const { return failed_binds_; }

 private:
  struct Totals {
    int64_t gpus = 0, core = 0, memory = 0, devices = 0;
  };
  // The node kube-scheduler picks for `pod` (node totals count the bound and assumed pods), or
  // nullopt when none fits.
  std::optional<std::string> Place(const EmulatedPod& pod, const std::vector<std::string>& candidates);
  // Members placed one after another among `candidates`, each assumed once placed (the caller
  // forgets them); Coscheduling stops at the first that fits nowhere.
  std::vector<std::pair<const EmulatedPod*, std::string>> Assume(const std::vector<EmulatedPod>& members, GangFlow flow,
                                                                 const std::vector<std::string>& candidates);
  // Forgets `assumed` (their node totals given back).
  void Forget(const std::vector<std::pair<const EmulatedPod*, std::string>>& assumed);
  bool Bind(const EmulatedPod& pod, const std::string& node);
  // What `pod`'s containers ask of the three GPU resources on `node`, as the API server defaults
  // requests, and its unallocated claims of devices (with its nvidia.com/gpu where DRA serves
  // it there and its special claim is not allocated yet).
  Totals Asks(const Pod& pod, const std::string& node) const;
  // True if DRA serves `pod`'s extended resources on `node` (KEP 5004).
  bool ServedByDra(const Pod& pod, const std::string& node) const;
  // PreBind for such a pod: its special claim created, allocated on `node`, and the pod's status.
  void AllocateSpecialClaim(const Pod& pod, const std::string& node);
  // Allocates `claim`'s requests to `node`'s first free devices and reserves it for `pod`.
  void AllocateOn(const Pod& pod, const std::string& node, dra::ResourceClaim* claim);
  // The claims `pod` names ("namespace/name"), as its spec and status name them.
  static std::vector<std::string> ClaimKeys(const Pod& pod);
  // PreBind: allocates `pod`'s unallocated claims on `node` and hands them to on_claim_.
  void AllocateClaims(const Pod& pod, const std::string& node);
  // Deallocates the claims `pod` holds (its bind failed, or it was deleted).
  void DeallocateClaims(const Pod& pod);
  bool FitsTotals(const Pod& pod, const std::string& node) const;
  // The extender's filter of `pod` on `nodes` (the pod's JSON naming its nomination): the nodes kept.
  std::vector<std::string> Filter(const EmulatedPod& pod, const std::vector<std::string>& nodes);
  void Add(const Pod& pod, const std::string& node, int sign);

  ExtenderCall call_;
  ClaimWrite on_claim_;
  PodWrite on_pod_;
  std::map<std::string, Node> nodes_;
  dra::DeviceClasses classes_;
  std::map<std::string, std::string> specials_;        // pod UID -> its special claim's "namespace/name"
  int special_serial_ = 0;
  std::map<std::string, std::vector<dra::DeviceId>> devices_;  // each node's, in published order
  std::map<dra::DeviceId, std::string> device_node_;
  std::set<dra::DeviceId> taken_;                       // by allocated claims
  std::map<std::string, int64_t> taken_on_;             // how many of each node's
  std::map<std::string, dra::ResourceClaim> claims_;    // by "namespace/name"
  std::vector<std::string> names_;
  std::map<std::string, std::map<std::string, std::string, std::less<>>> labels_;  // by node
  std::map<std::string, Totals> allocatable_;
  std::map<std::string, Totals> used_;  // bound and assumed
  std::map<std::string, std::string> bound_;
  size_t failed_binds_ = 0;
  std::map<std::string, std::string> nominated_;  // pod UID -> status.nominatedNodeName
  size_t filter_calls_ = 0;
  size_t filtered_nodes_ = 0;
};

}  // namespace gpusched::testing
