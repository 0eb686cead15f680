// File: node_uses.h
//
// What the bound pods of one node ask of it besides GPUs, for kube-scheduler's NodeResourcesFit in
// preemption (resource_fit.h): each pod's effective requests with what victim choice weighs of
// it (priority, PodDisruptionBudget labels), and their sum.
//
// Lookups by UID are the hot part of a preempt (a dozen per candidate node, hundreds of nodes):
// the uses are kept in the order of their UIDs' hashes, with the hashes in one small array and
// the UIDs packed end to end in one string, so that a search compares integers and then one UID
// in a few cache lines of the node's: the uses themselves, 112 bytes each, missed the cache at
// nearly every lookup.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/model/disruption_budget.h"
#include "gpusched/model/node_mode.h"
#include "gpusched/model/resource_list.h"

namespace gpusched {

// What one bound pod asks of its node, for NodeResourcesFit: its effective requests
// (pod_resources.h), and what preemption weighs of it.
struct PodUse {
  std::string uid;
  std::string name;
  int32_t priority = 0;
  bool terminating = false;
  ResourceList requests;
  std::shared_ptr<const PodLabels> labels;  // namespace and labels, for PodDisruptionBudgets
  // What preempt weighs of it without reading the use (flags of the constants below): kTies, its
  // constraints may tie it to a pending pod through a filter gpusched does not model (host ports,
  // required pod affinity or anti-affinity, volumes a volume filter reads: preemption.h);
  // kDevices, it may hold devices through DRA (claims, or extended resources DRA may serve,
  // whose devices may or may not be GPUs); kOtherScheduler, its spec.schedulerName names a
  // scheduler other than the one gpusched serves (so gpusched never steered it: gang_domains.h's
  // drain wait); and in the high nibble the kind of GPU its containers ask a device plugin for
  // (PluginKind; kNone when none).
  static constexpr uint8_t kTies = 1, kDevices = 2, kOtherScheduler = 4;
  uint8_t flags = 0;

  // Returns flags with `kind` in the high nibble. REQUIRES: the kind's value is below 16.
  static constexpr uint8_t WithPluginKind(uint8_t flags, RequestKind kind) {
    return static_cast<uint8_t>((flags & 0x0f) | (static_cast<uint8_t>(kind) << 4));
  }
  static constexpr RequestKind PluginKind(uint8_t flags) { return static_cast<RequestKind>(flags >> 4); }

  bool operator==(const PodUse& o) const {
    return uid == o.uid && name == o.name && priority == o.priority && terminating == o.terminating && flags == o.flags &&
           requests == o.requests && (labels == o.labels || (labels && o.labels && *labels == *o.labels));
  }
};

// Every bound pod's use of one node, by UID, and their sum.
class NodeUses {
 public:
  // A search scans up to this many keys in order, rather than bisect them: predictable branches
  // are faster at the sizes of a node's pod list.
  static constexpr size_t kLinearSearch = 128;

  // Books `use`, replacing the pod's earlier one. Returns false if that was equal (no change).
  bool Put(PodUse use);
  // Drops the use of pod `uid`. Returns false if it had none.
  bool Drop(std::string_view uid);
  // Returns the use of pod `uid`, or nullptr.
  const PodUse* Find(std::string_view uid) const;
  // Whether pod `uid` is here, and its PodUse::flags, read without touching the use itself (one
  // cache miss fewer per lookup: preempt asks this of every victim kube-scheduler offers).
  bool Has(std::string_view uid, uint8_t* flags) const;

  // Starts fetching into the cache what Find reads.
  void Prefetch() const {
    __builtin_prefetch(keys_.data());
    __builtin_prefetch(uids_.data());
  }

  const std::vector<PodUse>& pods() const { return pods_; }  // by UID hash, then UID
  const ResourceList& total() const { return total_; }
  bool empty() const { return pods_.empty(); }
  bool operator==(const NodeUses& o) const { return pods_ == o.pods_ && total_ == o.total_; }

 private:
  // The first position whose (hash, UID) is not less than `uid`'s.
  size_t LowerBound(std::string_view uid) const;
  // pods_[i].uid, read from uids_.
  std::string_view UidAt(size_t i) const;

  std::vector<PodUse> pods_;    // sorted by (keys_, UID), distinct UIDs
  std::vector<uint64_t> keys_;  // keys_[i]: the hash of pods_[i].uid, ascending
  std::string uids_;                  // every pods_[i].uid in order, end to end
  std::vector<uint32_t> uid_starts_;  // pods_[i].uid is uids_[uid_starts_[i], uid_starts_[i + 1]); empty with no pod
  std::vector<uint8_t> flags_;        // flags_[i]: pods_[i].flags
  ResourceList total_;
};

}  // namespace gpusched
