// File: preemption_wire.cc
//
// The preempt verb's wire format: ExtenderPreemptionArgs read as Pods or MetaPods per candidate,
// from a DOM or streamed from the parser without one (NodeNameToMetaVictims is the bulk), the
// preemptor peeked first; the answer written in node order.
#include "gpusched/extender/preemption_wire.h"

#include <fmt/format.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <iterator>

#include "gpusched/json/json.h"
#include "gpusched/json/writer.h"
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
    if (n->IsObject() || n->IsArray()) return json::WrongType(path(".NumPDBViolations"), "number", *n);
    if (!n->IsInt64() || n->GetInt64() < 0) {
      std::string text;
      json::AppendValue(&text, *n);
      return InvalidArgumentError(fmt::format("{}: {} is not a count", path(".NumPDBViolations"), text));
    }
    out->pdb_violations = n->GetInt64();
  }
  return OkStatus();
}

// Reads NodeNameToMetaVictims as the parser streams it (json::ValueEvents), without a DOM: the
// map is the bulk of a preempt request (hundreds of candidates of ten victims each). Reads what
// ReadCandidate reads from a DOM, with the same errors: keys matched case-insensitively, the
// first occurrence of a field counted and later ones ignored (as FindCaseInsensitive), unknown
// fields skipped. It never stops the parse; status() is its first error, reported once the rest
// of the body has parsed (a syntax error or a missing Pod comes first, as from a DOM).
class MetaVictimsReader : public json::ValueEvents {
 public:
  // Appends the candidates to *candidates, and tells `listener` (null: none) of each read
  // without error.
  MetaVictimsReader(std::deque<PreemptionCandidate>* candidates, CandidateListener* listener)
      : candidates_(*candidates), listener_(listener) {}

  bool StartObject() override { return !status_.ok() || Container(true); }
  bool StartArray() override { return !status_.ok() || Container(false); }
  bool EndObject() override { return !status_.ok() || End(); }
  bool EndArray() override { return !status_.ok() || End(); }
  bool Key(std::string_view key) override {
    if (skipping_ > 0 || !status_.ok()) return true;
    switch (at_) {
      case At::kMap:
        candidates_.push_back(PreemptionCandidate{.node = std::string(key)});
        candidates_.back().victim_uids.reserve(kVictimsReserved);
        at_ = At::kCandidateValue;
        return true;
      case At::kCandidate:
        next_ = Field(key, "Pods", &seen_pods_) ? Next::kPods : Field(key, "NumPDBViolations", &seen_count_) ? Next::kCount : Next::kSkip;
        return true;
      case At::kVictim:
        next_ = Field(key, "UID", &seen_uid_) ? Next::kUid : Next::kSkip;
        return true;
      default:
        return true;  // keys arrive only where an object is open
    }
  }
  bool String(std::string_view s) override {
    rapidjson::Value v(rapidjson::StringRef(s.data(), static_cast<rapidjson::SizeType>(s.size())));
    return Scalar(v);
  }
  bool Scalar(const rapidjson::Value& v) override {
    if (skipping_ > 0 || !status_.ok()) return true;
    switch (at_) {
      case At::kCandidateValue:  // a placeholder (null) or not an object
        at_ = At::kMap;
        if (!v.IsNull()) return Fail(json::WrongType(Path()(), "object", v));
        return Told();
      case At::kCandidate:
        return Value(v);
      case At::kPods:
        return Fail(json::WrongType(VictimPath{Path(), Index()}(""), "object", v));
      case At::kVictim:
        if (next_ != Next::kUid) return true;
        if (v.IsNull()) return true;  // as absent: reported at the end of the victim
        if (!v.IsString()) return Fail(json::WrongType(VictimPath{Path(), Index()}(".UID"), "string", v));
        if (v.GetStringLength() == 0) return Fail(InvalidArgumentError(VictimPath{Path(), Index()}(".UID") + ": empty"));
        uid_ = json::View(v);
        return true;
      default:
        return true;
    }
  }
  Status status() const override { return status_; }

 private:
  enum class At { kOutside, kMap, kCandidateValue, kCandidate, kPods, kVictim };
  static constexpr size_t kVictimsReserved = 16;  // one allocation for a candidate's victims, mostly
  enum class Next { kSkip, kPods, kCount, kUid };

