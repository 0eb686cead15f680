// File: kueue_table.h
//
// Kueue's objects as gpusched last read them (model/kueue.h): the Workloads, ResourceFlavors,
// AdmissionChecks and ClusterQueues that its admission check reads (docs/kueue.md). A cluster
// source replaces them all (a snapshot, a relist) or changes some (a watch); readers take an
// immutable state, so one judgement sees one consistent set whatever arrives meanwhile. The state
// depends only on the objects, not on the order they came in.
//
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/dra/types.h"
#include "gpusched/model/kueue.h"

namespace gpusched::inventory {

struct KueueState {
  uint64_t version = 0;  // grows with every change
  std::map<std::string, kueue::Workload, std::less<>> workloads;  // by "namespace/name"
  std::map<std::string, kueue::ResourceFlavor, std::less<>> flavors;
  std::map<std::string, kueue::AdmissionCheck, std::less<>> checks;
  std::map<std::string, kueue::ClusterQueue, std::less<>> queues;
  // ResourceClaimTemplates by "namespace/name", each as the claim it makes.
  std::map<std::string, dra::ResourceClaim, std::less<>> claim_templates;

  // The Workload "namespace/name", or null.
  const kueue::Workload* FindWorkload(std::string_view key) const;
};

// Changes of one read of a watch: objects new or changed, and those deleted (Workloads by
// "namespace/name", the others by name). With `all`, `upserts` is every object of the kinds
// that `relisted` names, and the others of those kinds are gone.
struct KueueDelta {
  kueue::Objects upserts;
  std::vector<dra::ResourceClaim> claim_templates;
  std::vector<std::string> deleted_workloads, deleted_flavors, deleted_checks, deleted_queues, deleted_claim_templates;
  struct Kinds {
    bool workloads = false, flavors = false, checks = false, queues = false, claim_templates = false;
  };
  Kinds relisted;
};

class KueueTable {
 public:
  KueueTable() : state_(std::make_shared<const KueueState>()) {}
  // Every object replaced by `objects` and `claim_templates` (a snapshot read cold).
  void Replace(kueue::Objects objects, std::vector<dra::ResourceClaim> claim_templates = {}) GPUSCHED_EXCLUDES(mu_);
  void Apply(KueueDelta delta) GPUSCHED_EXCLUDES(mu_);
  // The objects now; never null.
  std::shared_ptr<const KueueState> State() const GPUSCHED_EXCLUDES(mu_);

 private:
  mutable Mutex mu_;
  std::shared_ptr<const KueueState> state_ GPUSCHED_GUARDED_BY(mu_);
};

}  // namespace gpusched::inventory
