// File: kueue_admission.h
//
// gpusched as the controller of Kueue's AdmissionChecks named by kueue.controllerName (issue 35,
// docs/kueue.md). On the replica that acts (KueueWriter::Leading), once every watch of Kueue's
// objects has listed (the caller's to check: ClusterSync::kueue_healthy), Sweep:
//   - sets each such AdmissionCheck Active;
//   - judges every Workload with quota reserved whose check of gpusched's is Pending
//     (kueue_check.h) and writes the verdict: Ready with podSetUpdates that tie its pods to the
//     plan (annotations gpusched.io/kueue-workload and gpusched.io/kueue-podset), after holding
//     the plan; Retry with the reason and requeueAfterSeconds; Rejected with the reason. A
//     Workload is decided once per resourceVersion, and set to Retry at most once per
//     kueue.retryAfterSeconds (Kueue releases that do not honour requeueAfterSeconds requeue at
//     once);
//   - renews the holds of Ready Workloads that Kueue has not admitted yet (other checks may take
//     long), past half their time; once admitted, a hold lasts kueue.holdSeconds at most;
//   - ends the holds, claimed by pods or not, of Workloads gone, evicted, finished, without quota,
//     or whose check says Retry or Rejected. A Pending check keeps them: it is about to be decided
//     again (a Ready written by another replica that the watch has not brought yet looks so).
// A plan is held before Ready is written, one hold per pod, about AdmittedPodUid (a hold on the
// node: gpusched.io/holds, so every replica and a restart keep it), for kueue.holdSeconds. A write
// refused outright ends them; one whose outcome is unknown (Aborted, Unavailable) keeps them, for
// the Workload's next state to settle.
//
// Claim: a pod of a Ready Workload (its annotations, and the Workload's namespace) at its first
// filter takes a free hold of its pod set on a node offered: the hold is then kept about the pod
// itself, and filter keeps that node alone, as a gang member's slot (gang_holds.h); bind commits
// into it. A hold that cannot be taken over is put back as it was.
//
// Thread-safe: Sweep runs under one mutex, Claim under another (it never waits for a sweep's
// requests to the API server).
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpusched/common/mutex.h"
#include "gpusched/dra/cel.h"
#include "gpusched/extender/gang_holds.h"
#include "gpusched/extender/hold_writer.h"
#include "gpusched/extender/kueue_check.h"
#include "gpusched/extender/kueue_writer.h"
#include "gpusched/extender/service_options.h"
#include "gpusched/inventory/inventory.h"

namespace gpusched::extender {

inline constexpr std::string_view kKueueWorkloadAnnotation = "gpusched.io/kueue-workload";
inline constexpr std::string_view kKueuePodSetAnnotation = "gpusched.io/kueue-podset";

class KueueAdmission {
 public:
  // Each pointer must outlive this; `writer` null: nothing is decided (snapshot mode), `publisher`
  // null: holds live in this replica's memory.
  KueueAdmission(inventory::Inventory* inventory, const ServiceOptions* options, KueueWriter* writer, HoldPublisher* publisher,
                 dra::cel::ProgramCache* programs, const Clock* clock)
      : inventory_(inventory),
        options_(options),
        writer_(writer),
        programs_(programs),
        clock_(clock),
        holds_{.inventory = inventory, .publisher = publisher, .ttl = options->kueue_hold_ttl} {}

  // See above. Returns how many Workloads it wrote a state for.
  size_t Sweep() const GPUSCHED_EXCLUDES(mu_);
  // The standing of `pod` (a Kueue pod: kKueueWorkloadAnnotation) offered `offered`: kSlot on the
  // node of its hold, kept or just claimed; kAlone when it has none to take.
  GangStanding Claim(const Pod& pod, const std::vector<std::string_view>& offered) const GPUSCHED_EXCLUDES(mu_);

 private:
  // Judges `w` (its check `check` Pending), holds a Ready plan, writes the state. True if written.
  bool DecideLocked(const kueue::Workload& w, const std::string& check, const inventory::KueueState& kueue) const
      GPUSCHED_REQUIRES(mu_);
  // Holds every slot of a Ready verdict; on a failure ends those made and says why.
  Status HoldLocked(const WorkloadVerdict& v) const GPUSCHED_REQUIRES(mu_);
  // Ends or renews the holds of every Workload that has some, as above.
  void KeepHoldsLocked(const inventory::KueueState& kueue) const GPUSCHED_REQUIRES(mu_);
  // Ends every hold about a pod of Workload `key` ("namespace/name"), claimed or not.
  void ReleaseLocked(std::string_view key, const inventory::InventorySnapshot& snapshot) const GPUSCHED_REQUIRES(mu_, claim_mu_);

  inventory::Inventory* const inventory_;
  const ServiceOptions* const options_;
  KueueWriter* const writer_;
  dra::cel::ProgramCache* const programs_;
  const Clock* const clock_;
  const HoldWriter holds_;
  mutable Mutex mu_;
  mutable std::map<std::string, std::string, std::less<>> decided_ GPUSCHED_GUARDED_BY(mu_);  // key -> resourceVersion
  // When each Workload was last set to Retry, and each unclaimed hold last made or renewed.
  mutable std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> retried_ GPUSCHED_GUARDED_BY(mu_);
  mutable std::map<std::string, std::chrono::steady_clock::time_point, std::less<>> renewed_ GPUSCHED_GUARDED_BY(mu_);
  mutable Mutex claim_mu_;  // taken after mu_ where both are held, never before
  // Holds taken over by pods (Claim): pod UID -> Workload key, so that they end with it.
  mutable std::map<std::string, std::string, std::less<>> claimed_ GPUSCHED_GUARDED_BY(claim_mu_);
};

}  // namespace gpusched::extender
