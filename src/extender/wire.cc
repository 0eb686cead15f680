// File: wire.cc
//
// kube-scheduler's extender messages on the wire: a fast path that parses only the Pod and takes a
// remembered NodeNames list as is, a full parse otherwise, binding args, and replies written
// through json::Writer with remembered names copied unescaped.
#include "gpusched/extender/wire.h"

#include <fmt/format.h>
#include <strings.h>

#include <algorithm>

#include "gpusched/json/json.h"
#include "gpusched/json/writer.h"

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
// Replies are written straight into one string (json::Writer): the hot replies are mostly node
// names, which need no escaping and are copied in one go.
// Node names of a remembered list were checked when it was remembered (node_names_memo.h).
void Name(json::Writer& w, const ExtenderArgs& args, size_t pos) {
  if (args.remembered != nullptr) {
    w.CheckedString(args.node_names[pos]);
  } else {
    w.String(args.node_names[pos]);
  }
}

// The key of node `pos`: a remembered list's names were not checked when it was read.
json::Writer& NodeKey(json::Writer& w, const ExtenderArgs& args, size_t pos) {
  return args.remembered != nullptr ? w.CheckedKey(args.node_names[pos]) : w.Key(args.node_names[pos]);
}

// The map `key` of `entries`, and of every position `others` marks, with reason `other`.
// `reason` as a JSON string: escaped once, for writing beside many nodes.
std::string Quoted(std::string_view reason) {
  json::Writer quoted;
  quoted.String(reason);
  return quoted.Take();
}

void FailedMap(json::Writer& w, std::string_view key, const ExtenderArgs& args,
               const std::vector<std::pair<size_t, std::string>>& entries, const std::vector<bool>& others = {},
               std::string_view other = "",
               const std::vector<std::pair<std::string, std::vector<size_t>>>& shared = {}) {
  w.Key(key).StartObject();
  for (const auto& [pos, reason] : entries) NodeKey(w, args, pos).String(reason);
  for (const auto& [reason, positions] : shared) {
    std::string text = Quoted(reason);
    for (size_t pos : positions) NodeKey(w, args, pos).Raw(text);
  }
  if (std::find(others.begin(), others.end(), true) != others.end()) {
    std::string text = Quoted(other);
    for (size_t pos = 0; pos < others.size(); ++pos) {
      if (others[pos]) NodeKey(w, args, pos).Raw(text);
    }
  }
  w.EndObject();
}

// The positions FilterResult::others_failed fails: none listed, none kept.
std::vector<bool> OtherPositions(const ExtenderArgs& args, const FilterResult& result) {
  if (result.others_failed.empty()) return {};
  std::vector<bool> others(args.node_names.size(), true);
  for (size_t pos : result.kept) others[pos] = false;
  for (const auto& [pos, reason] : result.failed) others[pos] = false;
  for (const auto& [pos, reason] : result.unresolvable) others[pos] = false;
  for (const auto& [reason, positions] : result.failed_shared) {
    for (size_t pos : positions) others[pos] = false;
  }
  return others;
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
  json::Writer w(128 + 24 * args.node_names.size());
  w.StartObject();
  if (args.with_nodes) {
    w.Key("Nodes").StartObject().Key("metadata").StartObject().EndObject().Key("items").StartArray();
    for (size_t pos : result.kept) w.Value(*args.body->node_items[pos]);
    w.EndArray().EndObject().Key("NodeNames").Null();
  } else if (args.remembered != nullptr && result.kept.size() == args.node_names.size()) {
    // Every node kept (kept is in request order), and the list is a remembered one: its text.
    w.Key("Nodes").Null().Key("NodeNames").Raw(args.remembered->json);
  } else {
    w.Key("Nodes").Null().Key("NodeNames").StartArray();
    for (size_t pos : result.kept) Name(w, args, pos);
    w.EndArray();
  }
  std::vector<bool> others = OtherPositions(args, result);
  std::vector<bool> none;
  FailedMap(w, "FailedNodes", args, result.failed, result.others_unresolvable ? none : others, result.others_failed,
            result.failed_shared);
  FailedMap(w, "FailedAndUnresolvableNodes", args, result.unresolvable, result.others_unresolvable ? others : none,
            result.others_failed);
  w.Member("Error", "").EndObject();
  return w.Take();
}

std::string EncodeFilterError(std::string_view error) {
  json::Writer w;
  w.StartObject().Key("Nodes").Null().Key("NodeNames").Null().Key("FailedNodes").Null();
  w.Key("FailedAndUnresolvableNodes").Null().Member("Error", error).EndObject();
  return w.Take();
}

std::string EncodeHostPriorities(std::span<const HostPriority> priorities) {
  json::Writer w(8 + 40 * priorities.size());
  w.StartArray();
  for (const HostPriority& p : priorities) w.StartObject().Member("Host", p.host).Member("Score", p.score).EndObject();
  w.EndArray();
  return w.Take();
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
  json::Writer w;
  w.StartObject().Member("Error", error).EndObject();
  return w.Take();
}

}  // namespace gpusched::extender
