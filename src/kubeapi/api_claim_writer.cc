#include "gpusched/kubeapi/api_claim_writer.h"

#include <fmt/format.h>

#include "gpusched/json/json.h"
#include "gpusched/kubejson/dra_allocation_json.h"
#include "gpusched/kubejson/dra_objects.h"

namespace gpusched::kubeapi {
namespace {

constexpr std::string_view kMergePatch = "application/merge-patch+json";
constexpr std::string_view kDeleteProtection = "resource.kubernetes.io/delete-protection";

std::string Quoted(std::string_view s) {
  std::string out;
  json::AppendString(&out, s);
  return out;
}

// Returns the resourceVersion of the object in `body`, or "".
std::string ResourceVersionOf(const std::string& body) {
  rapidjson::Document d;
  if (!json::Parse(body, &d).ok() || !d.IsObject()) return "";
  const rapidjson::Value* meta = json::Find(d, "metadata");
  std::string rv;
  if (meta != nullptr && meta->IsObject()) (void)json::ReadString(*meta, "resourceVersion", "metadata", &rv);
  return rv;
}

Status Check(const StatusOr<ApiResponse>& r, std::string_view what, const dra::ResourceClaim& claim) {
  if (!r.ok()) return UnavailableError(fmt::format("{} of claim {}/{}: {}", what, claim.namespace_name, claim.name, r.status().message()));
  if (r->status == 200) return OkStatus();
  std::string message = fmt::format("{} of claim {}/{}: {} {}", what, claim.namespace_name, claim.name, r->status, StatusMessage(*r));
  if (r->status == 409) return AbortedError(std::move(message));
  if (r->status == 404) return NotFoundError(std::move(message));
  return UnavailableError(std::move(message));
}

}  // namespace

Status ApiClaimWriter::Write(const dra::ResourceClaim& claim, const dra::AllocationResult* result, const Pod& pod) {
  std::string path = fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}", claim.namespace_name, claim.name);
  std::string rv = claim.resource_version;
  if (result != nullptr && std::find(claim.finalizers.begin(), claim.finalizers.end(), kDeleteProtection) == claim.finalizers.end()) {
    std::string patch = R"({"metadata":{"resourceVersion":)";
    json::AppendString(&patch, rv);
    patch += R"(,"finalizers":[)";
    for (const std::string& f : claim.finalizers) {
      json::AppendString(&patch, f);
      patch += ',';
    }
    json::AppendString(&patch, kDeleteProtection);
    patch += "]}}";
    StatusOr<ApiResponse> r = client_->Send("PATCH", path, patch, kMergePatch, request_timeout_);
    GPUSCHED_RETURN_IF_ERROR(Check(r, "adding the finalizer", claim));
    rv = ResourceVersionOf(r->body);
  }
  std::string patch = R"({"metadata":{"resourceVersion":)";
  json::AppendString(&patch, rv);
  patch += R"(},"status":{)";
  if (result != nullptr) {
    patch += R"("allocation":)";
    kubejson::AppendAllocationResult(&patch, *result);
    patch += ',';
  }
  patch += R"("reservedFor":[)";
  for (const dra::ConsumerRef& ref : claim.reserved_for) {
    patch += fmt::format(R"({{"resource":{},"name":{},"uid":{}}},)", Quoted(ref.resource), Quoted(ref.name), Quoted(ref.uid));
  }
  patch += fmt::format(R"({{"resource":"pods","name":{},"uid":{}}}]}}}})", Quoted(pod.name), Quoted(pod.uid));
  return Check(client_->Send("PATCH", path + "/status", patch, kMergePatch, request_timeout_), "writing the allocation", claim);
}

}  // namespace gpusched::kubeapi
