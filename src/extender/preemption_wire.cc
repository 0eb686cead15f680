#include "gpusched/extender/preemption_wire.h"

#include <fmt/format.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <iterator>

#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace {

using rapidjson::Value;

// Where a candidate sits in the request, for errors: formatted only when one is reported.
struct CandidatePath {
  std::string_view map;  // NodeNameToMetaVictims or NodeNameToVictims
  std::string_view node;
  std::string operator()(std::string_view field = "") const {
    return fmt::format("ExtenderPreemptionArgs.{}[\"{}\"]{}", map, node, field);
  }
};

// Where a victim sits in the request, for errors: formatted only when one is reported.
struct VictimPath {
  const CandidatePath& candidate;
  rapidjson::SizeType index;
  std::string operator()(std::string_view field) const { return candidate(fmt::format(".Pods[{}]{}", index, field)); }
};

// The UID of one offered victim: {"UID": "..."} (MetaPod) or a Pod object (metadata.uid, and
// spec.priority into `priority`).
Status ReadVictim(const Value& v, bool meta, const VictimPath& path, std::string_view* uid, std::optional<int32_t>* priority) {
  if (!v.IsObject()) return json::WrongType(path(""), "object", v);
  const Value* holder = &v;
  if (!meta) {
    holder = json::Find(v, "metadata");
    if (holder == nullptr || !holder->IsObject()) return InvalidArgumentError(path(".metadata") + ": missing");
  }
  const Value* u = meta ? json::FindCaseInsensitive(*holder, "UID") : json::Find(*holder, "uid");
  std::string_view field = meta ? ".UID" : ".metadata.uid";
  if (u == nullptr) return InvalidArgumentError(path(field) + ": missing");
  if (!u->IsString()) return json::WrongType(path(field), "string", *u);
  *uid = json::View(*u);
  if (uid->empty()) return InvalidArgumentError(path(field) + ": empty");
  if (meta) return OkStatus();
  const Value* spec = json::Find(v, "spec");
  if (spec == nullptr || !spec->IsObject()) return OkStatus();
  int32_t p = 0;
  if (const Value* given = json::Find(*spec, "priority"); given != nullptr && !given->IsNull()) {
    GPUSCHED_RETURN_IF_ERROR(kubejson::ReadPriority(*spec, path(".spec"), &p));
  }
  *priority = p;
  return OkStatus();
}

// One candidate: {"Pods": [...], "NumPDBViolations": n}; null stands for no victims.
Status ReadCandidate(const Value& v, bool meta, const CandidatePath& path, PreemptionCandidate* out) {
  if (v.IsNull()) return OkStatus();
  if (!v.IsObject()) return json::WrongType(path(), "object", v);
  if (const Value* pods = json::FindCaseInsensitive(v, "Pods"); pods != nullptr && !pods->IsNull()) {
    if (!pods->IsArray()) return json::WrongType(path(".Pods"), "array", *pods);
    out->victim_uids.reserve(pods->Size());
    if (!meta) out->victim_priorities.reserve(pods->Size());
    for (rapidjson::SizeType i = 0; i < pods->Size(); ++i) {
      std::string_view uid;
      std::optional<int32_t> priority;
      GPUSCHED_RETURN_IF_ERROR(ReadVictim((*pods)[i], meta, VictimPath{path, i}, &uid, &priority));
      out->victim_uids.push_back(uid);
      if (!meta) out->victim_priorities.push_back(priority);
    }
  }
  if (const Value* n = json::FindCaseInsensitive(v, "NumPDBViolations"); n != nullptr && !n->IsNull()) {
    if (!n->IsInt64() || n->GetInt64() < 0) {
      std::string text;
      json::AppendValue(&text, *n);
      return InvalidArgumentError(fmt::format("{}: {} is not a count", path(".NumPDBViolations"), text));
    }
    out->pdb_violations = n->GetInt64();
  }
  return OkStatus();
}

}  // namespace

StatusOr<PreemptionArgs> ParsePreemptionArgs(std::string body) {
  PreemptionArgs out{.body = std::make_unique<std::string>(std::move(body))};
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::ParseInsitu(out.body.get(), &doc));
  if (!doc.IsObject()) return json::WrongType("ExtenderPreemptionArgs", "object", doc);
  const Value* pod = json::FindCaseInsensitive(doc, "Pod");
  if (pod == nullptr || pod->IsNull()) return InvalidArgumentError("ExtenderPreemptionArgs.Pod: missing");
  GPUSCHED_ASSIGN_OR_RETURN(out.pod, kubejson::DecodePod(*pod, "ExtenderPreemptionArgs.Pod"));
  const Value* meta = json::FindCaseInsensitive(doc, "NodeNameToMetaVictims");
  const Value* full = json::FindCaseInsensitive(doc, "NodeNameToVictims");
  out.meta = meta != nullptr && !meta->IsNull();
  const Value* map = out.meta ? meta : full;
  if (map == nullptr || map->IsNull()) return out;
  std::string_view key = out.meta ? "NodeNameToMetaVictims" : "NodeNameToVictims";
  if (!map->IsObject()) return json::WrongType(fmt::format("ExtenderPreemptionArgs.{}", key), "object", *map);
  out.candidates.reserve(map->MemberCount());
  for (auto it = map->MemberBegin(); it != map->MemberEnd(); ++it) {
    PreemptionCandidate c{.node = std::string(json::View(it->name))};
    GPUSCHED_RETURN_IF_ERROR(ReadCandidate(it->value, out.meta, CandidatePath{key, c.node}, &c));
    out.candidates.push_back(std::move(c));
  }
  std::sort(out.candidates.begin(), out.candidates.end(),
            [](const PreemptionCandidate& a, const PreemptionCandidate& b) { return a.node < b.node; });
  return out;
}

std::string EncodePreemptionResult(std::span<const MetaVictims> nodes) {
  std::vector<const MetaVictims*> sorted;
  for (const MetaVictims& n : nodes) sorted.push_back(&n);
  std::sort(sorted.begin(), sorted.end(), [](const MetaVictims* a, const MetaVictims* b) { return a->node < b->node; });
  std::string out = R"({"NodeNameToMetaVictims":{)";
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) out.push_back(',');
    json::AppendString(&out, sorted[i]->node);
    out += R"(:{"Pods":[)";
    for (size_t k = 0; k < sorted[i]->uids.size(); ++k) {
      if (k > 0) out.push_back(',');
      out += R"({"UID":)";
      json::AppendString(&out, sorted[i]->uids[k]);
      out.push_back('}');
    }
    fmt::format_to(std::back_inserter(out), R"(],"NumPDBViolations":{}}})", sorted[i]->pdb_violations);
  }
  out += "}}";
  return out;
}

}  // namespace gpusched::extender
