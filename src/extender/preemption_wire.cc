#include "gpusched/extender/preemption_wire.h"

#include <fmt/format.h>
#include <rapidjson/document.h>

#include <algorithm>

#include "gpusched/json/json.h"
#include "gpusched/kubejson/objects.h"

namespace gpusched::extender {
namespace {

using rapidjson::Value;

// The UID of one offered victim: {"UID": "..."} (MetaPod) or a Pod object (metadata.uid).
Status ReadVictimUid(const Value& v, bool meta, const std::string& path, std::string* uid) {
  if (!v.IsObject()) return json::WrongType(path, "object", v);
  const Value* holder = &v;
  std::string where = path;
  if (!meta) {
    holder = json::Find(v, "metadata");
    where = path + ".metadata";
    if (holder == nullptr || !holder->IsObject()) return InvalidArgumentError(where + ": missing");
  }
  const Value* u = meta ? json::FindCaseInsensitive(*holder, "UID") : json::Find(*holder, "uid");
  std::string field = fmt::format("{}.{}", where, meta ? "UID" : "uid");
  if (u == nullptr) return InvalidArgumentError(field + ": missing");
  if (!u->IsString()) return json::WrongType(field, "string", *u);
  uid->assign(json::View(*u));
  if (uid->empty()) return InvalidArgumentError(field + ": empty");
  return OkStatus();
}

// One candidate: {"Pods": [...], "NumPDBViolations": n}; null stands for no victims.
Status ReadCandidate(const Value& v, bool meta, const std::string& path, PreemptionCandidate* out) {
  if (v.IsNull()) return OkStatus();
  if (!v.IsObject()) return json::WrongType(path, "object", v);
  if (const Value* pods = json::FindCaseInsensitive(v, "Pods"); pods != nullptr && !pods->IsNull()) {
    if (!pods->IsArray()) return json::WrongType(path + ".Pods", "array", *pods);
    for (rapidjson::SizeType i = 0; i < pods->Size(); ++i) {
      std::string uid;
      GPUSCHED_RETURN_IF_ERROR(ReadVictimUid((*pods)[i], meta, fmt::format("{}.Pods[{}]", path, i), &uid));
      out->victim_uids.push_back(std::move(uid));
    }
  }
  if (const Value* n = json::FindCaseInsensitive(v, "NumPDBViolations"); n != nullptr && !n->IsNull()) {
    if (!n->IsInt64() || n->GetInt64() < 0) {
      std::string text;
      json::AppendValue(&text, *n);
      return InvalidArgumentError(fmt::format("{}.NumPDBViolations: {} is not a count", path, text));
    }
    out->pdb_violations = n->GetInt64();
  }
  return OkStatus();
}

}  // namespace

StatusOr<PreemptionArgs> ParsePreemptionArgs(std::string_view body) {
  rapidjson::Document doc;
  GPUSCHED_RETURN_IF_ERROR(json::Parse(body, &doc));
  if (!doc.IsObject()) return json::WrongType("ExtenderPreemptionArgs", "object", doc);
  PreemptionArgs out;
  const Value* pod = json::FindCaseInsensitive(doc, "Pod");
  if (pod == nullptr || pod->IsNull()) return InvalidArgumentError("ExtenderPreemptionArgs.Pod: missing");
  GPUSCHED_ASSIGN_OR_RETURN(out.pod, kubejson::DecodePod(*pod, "ExtenderPreemptionArgs.Pod"));
  const Value* meta = json::FindCaseInsensitive(doc, "NodeNameToMetaVictims");
  const Value* full = json::FindCaseInsensitive(doc, "NodeNameToVictims");
  out.meta = meta != nullptr && !meta->IsNull();
  const Value* map = out.meta ? meta : full;
  if (map == nullptr || map->IsNull()) return out;
  std::string key = out.meta ? "NodeNameToMetaVictims" : "NodeNameToVictims";
  if (!map->IsObject()) return json::WrongType("ExtenderPreemptionArgs." + key, "object", *map);
  for (auto it = map->MemberBegin(); it != map->MemberEnd(); ++it) {
    PreemptionCandidate c{.node = std::string(json::View(it->name))};
    std::string path = fmt::format("ExtenderPreemptionArgs.{}[\"{}\"]", key, c.node);
    GPUSCHED_RETURN_IF_ERROR(ReadCandidate(it->value, out.meta, path, &c));
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
    out += fmt::format(R"(],"NumPDBViolations":{}}})", sorted[i]->pdb_violations);
  }
  out += "}}";
  return out;
}

}  // namespace gpusched::extender
