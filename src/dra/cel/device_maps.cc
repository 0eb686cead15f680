// File: device_maps.cc
//
// The `device` variable as CEL sees it: attribute values converted to CEL values (versions to
// Semver), lookups by qualified key then by bare key in the driver's domain, and keys listed for
// size, `in` and comprehensions; all read in place.
#include "gpusched/dra/cel/device_maps.h"

#include <fmt/format.h>

#include <set>

#include "gpusched/dra/cel/semver.h"

namespace gpusched::dra::cel {
namespace {

constexpr std::string_view kRootTag = "\x01" "device";  // no literal map can carry it: their s is empty

Value FromAttribute(const AttributeValue& a) {
  switch (a.kind) {
    case AttributeValue::Kind::kInt: return Value::Int(a.int_value);
    case AttributeValue::Kind::kBool: return Value::Bool(a.bool_value);
    case AttributeValue::Kind::kString: return Value::String(a.text);
    case AttributeValue::Kind::kVersion: {
      StatusOr<Semver> v = ParseSemver(a.text);
      if (!v.ok()) return Value::Error("unsupported attribute value");
      return Value::SemverValue(std::move(v).value());
    }
    case AttributeValue::Kind::kUnsupported: break;
  }
  return Value::Error("unsupported attribute value");
}

// Looks `domain`/`id` up in `entries` (attributes or capacities): the qualified key, then the
// bare key in the driver's domain.
template <typename Map>
const typename Map::mapped_type* FindQualified(const Map& entries, std::string_view driver, const std::string& domain,
                                               const std::string& id) {
  if (auto it = entries.find(domain + "/" + id); it != entries.end()) return &it->second;
  if (domain == driver) {
    if (auto it = entries.find(id); it != entries.end()) return &it->second;
  }
  return nullptr;
}

// The domains of `entries` (domain_only), or the ids inside `domain`, each once.
template <typename Map>
void AddKeys(const Map& entries, std::string_view driver, bool domains_only, const std::string& domain, ValueList* out) {
  std::set<std::string> seen;
  for (const auto& [key, unused] : entries) {
    size_t slash = key.find('/');
    std::string key_domain = slash == std::string::npos ? std::string(driver) : key.substr(0, slash);
    std::string id = slash == std::string::npos ? key : key.substr(slash + 1);
    if (domains_only) {
      if (seen.insert(key_domain).second) out->push_back(Value::String(key_domain));
    } else if (key_domain == domain && seen.insert(id).second) {
      out->push_back(Value::String(id));
    }
  }
}

}  // namespace

Value DeviceMaps::Root() {
  Value v;
  v.type = Value::Type::kMap;
  v.map_kind = Value::MapKind::kLiteral;
  v.s = std::string(kRootTag);  // fields resolve in Field
  return v;
}

bool DeviceMaps::IsRoot(const Value& v) { return v.type == Value::Type::kMap && v.s == kRootTag && !v.list; }

bool DeviceMaps::RootHas(std::string_view field) {
  return field == "driver" || field == "attributes" || field == "capacity" || field == "allowMultipleAllocations";
}

const AttributeValue* DeviceMaps::FindAttribute(const std::string& domain, const std::string& id) const {
  return FindQualified(device_.device->attributes, device_.driver, domain, id);
}

const Capacity* DeviceMaps::FindCapacity(const std::string& domain, const std::string& id) const {
  return FindQualified(device_.device->capacity, device_.driver, domain, id);
}

std::optional<Value> DeviceMaps::Lookup(const Value& map, const Value& key) const {
  using K = Value::MapKind;
  if (IsRoot(map)) return std::nullopt;
  if (map.map_kind == K::kLiteral) {
    const ValueList& kv = *map.list;
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      if (Equal(kv[i], key)) return kv[i + 1];
    }
    return std::nullopt;
  }
  if (key.type != Value::Type::kString) return std::nullopt;
  switch (map.map_kind) {
    case K::kAttributeDomains: return Value::DeviceMap(K::kAttributes, key.s);  // any domain: a (maybe empty) map
    case K::kCapacityDomains: return Value::DeviceMap(K::kCapacities, key.s);
    case K::kAttributes:
      if (const AttributeValue* a = FindAttribute(map.s, key.s)) return FromAttribute(*a);
      return std::nullopt;
    case K::kCapacities:
      if (const Capacity* c = FindCapacity(map.s, key.s)) return Value::Quantity(c->value_milli);
      return std::nullopt;
    case K::kLiteral: break;
  }
  return std::nullopt;
}

ValueList DeviceMaps::Keys(const Value& map) const {
  using K = Value::MapKind;
  ValueList out;
  switch (map.map_kind) {
    case K::kAttributeDomains: AddKeys(device_.device->attributes, device_.driver, true, map.s, &out); break;
    case K::kCapacityDomains: AddKeys(device_.device->capacity, device_.driver, true, map.s, &out); break;
    case K::kAttributes: AddKeys(device_.device->attributes, device_.driver, false, map.s, &out); break;
    case K::kCapacities: AddKeys(device_.device->capacity, device_.driver, false, map.s, &out); break;
    case K::kLiteral:
      if (map.list) {
        for (size_t i = 0; i < map.list->size(); i += 2) out.push_back((*map.list)[i]);
      }
      break;
  }
  return out;
}

Value DeviceMaps::Field(const Value& base, const std::string& field, bool optional) const {
  if (IsRoot(base)) {
    if (field == "driver") return Value::String(std::string(device_.driver));
    if (field == "attributes") return Value::DeviceMap(Value::MapKind::kAttributeDomains);
    if (field == "capacity") return Value::DeviceMap(Value::MapKind::kCapacityDomains);
    if (field == "allowMultipleAllocations") return Value::Bool(device_.device->allow_multiple_allocations);
    return Value::Error(fmt::format("undefined field '{}'", field));
  }
  if (base.type != Value::Type::kMap) return Value::Error(fmt::format("type '{}' does not support field selection", TypeName(base)));
  std::optional<Value> v = Lookup(base, Value::String(field));
  if (optional) return Value::Optional(std::move(v));
  if (!v) return Value::Error(fmt::format("no such key: {}", field));
  return *v;
}

}  // namespace gpusched::dra::cel
