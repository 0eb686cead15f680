#include "gpusched/extender/wire.h"

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "gpusched/k8s/objects.h"

namespace gpusched::extender {
namespace {

using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Key(Writer& w, std::string_view k) { w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())); }
void Str(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void FailedMap(Writer& w, std::string_view key, const ExtenderArgs& args,
               const std::vector<std::pair<size_t, std::string>>& entries) {
  Key(w, key);
  w.StartObject();
  for (const auto& [pos, reason] : entries) {
    Key(w, args.node_names[pos]);
    Str(w, reason);
  }
  w.EndObject();
}

std::string Take(rapidjson::StringBuffer& b) { return std::string(b.GetString(), b.GetSize()); }

}  // namespace

StatusOr<std::unique_ptr<ExtenderArgs>> ParseExtenderArgs(std::string body) {
  auto args = std::make_unique<ExtenderArgs>();
  args->buffer = std::move(body);
  GPUSCHED_RETURN_IF_ERROR(json::ParseInsitu(&args->buffer, &args->doc));
  const Value& root = args->doc;
  if (!root.IsObject()) return json::WrongType("ExtenderArgs", "object", root);

  const Value* pod = json::FindCaseInsensitive(root, "Pod");
  if (pod == nullptr) return InvalidArgumentError("ExtenderArgs.Pod: missing");
  GPUSCHED_ASSIGN_OR_RETURN(args->pod, k8s::DecodePod(*pod, "Pod"));

  const Value* names = json::FindCaseInsensitive(root, "NodeNames");
  const Value* nodes = json::FindCaseInsensitive(root, "Nodes");
  if (names != nullptr) {
    if (!names->IsArray()) return json::WrongType("ExtenderArgs.NodeNames", "array", *names);
    args->node_names.reserve(names->Size());
    for (rapidjson::SizeType i = 0; i < names->Size(); ++i) {
      const Value& n = (*names)[i];
      if (!n.IsString()) return json::WrongType(fmt::format("ExtenderArgs.NodeNames[{}]", i), "string", n);
      args->node_names.push_back(json::View(n));
    }
    return args;
  }
  if (nodes == nullptr) return InvalidArgumentError("ExtenderArgs: both Nodes and NodeNames are null");
  if (!nodes->IsObject()) return json::WrongType("ExtenderArgs.Nodes", "object (NodeList)", *nodes);
  args->with_nodes = true;
  const Value* items = json::Find(*nodes, "items");
  if (items == nullptr) return args;
  if (!items->IsArray()) return json::WrongType("ExtenderArgs.Nodes.items", "array", *items);
  args->nodes.reserve(items->Size());
  for (rapidjson::SizeType i = 0; i < items->Size(); ++i) {
    GPUSCHED_ASSIGN_OR_RETURN(Node node, k8s::DecodeNode((*items)[i], fmt::format("Nodes.items[{}]", i)));
    args->node_items.push_back(&(*items)[i]);
    args->nodes.push_back(std::move(node));
  }
  for (const Node& n : args->nodes) args->node_names.push_back(n.name);
  return args;
}

std::string EncodeFilterResult(const ExtenderArgs& args, const FilterResult& result) {
  rapidjson::StringBuffer b;
  b.Reserve(64 + 24 * result.kept.size());
  Writer w(b);
  w.StartObject();
  Key(w, "Nodes");
  if (args.with_nodes) {
    w.StartObject();
    Key(w, "metadata");
    w.StartObject();
    w.EndObject();
    Key(w, "items");
    w.StartArray();
    for (size_t pos : result.kept) args.node_items[pos]->Accept(w);
    w.EndArray();
    w.EndObject();
  } else {
    w.Null();
  }
  Key(w, "NodeNames");
  if (args.with_nodes) {
    w.Null();
  } else {
    w.StartArray();
    for (size_t pos : result.kept) Str(w, args.node_names[pos]);
    w.EndArray();
  }
  FailedMap(w, "FailedNodes", args, result.failed);
  FailedMap(w, "FailedAndUnresolvableNodes", args, result.unresolvable);
  Key(w, "Error");
  Str(w, "");
  w.EndObject();
  return Take(b);
}

std::string EncodeFilterError(std::string_view error) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  for (std::string_view k : {"Nodes", "NodeNames", "FailedNodes", "FailedAndUnresolvableNodes"}) {
    Key(w, k);
    w.Null();
  }
  Key(w, "Error");
  Str(w, error);
  w.EndObject();
  return Take(b);
}

std::string EncodeHostPriorities(std::span<const HostPriority> priorities) {
  rapidjson::StringBuffer b;
  b.Reserve(8 + 40 * priorities.size());
  Writer w(b);
  w.StartArray();
  for (const HostPriority& p : priorities) {
    w.StartObject();
    Key(w, "Host");
    Str(w, p.host);
    Key(w, "Score");
    w.Int64(p.score);
    w.EndObject();
  }
  w.EndArray();
  return Take(b);
}

StatusOr<BindingArgs> ParseBindingArgs(std::string_view body) {
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(body, &doc));
  if (!doc.IsObject()) return json::WrongType("ExtenderBindingArgs", "object", doc);
  BindingArgs out;
  struct Field {
    std::string_view key;
    std::string* dst;
  };
  for (const Field& f : {Field{"PodName", &out.pod_name}, Field{"PodNamespace", &out.pod_namespace},
                         Field{"PodUID", &out.pod_uid}, Field{"Node", &out.node}}) {
    const Value* v = json::FindCaseInsensitive(doc, f.key);
    if (v == nullptr) continue;
    if (!v->IsString()) return json::WrongType(fmt::format("ExtenderBindingArgs.{}", f.key), "string", *v);
    f.dst->assign(json::View(*v));
  }
  if (out.pod_uid.empty()) return InvalidArgumentError("ExtenderBindingArgs.PodUID: missing");
  if (out.node.empty()) return InvalidArgumentError("ExtenderBindingArgs.Node: missing");
  return out;
}

std::string EncodeBindingResult(std::string_view error) {
  rapidjson::StringBuffer b;
  Writer w(b);
  w.StartObject();
  Key(w, "Error");
  Str(w, error);
  w.EndObject();
  return Take(b);
}

}  // namespace gpusched::extender
