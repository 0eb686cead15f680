// File: admission.cc
//
// The mode-switch review: an AdmissionReview of a Node update is denied, naming up to five pods,
// when the new mode label changes the node's GPU mode while GPU pods of another mode run there;
// every other review is allowed.
#include "gpusched/extender/admission.h"

#include <fmt/format.h>

#include <optional>
#include <set>

#include "gpusched/json/json.h"
#include "gpusched/json/writer.h"
#include "gpusched/model/names.h"
#include "gpusched/model/node_mode.h"

namespace gpusched::extender {
namespace {

constexpr size_t kPodsNamed = 5;

// Returns the node's mode label, nullopt when absent. Errors on a wrong-typed field.
StatusOr<std::optional<std::string>> ModeLabel(const rapidjson::Value& node, std::string_view path) {
  if (!node.IsObject()) return json::WrongType(path, "object", node);
  const rapidjson::Value* meta = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(node, "metadata", path, &meta));
  if (meta == nullptr) return std::optional<std::string>();
  const rapidjson::Value* labels = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(*meta, "labels", fmt::format("{}.metadata", path), &labels));
  if (labels == nullptr) return std::optional<std::string>();
  const rapidjson::Value* v = json::Find(*labels, names::kScheduleModeLabel);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->IsString()) return json::WrongType(fmt::format("{}.metadata.labels[\"{}\"]", path, names::kScheduleModeLabel), "string", *v);
  return std::optional<std::string>(std::string(json::View(*v)));
}

std::string Response(std::string_view uid, bool allowed, std::string_view message) {
  json::Writer w;
  w.StartObject().Member("apiVersion", "admission.k8s.io/v1").Member("kind", "AdmissionReview");
  w.Key("response").StartObject().Member("uid", uid).Member("allowed", allowed);
  if (!allowed) {
    w.Key("status").StartObject().Member("code", 403).Member("reason", "Forbidden").Member("message", message).EndObject();
  }
  w.EndObject().EndObject();
  return w.Take();
}

std::string Shown(const std::optional<std::string>& label) { return label ? fmt::format("\"{}\"", *label) : "absent"; }

}  // namespace

StatusOr<std::string> ReviewNodeUpdate(std::string_view body, const inventory::InventorySnapshot& snapshot) {
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(body, &doc));
  if (!doc.IsObject()) return json::WrongType("AdmissionReview", "object", doc);
  const rapidjson::Value* request = nullptr;
  GPUSCHED_RETURN_IF_ERROR(json::FindObject(doc, "request", "AdmissionReview", &request));
  if (request == nullptr) return InvalidArgumentError("AdmissionReview.request: missing");
  std::string uid;
  std::string operation;
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*request, "uid", "AdmissionReview.request", &uid));
  GPUSCHED_RETURN_IF_ERROR(json::ReadString(*request, "operation", "AdmissionReview.request", &operation));
  if (uid.empty()) return InvalidArgumentError("AdmissionReview.request.uid: missing");
  const rapidjson::Value* object = json::Find(*request, "object");
  const rapidjson::Value* old_object = json::Find(*request, "oldObject");
  if (operation != "UPDATE" || object == nullptr || old_object == nullptr) return Response(uid, true, "");

  GPUSCHED_ASSIGN_OR_RETURN(std::optional<std::string> now, ModeLabel(*object, "AdmissionReview.request.object"));
  GPUSCHED_ASSIGN_OR_RETURN(std::optional<std::string> before, ModeLabel(*old_object, "AdmissionReview.request.oldObject"));
  NodeMode new_mode = ModeFromLabel(now);
  if (new_mode == ModeFromLabel(before)) return Response(uid, true, "");

  std::string name;
  const rapidjson::Value* meta = json::Find(*object, "metadata");
  if (meta != nullptr && meta->IsObject()) {
    GPUSCHED_RETURN_IF_ERROR(json::ReadString(*meta, "name", "AdmissionReview.request.object.metadata", &name));
  }
  const placement::NodeState* node = snapshot.FindNode(name);
  if (node == nullptr) return Response(uid, true, "");
  std::vector<const Allocation*> running;
  std::set<std::string_view> modes;
  for (const Allocation& a : node->allocations) {
    if (a.mode == new_mode) continue;
    running.push_back(&a);
    modes.insert(ModeName(a.mode));
  }
  if (running.empty()) return Response(uid, true, "");
  std::vector<std::string> shown;
  for (size_t i = 0; i < running.size() && i < kPodsNamed; ++i) {
    shown.push_back(fmt::format("{}/{}", running[i]->pod_namespace, running[i]->pod_name));
  }
  std::string more = running.size() > kPodsNamed ? fmt::format(" and {} more", running.size() - kPodsNamed) : "";
  return Response(uid, false,
                  fmt::format("changing {} from {} to {} on node {} is denied: {} GPU pod{} of mode {} still run{} ({}{}); "
                              "drain them first",
                              names::kScheduleModeLabel, Shown(before), Shown(now), name, running.size(),
                              running.size() == 1 ? "" : "s", fmt::join(modes, ","), running.size() == 1 ? "s" : "",
                              fmt::join(shown, ", "), more));
}

}  // namespace gpusched::extender
