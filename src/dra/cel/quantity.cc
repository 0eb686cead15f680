// File: quantity.cc
//
// The Kubernetes CEL Quantity library over common/quantity.h's parser: quantity() and isQuantity(),
// and the methods on quantities (compare, add and sub with overflow checks, asInteger, isInteger,
// asApproximateFloat, sign) on exact milli-units.
#include "gpusched/dra/cel/quantity.h"

#include <fmt/format.h>

#include <array>

#include "gpusched/common/quantity.h"

namespace gpusched::dra::cel {
namespace {

using T = Value::Type;

std::optional<Value> MakeQuantity(const CallArgs& c) {
  if (!c.Arity(1) || !c.Is(0, T::kString)) return std::nullopt;
  StatusOr<int64_t> q = ParseQuantityMilli(c.args[0].s);
  if (!q.ok()) return Value::Error(fmt::format("quantities must match the regular expression: {}", q.status().message()));
  return Value::Quantity(*q);
}

std::optional<Value> IsQuantity(const CallArgs& c) {
  if (!c.Arity(1) || !c.Is(0, T::kString)) return std::nullopt;
  return Value::Bool(ParseQuantityMilli(c.args[0].s).ok());
}

// -1, 0 or 1 for two quantities, or nullopt if the call is not on two quantities.
std::optional<int> OrderOf(const CallArgs& c) {
  if (!c.Arity(2) || !c.Is(0, T::kQuantity) || !c.Is(1, T::kQuantity)) return std::nullopt;
  return c.args[0].i < c.args[1].i ? -1 : c.args[0].i > c.args[1].i ? 1 : 0;
}

// q.add(x) / q.sub(x): x a quantity or an int (whole units).
std::optional<Value> AddOrSubtract(const CallArgs& c, bool add) {
  if (!c.Arity(2) || !c.Is(0, T::kQuantity) || !(c.Is(1, T::kQuantity) || c.Is(1, T::kInt))) return std::nullopt;
  int64_t other = c.args[1].i;
  if (c.Is(1, T::kInt) && __builtin_mul_overflow(c.args[1].i, int64_t{1000}, &other)) return Value::Error("quantity overflow");
  int64_t r = 0;
  bool overflow = add ? __builtin_add_overflow(c.args[0].i, other, &r) : __builtin_sub_overflow(c.args[0].i, other, &r);
  if (overflow) return Value::Error("quantity overflow");
  return Value::Quantity(r);
}

std::optional<Value> Add(const CallArgs& c) { return AddOrSubtract(c, true); }
std::optional<Value> Sub(const CallArgs& c) { return AddOrSubtract(c, false); }

bool OnOneQuantity(const CallArgs& c) { return c.Arity(1) && c.Is(0, T::kQuantity); }

std::optional<Value> AsInteger(const CallArgs& c) {
  if (!OnOneQuantity(c)) return std::nullopt;
  if (c.args[0].i % 1000 != 0) return Value::Error("cannot convert value to integer");
  return Value::Int(c.args[0].i / 1000);
}

std::optional<Value> IsInteger(const CallArgs& c) {
  if (!OnOneQuantity(c)) return std::nullopt;
  return Value::Bool(c.args[0].i % 1000 == 0);
}

std::optional<Value> AsApproximateFloat(const CallArgs& c) {
  if (!OnOneQuantity(c)) return std::nullopt;
  return Value::Double(static_cast<double>(c.args[0].i) / 1000.0);
}

std::optional<Value> Sign(const CallArgs& c) {
  if (!OnOneQuantity(c)) return std::nullopt;
  return Value::Int(c.args[0].i < 0 ? -1 : c.args[0].i > 0 ? 1 : 0);
}

constexpr std::array kQuantityFunctions = {
    NamedBuiltin{"quantity", MakeQuantity},   NamedBuiltin{"isQuantity", IsQuantity},
    NamedBuiltin{"compareTo", CompareTo<OrderOf>},     NamedBuiltin{"isGreaterThan", IsGreaterThan<OrderOf>},
    NamedBuiltin{"isLessThan", IsLessThan<OrderOf>},   NamedBuiltin{"add", Add},
    NamedBuiltin{"sub", Sub},                 NamedBuiltin{"asInteger", AsInteger},
    NamedBuiltin{"isInteger", IsInteger},     NamedBuiltin{"asApproximateFloat", AsApproximateFloat},
    NamedBuiltin{"sign", Sign},
};

}  // namespace

std::span<const NamedBuiltin> QuantityFunctions() { return kQuantityFunctions; }

}  // namespace gpusched::dra::cel
