#include "gpusched/extender/wire.h"

#include <fmt/format.h>
#include <strings.h>

#include "gpusched/json/json.h"

#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {

struct ExtenderArgs::Body {
  std::string buffer;  // the request body, parsed in place; strings in `doc` point into it
  rapidjson::Document doc;
  std::vector<const rapidjson::Value*> node_items;  // with Nodes: the objects as received
};

ExtenderArgs::ExtenderArgs() : body(std::make_unique<Body>()) {}
ExtenderArgs::~ExtenderArgs() = default;

namespace {

using rapidjson::Value;

// Appends node name `pos` of `args` as a JSON string. Names of a remembered list need no
// escaping (node_names_memo.h keeps only such lists): they are copied as they are.
void AppendName(std::string* out, const ExtenderArgs& args, size_t pos) {
  std::string_view name = args.node_names[pos];
  if (args.remembered == nullptr) return json::AppendString(out, name);
  out->push_back('"');
  out->append(name);
  out->push_back('"');
}

// Replies are appended straight into one string: the hot replies are mostly node names, which
// need no escaping, so this beats a general-purpose writer by a wide margin.
void FailedMap(std::string* out, std::string_view key, const ExtenderArgs& args,
               const std::vector<std::pair<size_t, std::string>>& entries) {
  out->append(key);
  out->push_back('{');
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendName(out, args, entries[i].first);
    out->push_back(':');
    json::AppendString(out, entries[i].second);
  }
  out->push_back('}');
}

// Parses the whole body (in place) with RapidJSON.
StatusOr<std::unique_ptr<ExtenderArgs>> ParseInFull(std::string body) {
  auto args = std::make_unique<ExtenderArgs>();
  args->body->buffer = std::move(body);
  GPUSCHED_RETURN_IF_ERROR(json::ParseInsitu(&args->body->buffer, &args->body->doc));
  const Value& root = args->body->doc;
  if (!root.IsObject()) return json::WrongType("ExtenderArgs", "object", root);

  const Value* pod = json::FindCaseInsensitive(root, "Pod");
  if (pod == nullptr) return InvalidArgumentError("ExtenderArgs.Pod: missing");
  GPUSCHED_ASSIGN_OR_RETURN(args->pod, kubejson::DecodePod(*pod, "Pod"));

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
    GPUSCHED_ASSIGN_OR_RETURN(Node node, kubejson::DecodeNode((*items)[i], fmt::format("Nodes.items[{}]", i)));
    args->body->node_items.push_back(&(*items)[i]);
    args->nodes.push_back(std::move(node));
  }
  for (const Node& n : args->nodes) args->node_names.push_back(n.name);
  return args;
}

// Reads the envelope kube-scheduler writes, {"Pod":{...},"Nodes":null,"NodeNames":[...]}, in any
// key order, case and spacing, when its NodeNames list is remembered: the Pod is parsed, the list
// is taken from `memo`. Returns null for anything else (an unknown or repeated key, an escaped
// key, Nodes not null, a list not remembered), and the caller parses the body in full.
std::unique_ptr<ExtenderArgs> ParseRemembered(const std::string& body, const NodeNamesMemo& memo) {
  std::string_view text = body;
  size_t p = 0;
  auto skip = [&] {
    while (p < text.size() && (text[p] == ' ' || text[p] == '\t' || text[p] == '\n' || text[p] == '\r')) ++p;
  };
  auto take = [&](char c) {
    skip();
    if (p >= text.size() || text[p] != c) return false;
    ++p;
    return true;
  };
  auto same = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
  };
  auto args = std::make_unique<ExtenderArgs>();
  bool pod = false, nodes = false;
  if (!take('{')) return nullptr;
  do {
    if (!take('"')) return nullptr;
    size_t end = text.find_first_of("\"\\", p);
    if (end == std::string_view::npos || text[end] != '"') return nullptr;
    std::string_view key = text.substr(p, end - p);
    p = end + 1;
    if (!take(':')) return nullptr;
    skip();
    if (same(key, "Pod") && !pod) {
      size_t used = 0;
      if (!json::ParsePrefix(text.substr(p), &args->body->doc, &used).ok()) return nullptr;
      StatusOr<Pod> decoded = kubejson::DecodePod(args->body->doc, "Pod");
      if (!decoded.ok()) return nullptr;
      args->pod = std::move(*decoded);
      pod = true;
      p += used;
    } else if (same(key, "NodeNames") && args->remembered == nullptr) {
      args->remembered = memo.Match(text.substr(p));
      if (args->remembered == nullptr) return nullptr;
      p += args->remembered->json.size();
    } else if (same(key, "Nodes") && !nodes && text.substr(p).starts_with("null")) {
      nodes = true;
      p += 4;
    } else {
      return nullptr;
    }
  } while (take(','));
  if (!take('}')) return nullptr;
  skip();
  if (p != text.size() || !pod || args->remembered == nullptr) return nullptr;
  args->node_names = args->remembered->names;
  return args;
}

}  // namespace

