#include "gpusched/kubeapi/api_evictor.h"

#include <fmt/format.h>

#include "gpusched/json/json.h"

namespace gpusched::kubeapi {

Status ApiEvictor::Evict(const std::string& ns, const std::string& name, const std::string& uid) {
  std::string body = R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":)";
  json::AppendString(&body, name);
  body += R"(,"namespace":)";
  json::AppendString(&body, ns);
  body += R"(},"deleteOptions":{"preconditions":{"uid":)";
  json::AppendString(&body, uid);
  body += "}}}";
  std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/eviction", ns, name);
  StatusOr<ApiResponse> r = client_->Send("POST", path, body, "application/json", timeout_);
  if (!r.ok()) return UnavailableError(fmt::format("eviction of {}/{}: {}", ns, name, r.status().message()));
  if (r->status == 200 || r->status == 201) return OkStatus();
  std::string why = fmt::format("eviction of {}/{}: {} {}", ns, name, r->status, StatusMessage(*r));
  if (r->status == 429) return ResourceExhaustedError(why);
  if (r->status == 404) return NotFoundError(why);
  if (r->status == 409) return FailedPreconditionError(why);
  return UnavailableError(why);
}

}  // namespace gpusched::kubeapi
