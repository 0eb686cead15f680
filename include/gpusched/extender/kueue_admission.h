// File: kueue_admission.h
//
// gpusched as the controller of Kueue's AdmissionChecks named by kueue.controllerName (issue 35,
// docs/kueue.md). On the replica that acts (KueueWriter::Leading), Sweep:
//   - sets each such AdmissionCheck Active;
//   - judges every Workload with quota reserved whose check of gpusched's is Pending
//     (kueue_check.h) and writes the verdict: Ready with podSetUpdates that tie its pods to the
//     plan (annotations gpusched.io/kueue-workload and gpusched.io/kueue-podset), after holding
//     the plan; Retry with the reason and requeueAfterSeconds; Rejected with the reason;
//   - ends the holds of Workloads evicted, finished or gone.
// A plan is held before Ready is written, one hold per pod, about AdmittedPodUid (a hold on the
// node: gpusched.io/holds, so every replica and a restart keep it), for kueue.holdSeconds; a
// write that fails ends them. A Workload is decided once per resourceVersion.
//
// Claim: a pod of a Ready Workload (its annotations) at its first filter takes a free hold of its
// pod set on a node offered: the hold is then kept about the pod itself, and filter keeps that
// node alone, as a gang member's slot (gang_holds.h); bind commits into it.
//
// Thread-safe: one mutex serializes Sweep and Claim.
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
                 dra::cel::ProgramCache* programs)
      : inventory_(inventory),
        options_(options),
        writer_(writer),
        programs_(programs),
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
  // Ends every hold about a pod of Workload `key` ("namespace/name") still unclaimed.
  void ReleaseLocked(std::string_view key, const inventory::InventorySnapshot& snapshot) const GPUSCHED_REQUIRES(mu_);

  inventory::Inventory* const inventory_;
  const ServiceOptions* const options_;
  KueueWriter* const writer_;
  dra::cel::ProgramCache* const programs_;
  const HoldWriter holds_;
  mutable Mutex mu_;
  mutable std::map<std::string, std::string, std::less<>> decided_ GPUSCHED_GUARDED_BY(mu_);  // key -> resourceVersion
};

}  // namespace gpusched::extender
