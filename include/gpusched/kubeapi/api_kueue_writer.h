// File: api_kueue_writer.h
//
// The live KueueWriter (extender/kueue_writer.h).
//   - Leading: this replica acts while the Lease that kube-scheduler's leader election keeps
//     (kube-system/gpu-scheduler in the shipped deployment) is held by the pod it runs in: its
//     holderIdentity is "<hostname>_<uuid>" and gpusched runs beside kube-scheduler in the same
//     pod, so the hostname names both; and the lease has not run out (renewTime plus
//     leaseDurationSeconds). Read again when the last answer is older than one second (a sweep
//     asks before every write), so a replica that lost it stops within a second.
//   - SetCheckState: GET the Workload; Aborted unless its resourceVersion is the one judged; then
//     a merge PATCH of its status subresource with that resourceVersion as precondition, the
//     whole status.admissionChecks list (a merge patch replaces lists) with gpusched's entry
//     changed: state, message, lastTransitionTime (when the state changes), podSetUpdates (Ready
//     only), requeueAfterSeconds (Retry only); the other checks' entries as read. 409: Aborted.
//   - Activate: a merge PATCH of the AdmissionCheck's status, its Active condition True, with its
//     resourceVersion as read.
//
// Thread-safe.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "gpusched/common/clock.h"
#include "gpusched/common/mutex.h"
#include "gpusched/extender/kueue_writer.h"
#include "gpusched/kubeapi/api_client.h"

namespace gpusched::kubeapi {

struct ApiKueueWriterOptions {
  std::string version = "v1beta2";          // kueue.x-k8s.io version served (ClusterSync found it)
  std::string lease_namespace = "kube-system";
  std::string lease_name = "gpu-scheduler";
  std::string identity;                     // this pod's hostname
  std::chrono::milliseconds request_timeout{5000};
  const Clock* clock = &RealClock();        // wall time: renewTime and lastTransitionTime
};

class ApiKueueWriter : public extender::KueueWriter {
 public:
  // REQUIRES: `client` outlives the writer.
  ApiKueueWriter(ApiClient* client, ApiKueueWriterOptions options) : client_(client), options_(std::move(options)) {}

  bool Leading() override;
  Status SetCheckState(const kueue::Workload& w, const std::string& check, const extender::CheckUpdate& update) override;
  Status Activate(const kueue::AdmissionCheck& check) override;

 private:
  static constexpr std::chrono::seconds kLeaderCacheFor{1};
  // The body of a PATCH's answer or GET's, or the error naming `what`; 404 and 409 are Aborted.
  StatusOr<std::string> Call(std::string_view method, const std::string& path, std::string_view body, std::string_view what);
  // The Lease says this pod leads, now.
  bool ReadLease();

  ApiClient* const client_;
  const ApiKueueWriterOptions options_;
  Mutex mu_;
  std::optional<std::chrono::steady_clock::time_point> asked_ GPUSCHED_GUARDED_BY(mu_);
  bool leading_ GPUSCHED_GUARDED_BY(mu_) = false;
};

}  // namespace gpusched::kubeapi