  // True if `key` names `field` and it is the field's first occurrence in this object.
  static bool Field(std::string_view key, std::string_view field, bool* seen) {
    if (*seen || !json::EqualsFoldingCase(key, field)) return false;
    return *seen = true;
  }
  // An empty object or array, to name the shape of a container that came where another was due.
  static rapidjson::Value Shape(bool object) { return rapidjson::Value(object ? rapidjson::kObjectType : rapidjson::kArrayType); }
  CandidatePath Path() const { return CandidatePath{"NodeNameToMetaVictims", candidates_.back().node}; }
  rapidjson::SizeType Index() const { return static_cast<rapidjson::SizeType>(candidates_.back().victim_uids.size()); }
  // Keeps the first error and ignores the rest of the map; the parse goes on, so that a syntax
  // error further on is reported first, as the DOM reading would.
  bool Fail(Status s) {
    status_ = std::move(s);
    return true;
  }

  // The last candidate is read: the listener is told, unless an error came first.
  bool Told() {
    if (listener_ != nullptr && status_.ok()) listener_->Read(candidates_.back());
    return true;
  }

  // A scalar member of a candidate object.
  bool Value(const rapidjson::Value& v) {
    if (next_ == Next::kPods) return v.IsNull() || Fail(json::WrongType(Path()(".Pods"), "array", v));
    if (next_ != Next::kCount || v.IsNull()) return true;
    if (!v.IsInt64() || v.GetInt64() < 0) {
      std::string text;
      json::AppendValue(&text, v);
      return Fail(InvalidArgumentError(fmt::format("{}: {} is not a count", Path()(".NumPDBViolations"), text)));
    }
    candidates_.back().pdb_violations = v.GetInt64();
    return true;
  }

  bool Container(bool object) {
    if (skipping_ > 0) return ++skipping_, true;
    switch (at_) {
      case At::kOutside:
        at_ = At::kMap;
        return true;
      case At::kCandidateValue:
        if (!object) return Fail(json::WrongType(Path()(), "object", Shape(object)));
        at_ = At::kCandidate;
        seen_pods_ = seen_count_ = false;
        next_ = Next::kSkip;
        return true;
      case At::kCandidate:
        if (next_ == Next::kPods && !object) return at_ = At::kPods, true;
        if (next_ == Next::kPods) return Fail(json::WrongType(Path()(".Pods"), "array", Shape(object)));
        if (next_ == Next::kCount) return Fail(json::WrongType(Path()(".NumPDBViolations"), "number", Shape(object)));
        return ++skipping_, true;
      case At::kPods:
        if (!object) return Fail(json::WrongType(VictimPath{Path(), Index()}(""), "object", Shape(object)));
        at_ = At::kVictim;
        seen_uid_ = false;
        uid_ = {};
        next_ = Next::kSkip;
        return true;
      case At::kVictim:
        if (next_ == Next::kUid) return Fail(json::WrongType(VictimPath{Path(), Index()}(".UID"), "string", Shape(object)));
        return ++skipping_, true;
      case At::kMap:
        return true;  // not reached: a map's values are read in kCandidateValue
    }
    return true;
  }

  bool End() {
    if (skipping_ > 0) return --skipping_, true;
    switch (at_) {
      case At::kVictim:
        if (uid_.empty()) return Fail(InvalidArgumentError(VictimPath{Path(), Index()}(".UID") + ": missing"));
        candidates_.back().victim_uids.push_back(uid_);
        at_ = At::kPods;
        return true;
      case At::kPods:
        at_ = At::kCandidate;
        return true;
      case At::kCandidate:
        at_ = At::kMap;
        return Told();
      default:
        at_ = At::kOutside;
        return true;
    }
  }

  std::deque<PreemptionCandidate>& candidates_;
  CandidateListener* const listener_;
  At at_ = At::kOutside;
  Next next_ = Next::kSkip;
  int skipping_ = 0;  // containers open inside a skipped value
  bool seen_pods_ = false, seen_count_ = false, seen_uid_ = false;
  std::string_view uid_;
  Status status_;
};

