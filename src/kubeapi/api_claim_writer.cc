// File: api_claim_writer.cc
//
// Owner mode's claim writes to the API server: finalizer then status, each at the resourceVersion
// the last write returned; a special claim POSTed, allocated and named in the pod's status, deleted
// if a later step fails; and unreserve.
#include "gpusched/kubeapi/api_claim_writer.h"

#include <fmt/format.h>

#include "gpusched/json/json.h"
#include "gpusched/kubejson/dra_allocation_json.h"
#include "gpusched/kubejson/dra_objects.h"
#include "gpusched/kubejson/special_claim_json.h"

namespace gpusched::kubeapi {
namespace {

constexpr std::string_view kDeleteProtection = "resource.kubernetes.io/delete-protection";

// A status.reservedFor entry as the API server keeps it.
std::string ConsumerJson(const dra::ConsumerRef& ref) {
  std::string group = ref.api_group.empty() ? "" : fmt::format(R"("apiGroup":{},)", json::Quoted(ref.api_group));
  return fmt::format(R"({{{}"resource":{},"name":{},"uid":{}}})", group, json::Quoted(ref.resource), json::Quoted(ref.name), json::Quoted(ref.uid));
}

// The metadata field `key` of the object in `body`, or "".
std::string MetadataOf(const std::string& body, const char* key) {
  rapidjson::Document d;
  if (!json::Parse(body, &d).ok() || !d.IsObject()) return "";
  const rapidjson::Value* meta = json::Find(d, "metadata");
  std::string value;
  if (meta != nullptr && meta->IsObject()) (void)json::ReadString(*meta, key, "metadata", &value);
  return value;
}

Status Check(const StatusOr<ApiResponse>& r, std::string_view what, const dra::ResourceClaim& claim) {
  if (!r.ok()) return UnavailableError(fmt::format("{} of claim {}/{}: {}", what, claim.namespace_name, claim.name, r.status().message()));
  if (r->status == 200 || r->status == 201) return OkStatus();
  std::string message = fmt::format("{} of claim {}/{}: {} {}", what, claim.namespace_name, claim.name, r->status, StatusMessage(*r));
  if (r->status == 409) return AbortedError(std::move(message));
  if (r->status == 404) return NotFoundError(std::move(message));
  return UnavailableError(std::move(message));
}

}  // namespace

StatusOr<dra::ResourceClaim> ApiClaimWriter::Write(const dra::ResourceClaim& claim, const dra::AllocationResult* result,
                                                   const Pod& pod) {
  dra::ResourceClaim written = claim;
  std::string path = ClaimPath(claim);
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
    rv = MetadataOf(r->body, "resourceVersion");
    written.finalizers.emplace_back(kDeleteProtection);
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
  for (const dra::ConsumerRef& ref : claim.reserved_for) patch += ConsumerJson(ref) + ',';
  patch += fmt::format(R"({{"resource":"pods","name":{},"uid":{}}}]}}}})", json::Quoted(pod.name), json::Quoted(pod.uid));
  StatusOr<ApiResponse> r = client_->Send("PATCH", path + "/status", patch, kMergePatch, request_timeout_);
  GPUSCHED_RETURN_IF_ERROR(Check(r, "writing the allocation", claim));
  if (result != nullptr) written.allocation = *result;
  written.reserved_for.push_back(dra::ConsumerRef{.resource = "pods", .name = pod.name, .uid = pod.uid});
  written.resource_version = MetadataOf(r->body, "resourceVersion");
  return written;
}

std::string ApiClaimWriter::ClaimPath(const dra::ResourceClaim& claim) {
  return fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}", claim.namespace_name, claim.name);
}

