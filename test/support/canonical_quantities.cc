#include "canonical_quantities.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "gpusched/common/quantity.h"
#include "gpusched/json/json.h"

namespace gpusched::testing {
namespace {

using rapidjson::Value;

QuantityFormat FormatOf(std::string_view text) {
  if (text.ends_with("i")) return QuantityFormat::kBinarySI;
  size_t e = text.find_first_of("eE");
  // "1E" is Exa (DecimalSI); an exponent has digits after the e.
  if (e != std::string_view::npos && e + 1 < text.size()) return QuantityFormat::kDecimalExponent;
  return QuantityFormat::kDecimalSI;
}

// Canonicalizes every string value of the map member `key` of `obj`, if present.
void Map(Value* obj, std::string_view key, rapidjson::Document::AllocatorType& a) {
  if (obj == nullptr || !obj->IsObject()) return;
  auto it = obj->FindMember(Value(rapidjson::StringRef(key.data(), key.size())));
  if (it == obj->MemberEnd() || !it->value.IsObject()) return;
  for (auto m = it->value.MemberBegin(); m != it->value.MemberEnd(); ++m) {
    Value* v = &m->value;
    if (v->IsObject() && v->HasMember("value")) v = &(*v)["value"];  // DeviceCapacity / Counter
    if (!v->IsString()) continue;
    std::string canonical = CanonicalQuantity(json::View(*v));
    v->SetString(canonical.c_str(), static_cast<rapidjson::SizeType>(canonical.size()), a);
  }
}

Value* Member(Value* obj, const char* key) {
  if (obj == nullptr || !obj->IsObject() || !obj->HasMember(key)) return nullptr;
  return &(*obj)[key];
}

void Containers(Value* spec, const char* key, rapidjson::Document::AllocatorType& a) {
  Value* list = Member(spec, key);
  if (list == nullptr || !list->IsArray()) return;
  for (Value& c : list->GetArray()) {
    Value* resources = Member(&c, "resources");
    Map(resources, "limits", a);
    Map(resources, "requests", a);
  }
}

void Devices(Value* devices, rapidjson::Document::AllocatorType& a) {
  if (devices == nullptr || !devices->IsArray()) return;
  for (Value& d : devices->GetArray()) {
    Value* fields = Member(&d, "basic") != nullptr ? Member(&d, "basic") : &d;
    Map(fields, "capacity", a);
    Value* consumes = Member(fields, "consumesCounters");
    if (consumes != nullptr && consumes->IsArray()) {
      for (Value& c : consumes->GetArray()) Map(&c, "counters", a);
    }
  }
}

}  // namespace

std::string CanonicalQuantity(std::string_view text) {
  StatusOr<int64_t> milli = ParseQuantityMilli(text);
  if (!milli.ok()) return std::string(text);
  if (*milli % 1000 != 0) return std::to_string(*milli) + "m";  // "1.5" -> "1500m"
  return FormatQuantity(*milli / 1000, FormatOf(text));
}

void CanonicalizeObject(std::string_view kind, Value* object, rapidjson::Document::AllocatorType& a) {
  Value* spec = Member(object, "spec");
  if (kind == "Pod") {
    Containers(spec, "containers", a);
    Containers(spec, "initContainers", a);
    Map(spec, "overhead", a);
  } else if (kind == "Node") {
    Value* status = Member(object, "status");
    Map(status, "capacity", a);
    Map(status, "allocatable", a);
  } else if (kind == "ResourceSlice") {
    Devices(Member(spec, "devices"), a);
    Value* shared = Member(spec, "sharedCounters");
    if (shared != nullptr && shared->IsArray()) {
      for (Value& s : shared->GetArray()) Map(&s, "counters", a);
    }
  } else if (kind == "ResourceClaim") {
    Value* requests = Member(Member(spec, "devices"), "requests");
    if (requests == nullptr || !requests->IsArray()) return;
    for (Value& r : requests->GetArray()) {
      Value* exact = Member(&r, "exactly") != nullptr ? Member(&r, "exactly") : &r;
      Map(Member(exact, "capacity"), "requests", a);
    }
  }
}

std::string CanonicalizeList(std::string_view list_json) {
  rapidjson::Document d;
  d.Parse(list_json.data(), list_json.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("items") || !d["items"].IsArray()) return std::string(list_json);
  for (Value& item : d["items"].GetArray()) {
    if (!item.IsObject() || !item.HasMember("kind") || !item["kind"].IsString()) continue;
    CanonicalizeObject(json::View(item["kind"]), &item, d.GetAllocator());
  }
  rapidjson::StringBuffer sb;
  rapidjson::Writer<rapidjson::StringBuffer> w(sb);
  d.Accept(w);
  return std::string(sb.GetString(), sb.GetSize());
}

}  // namespace gpusched::testing
