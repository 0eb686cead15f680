// File: value.h
//
// A CEL value as the evaluator passes it around, and the rules every operator shares: type
// names as CEL prints them, numeric comparison across int/uint/double, equality (across types:
// false, never an error) and the "no matching overload" error.
//
// Values are cheap to copy: lists, maps and versions are shared immutable storage.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched::dra::cel {

struct Semver;
struct Value;
using ValueList = std::vector<Value>;

// Maps are either literals (list holds k0, v0, k1, v1...) or views of the device being judged
// (its attribute or capacity domains, or one domain's entries: see device_maps.h).
struct Value {
  enum class Type { kNull, kBool, kInt, kUint, kDouble, kString, kList, kMap, kQuantity, kSemver, kOptional, kError };
  enum class MapKind { kLiteral, kAttributeDomains, kCapacityDomains, kAttributes, kCapacities };
  Type type = Type::kNull;
  bool b = false;
  int64_t i = 0;  // kInt; kQuantity in milli-units
  uint64_t u = 0;
  double d = 0;
  std::string s;                          // kString, kError message, domain of a device map
  std::shared_ptr<const ValueList> list;  // kList; kMap literal; kOptional: 0 or 1 element
  MapKind map_kind = MapKind::kLiteral;
  std::shared_ptr<const Semver> semver;  // kSemver

  static Value Bool(bool v) { return Value{.type = Type::kBool, .b = v}; }
  static Value Int(int64_t v) { return Value{.type = Type::kInt, .i = v}; }
  static Value Uint(uint64_t v) { return Value{.type = Type::kUint, .u = v}; }
  static Value Double(double v) { return Value{.type = Type::kDouble, .d = v}; }
  static Value String(std::string v) { return Value{.type = Type::kString, .s = std::move(v)}; }
  static Value Quantity(int64_t milli) { return Value{.type = Type::kQuantity, .i = milli}; }
  static Value Error(std::string message) { return Value{.type = Type::kError, .s = std::move(message)}; }
  static Value List(ValueList v);
  static Value LiteralMap(ValueList keys_and_values);
  static Value DeviceMap(MapKind kind, std::string domain = {});
  static Value Optional(std::optional<Value> v);
  static Value SemverValue(Semver v);
  bool error() const { return type == Type::kError; }
  bool is(Type t) const { return type == t; }
};

// CEL's name for v's type ("int", "kubernetes.Quantity", ...).
std::string_view TypeName(const Value& v);

bool IsNumber(const Value& v);

// Compares two numbers of any numeric types exactly. Returns -1, 0, 1 (2 if either is NaN).
// REQUIRES: IsNumber(a) && IsNumber(b).
int CompareNumbers(const Value& a, const Value& b);

// CEL equality: numbers compare by value across types; other types must match; literal maps are
// equal only to themselves.
bool Equal(const Value& a, const Value& b);

// The runtime error for `fn` applied to arguments of these types.
Value NoOverload(std::string_view fn, std::span<const Value> args);
Value NoOverload(std::string_view fn, std::initializer_list<Value> args);

}  // namespace gpusched::dra::cel
