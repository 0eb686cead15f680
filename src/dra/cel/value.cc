// File: value.cc
//
// CEL values and the rules every operator shares: constructors over shared storage (lists, maps,
// optionals, versions), CEL type names, numeric comparison across int/uint/double, cross-type
// equality (false) and the "no matching overload" error.
#include "gpusched/dra/cel/value.h"

#include <fmt/format.h>

#include <cmath>

#include "gpusched/dra/cel/semver.h"

namespace gpusched::dra::cel {

Value Value::List(ValueList v) {
  return Value{.type = Type::kList, .list = std::make_shared<const ValueList>(std::move(v))};
}

Value Value::LiteralMap(ValueList keys_and_values) {
  return Value{.type = Type::kMap, .list = std::make_shared<const ValueList>(std::move(keys_and_values))};
}

Value Value::DeviceMap(MapKind kind, std::string domain) {
  return Value{.type = Type::kMap, .s = std::move(domain), .map_kind = kind};
}

Value Value::Optional(std::optional<Value> v) {
  ValueList inner;
  if (v) inner.push_back(std::move(*v));
  return Value{.type = Type::kOptional, .list = std::make_shared<const ValueList>(std::move(inner))};
}

Value Value::SemverValue(Semver v) {
  return Value{.type = Type::kSemver, .semver = std::make_shared<const Semver>(std::move(v))};
}

std::string_view TypeName(const Value& v) {
  switch (v.type) {
    case Value::Type::kNull: return "null_type";
    case Value::Type::kBool: return "bool";
    case Value::Type::kInt: return "int";
    case Value::Type::kUint: return "uint";
    case Value::Type::kDouble: return "double";
    case Value::Type::kString: return "string";
    case Value::Type::kList: return "list";
    case Value::Type::kMap: return "map";
    case Value::Type::kQuantity: return "kubernetes.Quantity";
    case Value::Type::kSemver: return "kubernetes.Semver";
    case Value::Type::kOptional: return "optional_type";
    case Value::Type::kError: return "error";
  }
  return "unknown";
}

bool IsNumber(const Value& v) {
  return v.type == Value::Type::kInt || v.type == Value::Type::kUint || v.type == Value::Type::kDouble;
}

int CompareNumbers(const Value& a, const Value& b) {
  using T = Value::Type;
  if (a.type == T::kDouble || b.type == T::kDouble) {
    double x = a.type == T::kDouble ? a.d : a.type == T::kInt ? static_cast<double>(a.i) : static_cast<double>(a.u);
    double y = b.type == T::kDouble ? b.d : b.type == T::kInt ? static_cast<double>(b.i) : static_cast<double>(b.u);
    if (std::isnan(x) || std::isnan(y)) return 2;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.type == T::kInt && b.type == T::kInt) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  if (a.type == T::kUint && b.type == T::kUint) return a.u < b.u ? -1 : a.u > b.u ? 1 : 0;
  if (a.type == T::kInt) return a.i < 0 ? -1 : CompareNumbers(Value::Uint(static_cast<uint64_t>(a.i)), b);
  return b.i < 0 ? 1 : CompareNumbers(a, Value::Uint(static_cast<uint64_t>(b.i)));
}

bool Equal(const Value& a, const Value& b) {
  using T = Value::Type;
  if (IsNumber(a) && IsNumber(b)) return CompareNumbers(a, b) == 0;
  if (a.type != b.type) return false;
  switch (a.type) {
    case T::kNull: return true;
    case T::kBool: return a.b == b.b;
    case T::kString: return a.s == b.s;
    case T::kQuantity: return a.i == b.i;
    case T::kSemver: return a.semver->Compare(*b.semver) == 0;
    case T::kList:
    case T::kOptional: {
      if (a.list->size() != b.list->size()) return false;
      for (size_t i = 0; i < a.list->size(); ++i) {
        if (!Equal((*a.list)[i], (*b.list)[i])) return false;
      }
      return true;
    }
    case T::kMap: return a.map_kind == b.map_kind && a.s == b.s && a.list == b.list;
    default: return false;
  }
}

Value NoOverload(std::string_view fn, std::span<const Value> args) {
  std::vector<std::string_view> types;
  for (const Value& a : args) types.push_back(TypeName(a));
  return Value::Error(fmt::format("no matching overload for '{}' applied to '({})'", fn, fmt::join(types, ", ")));
}

Value NoOverload(std::string_view fn, std::initializer_list<Value> args) {
  return NoOverload(fn, std::span<const Value>(args.begin(), args.size()));
}

}  // namespace gpusched::dra::cel
