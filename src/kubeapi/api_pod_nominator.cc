// File: api_pod_nominator.cc
//
// status.nominatedNodeName written (or cleared) with a merge PATCH of the status subresource,
// the pod's UID as precondition.
#include "gpusched/kubeapi/api_pod_nominator.h"

#include <fmt/format.h>

#include "gpusched/json/writer.h"

namespace gpusched::kubeapi {

Status ApiPodNominator::Nominate(const Pod& pod, const std::string& node) {
  json::Writer w;
  w.StartObject().Key("metadata").StartObject().Member("uid", pod.uid).EndObject();
  w.Key("status").StartObject().Key("nominatedNodeName");
  if (node.empty()) {
    w.Null();
  } else {
    w.String(node);
  }
  w.EndObject().EndObject();
  std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/status", pod.namespace_name, pod.name);
  StatusOr<ApiResponse> r = client_->Send("PATCH", path, w.Take(), kMergePatch, request_timeout_);
  std::string what = node.empty() ? fmt::format("clearing the nomination of pod {}/{}", pod.namespace_name, pod.name)
                                  : fmt::format("nominating pod {}/{} to {}", pod.namespace_name, pod.name, node);
  if (!r.ok()) return UnavailableError(fmt::format("{}: {}", what, r.status().message()));
  if (r->status == 200) return OkStatus();
  // 422: the patch's UID is not the pod's (replaced under its name: metadata.uid is immutable).
  if (r->status == 404 || r->status == 409 || r->status == 422) {
    return AbortedError(fmt::format("{}: {} {}", what, r->status, StatusMessage(*r)));
  }
  if (r->status >= 400 && r->status < 500 && r->status != 408 && r->status != 429) {  // throttled or timed out: unknown
    return FailedPreconditionError(fmt::format("{}: {} {}", what, r->status, StatusMessage(*r)));
  }
  return UnavailableError(fmt::format("{}: {} {}", what, r->status, StatusMessage(*r)));
}

}  // namespace gpusched::kubeapi