StatusOr<dra::ResourceClaim> ApiClaimWriter::CreateSpecial(const dra::SpecialClaim& special, const dra::AllocationResult& result,
                                                           const Pod& pod) {
  dra::ResourceClaim created = special.claim;
  StatusOr<ApiResponse> r = client_->Send("POST", fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims", created.namespace_name),
                                          kubejson::SpecialClaimJson(special, pod), "application/json", request_timeout_);
  GPUSCHED_RETURN_IF_ERROR(Check(r, "creating the special claim", created));
  created.name = MetadataOf(r->body, "name");
  created.uid = MetadataOf(r->body, "uid");
  created.resource_version = MetadataOf(r->body, "resourceVersion");
  created.finalizers = {std::string(kDeleteProtection)};
  if (created.name.empty()) return UnavailableError(fmt::format("creating the special claim {}/{}: the reply names no claim", created.namespace_name, special.claim.name));
  StatusOr<dra::ResourceClaim> allocated = Write(created, &result, pod);
  Status s = allocated.status();
  if (s.ok()) {
    created = std::move(allocated).value();
    std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/status", pod.namespace_name, pod.name);
    StatusOr<ApiResponse> p = client_->Send("PATCH", path, kubejson::ExtendedClaimStatusPatch(special, created.name, pod), kMergePatch,
                                            request_timeout_);
    if (!p.ok()) {
      s = UnavailableError(fmt::format("recording claim {} in the status of pod {}/{}: {}", created.name, pod.namespace_name, pod.name, p.status().message()));
    } else if (p->status != 200) {
      // 422: the pod was replaced under its name (the patch's UID would change an immutable field).
      s = Status(p->status == 409 || p->status == 404 || p->status == 422 ? StatusCode::kAborted : StatusCode::kUnavailable,
                 fmt::format("recording claim {} in the status of pod {}/{}: {} {}", created.name, pod.namespace_name, pod.name, p->status, StatusMessage(*p)));
    }
  }
  if (!s.ok()) {
    Status released = Delete(created);
    if (!released.ok()) return Status(s.code(), fmt::format("{}; releasing the claim again failed too: {}", s.message(), released.message()));
    return s;
  }
  return created;
}

Status ApiClaimWriter::Unreserve(const dra::ResourceClaim& claim, const std::vector<std::string>& pods, bool deallocate) {
  std::string patch = R"({"metadata":{"resourceVersion":)";
  json::AppendString(&patch, claim.resource_version);
  patch += R"(},"status":{)";
  if (deallocate) patch += R"("allocation":null,"devices":null,)";
  patch += R"("reservedFor":[)";
  bool first = true;
  for (const dra::ConsumerRef& ref : claim.reserved_for) {
    if (std::find(pods.begin(), pods.end(), ref.uid) != pods.end()) continue;
    patch += (first ? "" : ",") + ConsumerJson(ref);
    first = false;
  }
  patch += "]}}";
  StatusOr<ApiResponse> r = client_->Send("PATCH", ClaimPath(claim) + "/status", patch, kMergePatch, request_timeout_);
  GPUSCHED_RETURN_IF_ERROR(Check(r, "unreserving", claim));
  if (!deallocate || std::find(claim.finalizers.begin(), claim.finalizers.end(), kDeleteProtection) == claim.finalizers.end()) return OkStatus();
  patch = R"({"metadata":{"resourceVersion":)";
  json::AppendString(&patch, MetadataOf(r->body, "resourceVersion"));
  patch += R"(,"finalizers":[)";
  first = true;
  for (const std::string& f : claim.finalizers) {
    if (f == kDeleteProtection) continue;
    if (!first) patch += ',';
    json::AppendString(&patch, f);
    first = false;
  }
  patch += "]}}";
  return Check(client_->Send("PATCH", ClaimPath(claim), patch, kMergePatch, request_timeout_), "removing the finalizer", claim);
}

Status ApiClaimWriter::Delete(const dra::ResourceClaim& claim) {
  // Clear what this writer wrote (allocation, reservation, finalizer), then delete: a claim that is
  // already gone (404) is released.
  const std::pair<std::string, std::string> steps[] = {
      {ClaimPath(claim) + "/status", R"({"status":{"allocation":null,"reservedFor":null}})"},
      {ClaimPath(claim), R"({"metadata":{"finalizers":null}})"},
  };
  for (const auto& [path, patch] : steps) {
    StatusOr<ApiResponse> r = client_->Send("PATCH", path, patch, kMergePatch, request_timeout_);
    if (r.ok() && r->status == 404) return OkStatus();
    GPUSCHED_RETURN_IF_ERROR(Check(r, "releasing", claim));
  }
  StatusOr<ApiResponse> r = client_->Send("DELETE", ClaimPath(claim), "", "application/json", request_timeout_);
  if (r.ok() && r->status == 404) return OkStatus();
  return Check(r, "deleting", claim);
}

}  // namespace gpusched::kubeapi
