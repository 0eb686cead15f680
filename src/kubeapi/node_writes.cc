// File: node_writes.cc
//
// What the node annotation writers share: the node's path, a merge patch of one annotation at a
// resourceVersion, reading a node, an API error as text, and storing a node the API server returned
// into the inventory.
#include "node_writes.h"

#include <fmt/format.h>

#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::kubeapi::node_writes {

std::string NodePath(std::string_view node) { return fmt::format("/api/v1/nodes/{}", node); }

std::string AnnotationPatch(std::string_view resource_version, std::string_view key, std::string_view value) {
  std::string out = R"({"metadata":{"resourceVersion":)";
  json::AppendString(&out, resource_version);
  out += R"(,"annotations":{)";
  json::AppendString(&out, key);
  out += ':';
  json::AppendString(&out, value);
  out += "}}}";
  return out;
}

std::string ApiError(std::string_view what, const ApiResponse& r) {
  return fmt::format("{}: {} {}", what, r.status, StatusMessage(r));
}

StatusOr<Node> GetNode(ApiClient* client, std::string_view name, std::chrono::milliseconds timeout) {
  GPUSCHED_ASSIGN_OR_RETURN(ApiResponse got, client->Send("GET", NodePath(name), {}, "application/json", timeout));
  if (got.status == 404) return NotFoundError(fmt::format("node {} is gone", name));
  if (got.status != 200) return UnavailableError(ApiError(fmt::format("reading node {}", name), got));
  rapidjson::Document d;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(got.body, &d));
  return kubejson::DecodeNode(d, "Node");
}

std::string StoreNode(inventory::Inventory* inventory, const std::string& body) {
  rapidjson::Document d;
  if (!json::Parse(body, &d).ok()) return "unknown";
  StatusOr<Node> decoded = kubejson::DecodeNode(d, "Node");
  if (!decoded.ok()) return "unknown";
  std::string rv = decoded->resource_version;
  inventory->UpsertNodes({std::move(decoded).value()});
  return rv;
}

}  // namespace gpusched::kubeapi::node_writes
