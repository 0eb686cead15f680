// File: node_agent_api.cc
//
// The node agent's API calls: gpusched.io/gpu-devices published only when its value changed, the
// pods bound to the node, the ResourceClaims they use and the node's ResourceSlices, and Warning
// Events on the node.
#include "gpusched/kubeapi/node_agent_api.h"

#include <fmt/format.h>

#include <optional>
#include <set>

#include "gpusched/common/time_format.h"
#include "gpusched/json/json.h"
#include "gpusched/kubejson/dra_objects.h"
#include "gpusched/kubejson/objects.h"
#include "gpusched/model/names.h"

namespace gpusched::kubeapi {

StatusOr<bool> PublishGpuDevices(ApiClient* client, const std::string& node, const std::string& value,
                                 std::chrono::milliseconds timeout) {
  std::string path = fmt::format("/api/v1/nodes/{}", node);
  GPUSCHED_ASSIGN_OR_RETURN(ApiResponse got, client->Send("GET", path, {}, "application/json", timeout));
  if (got.status == 404) return NotFoundError(fmt::format("node {} does not exist", node));
  if (got.status != 200) return UnavailableError(fmt::format("GET node {}: {} {}", node, got.status, StatusMessage(got)));
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(got.body, &doc));
  const rapidjson::Value* meta = doc.IsObject() ? json::Find(doc, "metadata") : nullptr;
  const rapidjson::Value* annotations = meta != nullptr && meta->IsObject() ? json::Find(*meta, "annotations") : nullptr;
  const rapidjson::Value* current = annotations != nullptr && annotations->IsObject()
                                        ? json::Find(*annotations, names::kGpuDevicesAnnotation)
                                        : nullptr;
  if (current != nullptr && current->IsString() && value == current->GetString()) return false;
  std::string patch = R"({"metadata":{"annotations":{)";
  json::AppendString(&patch, names::kGpuDevicesAnnotation);
  patch += ":";
  json::AppendString(&patch, value);
  patch += "}}}";
  GPUSCHED_ASSIGN_OR_RETURN(ApiResponse r, client->Send("PATCH", path, patch, kMergePatch, timeout));
  if (r.status != 200) return UnavailableError(fmt::format("PATCH node {}: {} {}", node, r.status, StatusMessage(r)));
  return true;
}

StatusOr<std::vector<Pod>> PodsOnNode(ApiClient* client, const std::string& node, std::chrono::milliseconds timeout) {
  std::string path = fmt::format("/api/v1/pods?fieldSelector=spec.nodeName%3D{}", node);
  GPUSCHED_ASSIGN_OR_RETURN(ApiResponse r, client->Send("GET", path, {}, "application/json", timeout));
  if (r.status != 200) return UnavailableError(fmt::format("LIST pods on {}: {} {}", node, r.status, StatusMessage(r)));
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(r.body, &doc));
  std::vector<Pod> out;
  const rapidjson::Value* items = doc.IsObject() ? json::Find(doc, "items") : nullptr;
  if (items == nullptr || !items->IsArray()) return out;
  for (const rapidjson::Value& item : items->GetArray()) {
    StatusOr<Pod> pod = kubejson::DecodePod(item, "pod");
    if (!pod.ok() || pod->terminal()) continue;
    out.push_back(std::move(pod).value());
  }
  return out;
}

