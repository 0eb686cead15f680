#include "gpusched/kubeapi/gpu_publisher.h"

#include <fmt/format.h>

#include "gpusched/json/json.h"
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
  GPUSCHED_ASSIGN_OR_RETURN(ApiResponse r, client->Send("PATCH", path, patch, "application/merge-patch+json", timeout));
  if (r.status != 200) return UnavailableError(fmt::format("PATCH node {}: {} {}", node, r.status, StatusMessage(r)));
  return true;
}

}  // namespace gpusched::kubeapi
