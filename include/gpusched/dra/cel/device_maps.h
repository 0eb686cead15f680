// File: device_maps.h
//
// The device as a selector sees it: the variable `device` with fields driver, attributes,
// capacity and allowMultipleAllocations. `device.attributes` and `device.capacity` are maps of
// domain to maps of id; any domain is present (an unknown one is an empty map); inside a domain,
// the fully qualified key ("gpu.nvidia.com/index") wins over the bare key, which belongs to the
// driver's own domain. Attribute values become int, bool, string or Semver; capacities Quantity.
//
// Views, not copies: a DeviceMaps reads the device in place. REQUIRES: the device outlives it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpusched/dra/cel/value.h"
#include "gpusched/dra/types.h"

namespace gpusched::dra::cel {

// What an expression sees as `device`. REQUIRES: device outlives the evaluation.
struct DeviceView {
  std::string_view driver;
  const Device* device = nullptr;
};

class DeviceMaps {
 public:
  explicit DeviceMaps(const DeviceView& device) : device_(device) {}

  // The value of the variable `device`, and whether a value is it.
  static Value Root();
  static bool IsRoot(const Value& v);
  // True if the root has `field` (has(device.x)).
  static bool RootHas(std::string_view field);

  // base.field (base.?field with `optional`): the root's fields, or a map's entry. Errors as
  // values: "no such key: x", "undefined field 'x'", a type without fields.
  Value Field(const Value& base, const std::string& field, bool optional) const;
  // The entry `key` of `map` (literal or device map), or nullopt if it has none.
  std::optional<Value> Lookup(const Value& map, const Value& key) const;
  // The keys of a map, for comprehensions and size().
  ValueList Keys(const Value& map) const;

 private:
  const AttributeValue* FindAttribute(const std::string& domain, const std::string& id) const;
  const Capacity* FindCapacity(const std::string& domain, const std::string& id) const;

  const DeviceView& device_;
};

}  // namespace gpusched::dra::cel