namespace {

// The names of the claims `pod` uses (ClaimsOfPods).
std::vector<std::string> ClaimNames(const Pod& pod) {
  std::vector<std::string> out;
  for (const PodClaimRef& ref : pod.resource_claims) {
    std::string name = !ref.claim_name.empty() ? ref.claim_name : ref.generated.value_or("");
    if (!name.empty()) out.push_back(std::move(name));
  }
  if (!pod.extended_resource_claim.empty()) out.push_back(pod.extended_resource_claim);
  return out;
}

// The claim `ns`/`name`; nullopt when it does not exist.
StatusOr<std::optional<dra::ResourceClaim>> GetClaim(ApiClient* client, const std::string& ns, const std::string& name,
                                                     std::chrono::milliseconds timeout) {
  std::string path = fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}", ns, name);
  GPUSCHED_ASSIGN_OR_RETURN(ApiResponse r, client->Send("GET", path, {}, "application/json", timeout));
  if (r.status == 404) return std::optional<dra::ResourceClaim>();
  if (r.status != 200) return UnavailableError(fmt::format("GET ResourceClaim {}/{}: {} {}", ns, name, r.status, StatusMessage(r)));
  GPUSCHED_ASSIGN_OR_RETURN(dra::ResourceClaim claim, kubejson::ParseResourceClaim(r.body));
  return std::optional<dra::ResourceClaim>(std::move(claim));
}

}  // namespace

StatusOr<std::vector<dra::ResourceClaim>> ClaimsOfPods(ApiClient* client, const std::vector<Pod>& pods,
                                                       std::chrono::milliseconds timeout) {
  std::vector<dra::ResourceClaim> out;
  std::set<std::string> seen;  // a claim several pods share is read once
  for (const Pod& pod : pods) {
    for (const std::string& name : ClaimNames(pod)) {
      if (!seen.insert(pod.namespace_name + "/" + name).second) continue;
      GPUSCHED_ASSIGN_OR_RETURN(std::optional<dra::ResourceClaim> claim, GetClaim(client, pod.namespace_name, name, timeout));
      if (claim) out.push_back(std::move(*claim));
    }
  }
  return out;
}

StatusOr<std::vector<dra::ResourceSlice>> SlicesOnNode(ApiClient* client, const std::string& node, std::chrono::milliseconds timeout) {
  std::string path = fmt::format("/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.nodeName%3D{}", node);
  GPUSCHED_ASSIGN_OR_RETURN(ApiResponse r, client->Send("GET", path, {}, "application/json", timeout));
  if (r.status != 200) return UnavailableError(fmt::format("LIST ResourceSlices on {}: {} {}", node, r.status, StatusMessage(r)));
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(r.body, &doc));
  std::vector<dra::ResourceSlice> out;
  const rapidjson::Value* items = doc.IsObject() ? json::Find(doc, "items") : nullptr;
  if (items == nullptr || !items->IsArray()) return out;
  for (const rapidjson::Value& item : items->GetArray()) {
    StatusOr<dra::ResourceSlice> slice = kubejson::DecodeResourceSlice(item);
    if (slice.ok()) out.push_back(std::move(slice).value());
  }
  return out;
}

Status PostNodeEvent(ApiClient* client, const std::string& node, const std::string& reason, const std::string& message,
                     std::chrono::milliseconds timeout) {
  std::string now = FormatRfc3339(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::system_clock::now().time_since_epoch()).count());
  std::string body = R"({"apiVersion":"v1","kind":"Event","metadata":{"generateName":)";
  json::AppendString(&body, node + ".");
  body += R"(,"namespace":"default"},"involvedObject":{"apiVersion":"v1","kind":"Node","name":)";
  json::AppendString(&body, node);
  body += R"(},"reason":)";
  json::AppendString(&body, reason);
  body += R"(,"message":)";
  json::AppendString(&body, message);
  body += R"(,"type":"Warning","source":{"component":"gpusched-agent","host":)";
  json::AppendString(&body, node);
  body += fmt::format(R"(}},"firstTimestamp":"{0}","lastTimestamp":"{0}","count":1}})", now);
  GPUSCHED_ASSIGN_OR_RETURN(ApiResponse r, client->Send("POST", "/api/v1/namespaces/default/events", body, "application/json", timeout));
  if (r.status != 201 && r.status != 200) return UnavailableError(fmt::format("POST Event on node {}: {} {}", node, r.status, StatusMessage(r)));
  return OkStatus();
}

}  // namespace gpusched::kubeapi
