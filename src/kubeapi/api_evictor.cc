// File: api_evictor.cc
//
// The live eviction: a policy/v1 Eviction (optionally a dry run) under the pod's UID precondition;
// 429, other 4xx and the 500 for a pod several budgets cover are final; transport errors and other
// 5xx leave the outcome unknown.
#include "gpusched/kubeapi/api_evictor.h"

#include <fmt/format.h>

#include "gpusched/json/json.h"

namespace gpusched::kubeapi {

Status ApiEvictor::Evict(const std::string& ns, const std::string& name, const std::string& uid, bool dry_run) {
  std::string body = R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":)";
  json::AppendString(&body, name);
  body += R"(,"namespace":)";
  json::AppendString(&body, ns);
  body += R"(},"deleteOptions":{"preconditions":{"uid":)";
  json::AppendString(&body, uid);
  body += dry_run ? R"(},"dryRun":["All"]}})" : "}}}";
  std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/eviction{}", ns, name, dry_run ? "?dryRun=All" : "");
  StatusOr<ApiResponse> r = client_->Send("POST", path, body, "application/json", timeout_);
  if (!r.ok()) return UnavailableError(fmt::format("eviction of {}/{}: {}", ns, name, r.status().message()));
  if (r->status == 200 || r->status == 201) return OkStatus();
  std::string why = fmt::format("eviction of {}/{}: {} {}", ns, name, r->status, StatusMessage(*r));
  if (r->status == 429) return ResourceExhaustedError(why);
  if (r->status == 404) return NotFoundError(why);
  if (r->status == 409) return FailedPreconditionError(why);
  if (r->status >= 400 && r->status < 500) return FailedPreconditionError(why);
  // The API server answers 500 for a pod that more than one budget covers: final, not unknown.
  if (r->status == 500 && why.find("more than one PodDisruptionBudget") != std::string::npos) return FailedPreconditionError(why);
  return UnavailableError(why);
}

}  // namespace gpusched::kubeapi