StatusOr<std::unique_ptr<ExtenderArgs>> ParseExtenderArgs(std::string body, NodeNamesMemo* names) {
  if (names != nullptr) {
    if (std::unique_ptr<ExtenderArgs> args = ParseRemembered(body, *names)) return args;
  }
  StatusOr<std::unique_ptr<ExtenderArgs>> parsed = ParseInFull(std::move(body));
  if (names != nullptr && parsed.ok() && !(*parsed)->with_nodes) names->Remember((*parsed)->node_names);
  return parsed;
}

std::string EncodeFilterResult(const ExtenderArgs& args, const FilterResult& result) {
  std::string out;
  out.reserve(128 + 24 * args.node_names.size());
  if (args.with_nodes) {
    out.append(R"({"Nodes":{"metadata":{},"items":[)");
    for (size_t i = 0; i < result.kept.size(); ++i) {
      if (i > 0) out.push_back(',');
      json::AppendValue(&out, *args.body->node_items[result.kept[i]]);
    }
    out.append(R"(]},"NodeNames":null)");
  } else if (args.remembered != nullptr && result.kept.size() == args.node_names.size()) {
    // Every node kept (kept is in request order), and the list is a remembered one: its text.
    out.append(R"({"Nodes":null,"NodeNames":)");
    out.append(args.remembered->json);
  } else {
    out.append(R"({"Nodes":null,"NodeNames":[)");
    for (size_t i = 0; i < result.kept.size(); ++i) {
      if (i > 0) out.push_back(',');
      AppendName(&out, args, result.kept[i]);
    }
    out.push_back(']');
  }
  FailedMap(&out, R"(,"FailedNodes":)", args, result.failed);
  FailedMap(&out, R"(,"FailedAndUnresolvableNodes":)", args, result.unresolvable);
  out.append(R"(,"Error":""})");
  return out;
}

std::string EncodeFilterError(std::string_view error) {
  std::string out = R"({"Nodes":null,"NodeNames":null,"FailedNodes":null,"FailedAndUnresolvableNodes":null,"Error":)";
  json::AppendString(&out, error);
  out.push_back('}');
  return out;
}

std::string EncodeHostPriorities(std::span<const HostPriority> priorities) {
  std::string out;
  out.reserve(8 + 40 * priorities.size());
  out.push_back('[');
  for (size_t i = 0; i < priorities.size(); ++i) {
    if (i > 0) out.push_back(',');
    out.append(R"({"Host":)");
    json::AppendString(&out, priorities[i].host);
    fmt::format_to(std::back_inserter(out), R"(,"Score":{}}})", priorities[i].score);
  }
  out.push_back(']');
  return out;
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
  std::string out = R"({"Error":)";
  json::AppendString(&out, error);
  out.push_back('}');
  return out;
}

}  // namespace gpusched::extender
