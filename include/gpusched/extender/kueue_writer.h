// File: kueue_writer.h
//
// What gpusched's Kueue admission check writes (kueue_admission.h), and whether this replica may
// write at all. The API server's implementation is kubeapi/api_kueue_writer.h; tests record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpusched/common/status.h"
#include "gpusched/model/kueue.h"

namespace gpusched::extender {

// One entry of status.admissionChecks[].podSetUpdates: additive only (a key the template, the
// flavor or another check already sets makes Kueue fail the job's start).
struct PodSetUpdate {
  std::string name;
  Labels annotations;
  Labels node_selector;
};

// The state gpusched's check is set to.
struct CheckUpdate {
  kueue::CheckState state = kueue::CheckState::kPending;
  std::string message;
  std::vector<PodSetUpdate> updates;           // with kReady
  std::optional<int32_t> requeue_after_s;       // with kRetry
};

class KueueWriter {
 public:
  virtual ~KueueWriter() = default;
  // True while this replica is the one that acts (the leader: api_kueue_writer.h); asked before
  // every write, so that a replica that lost it stops at once.
  virtual bool Leading() = 0;
  // Sets check `check` of Workload `w` to `update`, on the Workload exactly as `w` was read
  // (its resourceVersion the precondition). Errors: Aborted when the Workload changed since
  // (it is judged again on the next read); others as the API server answers.
  virtual Status SetCheckState(const kueue::Workload& w, const std::string& check, const CheckUpdate& update) = 0;
  // Sets AdmissionCheck `check`'s Active condition True (Kueue keeps a ClusterQueue whose checks
  // are not active Inactive).
  virtual Status Activate(const kueue::AdmissionCheck& check) = 0;
};

}  // namespace gpusched::extender