// ParsePreemptionArgs into *out, whose body is set.
Status ParseInto(PreemptionArgs* out, PreemptionRead mode, CandidateListener* listener) {
  rapidjson::Document doc;
  MetaVictimsReader streamed(&out->candidates, listener);
  bool diverted = false;
  if (mode == PreemptionRead::kStreamed) {
    GPUSCHED_RETURN_IF_ERROR(json::ParseInsituDiverting(out->body.get(), "NodeNameToMetaVictims", &streamed, &doc, &diverted));
  } else {
    GPUSCHED_RETURN_IF_ERROR(json::ParseInsitu(out->body.get(), &doc));
  }
  if (!doc.IsObject()) return json::WrongType("ExtenderPreemptionArgs", "object", doc);
  const Value* pod = json::FindCaseInsensitive(doc, "Pod");
  if (pod == nullptr || pod->IsNull()) return InvalidArgumentError("ExtenderPreemptionArgs.Pod: missing");
  GPUSCHED_ASSIGN_OR_RETURN(out->pod, kubejson::DecodePod(*pod, "ExtenderPreemptionArgs.Pod"));
  const Value* meta = json::FindCaseInsensitive(doc, "NodeNameToMetaVictims");
  const Value* full = json::FindCaseInsensitive(doc, "NodeNameToVictims");
  out->meta = meta != nullptr && !meta->IsNull();
  if (diverted) {
    GPUSCHED_RETURN_IF_ERROR(streamed.status());
    return OkStatus();
  }
  const Value* map = out->meta ? meta : full;
  if (map == nullptr || map->IsNull()) return OkStatus();
  std::string_view key = out->meta ? "NodeNameToMetaVictims" : "NodeNameToVictims";
  if (!map->IsObject()) return json::WrongType(fmt::format("ExtenderPreemptionArgs.{}", key), "object", *map);
  for (auto it = map->MemberBegin(); it != map->MemberEnd(); ++it) {
    PreemptionCandidate c{.node = std::string(json::View(it->name))};
    GPUSCHED_RETURN_IF_ERROR(ReadCandidate(it->value, out->meta, CandidatePath{key, c.node}, &c));
    out->candidates.push_back(std::move(c));
    if (listener != nullptr) listener->Read(out->candidates.back());
  }
  return OkStatus();
}

}  // namespace

StatusOr<PreemptionArgs> ParsePreemptionArgs(std::string body, PreemptionRead mode, CandidateListener* listener) {
  PreemptionArgs out{.body = std::make_unique<std::string>(std::move(body))};
  if (Status s = ParseInto(&out, mode, listener); !s.ok()) {
    if (listener != nullptr) listener->Abandon();  // before the candidates go
    return s;
  }
  return out;
}

std::optional<Pod> PeekPreemptor(const std::string& body) {
  // {"Pod": — the key without escapes (kube-scheduler writes none), then the value.
  auto skip_space = [&](size_t i) { return body.find_first_not_of(" \t\r\n", i); };
  size_t i = skip_space(0);
  if (i == std::string::npos || body[i] != '{') return std::nullopt;
  i = skip_space(i + 1);
  if (i == std::string::npos || body[i] != '"') return std::nullopt;
  size_t close = body.find_first_of("\"\\", i + 1);
  if (close == std::string::npos || body[close] != '"') return std::nullopt;
  if (!json::EqualsFoldingCase(std::string_view(body).substr(i + 1, close - i - 1), "Pod")) return std::nullopt;
  i = skip_space(close + 1);
  if (i == std::string::npos || body[i] != ':') return std::nullopt;
  i = skip_space(i + 1);
  if (i == std::string::npos) return std::nullopt;
  rapidjson::Document doc;
  size_t consumed = 0;
  if (!json::ParsePrefix(std::string_view(body).substr(i), &doc, &consumed).ok() || doc.IsNull()) return std::nullopt;
  StatusOr<Pod> pod = kubejson::DecodePod(doc, "ExtenderPreemptionArgs.Pod");
  if (!pod.ok()) return std::nullopt;
  return std::move(*pod);
}

std::string EncodePreemptionResult(std::span<const MetaVictims> nodes) {
  std::vector<const MetaVictims*> sorted;
  sorted.reserve(nodes.size());
  for (const MetaVictims& n : nodes) sorted.push_back(&n);
  auto by_node = [](const MetaVictims* a, const MetaVictims* b) { return a->node < b->node; };
  if (!std::is_sorted(sorted.begin(), sorted.end(), by_node)) std::sort(sorted.begin(), sorted.end(), by_node);  // preempt's are
  json::Writer w(32 + 64 * nodes.size());
  w.StartObject().Key("NodeNameToMetaVictims").StartObject();
  for (const MetaVictims* n : sorted) {
    w.Key(n->node).StartObject().Key("Pods").StartArray();
    for (std::string_view uid : n->uids) w.StartObject().Member("UID", uid).EndObject();
    w.EndArray().Member("NumPDBViolations", n->pdb_violations).EndObject();
  }
  w.EndObject().EndObject();
  return w.Take();
}

}  // namespace gpusched::extender
