// File: standard.cc
//
// CEL's standard functions that device selectors use: size, the type conversions, optionals,
// includes and join.
#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <string>

#include "gpusched/dra/cel/builtins.h"
#include "gpusched/dra/cel/device_maps.h"

namespace gpusched::dra::cel {
namespace {

using T = Value::Type;

std::optional<Value> Size(const CallArgs& c) {
  if (!c.Arity(1)) return std::nullopt;
  const Value& x = c.args[0];
  if (x.is(T::kString)) {
    int64_t chars = 0;  // code points
    for (unsigned char ch : x.s) chars += (ch & 0xC0) != 0x80;
    return Value::Int(chars);
  }
  if (x.is(T::kList)) return Value::Int(static_cast<int64_t>(x.list->size()));
  if (x.is(T::kMap) && !DeviceMaps::IsRoot(x)) return Value::Int(static_cast<int64_t>(c.maps->Keys(x).size()));
  return std::nullopt;
}

// The conversions are global functions of one argument: string(x), int(x), ...
const Value* Converted(const CallArgs& c) { return !c.has_target && c.Arity(1) ? &c.args[0] : nullptr; }

std::optional<Value> ToString(const CallArgs& c) {
  const Value* x = Converted(c);
  if (x == nullptr) return std::nullopt;
  switch (x->type) {
    case T::kString: return *x;
    case T::kInt: return Value::String(std::to_string(x->i));
    case T::kUint: return Value::String(std::to_string(x->u));
    case T::kDouble: return Value::String(fmt::format("{}", x->d));
    case T::kBool: return Value::String(x->b ? "true" : "false");
    default: return std::nullopt;
  }
}

std::optional<Value> ToInt(const CallArgs& c) {
  const Value* x = Converted(c);
  if (x == nullptr) return std::nullopt;
  switch (x->type) {
    case T::kInt: return *x;
    case T::kUint:
      if (x->u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Value::Error("integer overflow");
      return Value::Int(static_cast<int64_t>(x->u));
    case T::kDouble:
      if (!(x->d > -9.2233720368547758e18 && x->d < 9.2233720368547758e18)) return Value::Error("integer overflow");
      return Value::Int(static_cast<int64_t>(x->d));
    case T::kString: {
      int64_t v = 0;
      auto r = std::from_chars(x->s.data(), x->s.data() + x->s.size(), v);
      if (r.ec != std::errc() || r.ptr != x->s.data() + x->s.size()) return Value::Error(fmt::format("cannot convert '{}' to int", x->s));
      return Value::Int(v);
    }
    default: return std::nullopt;
  }
}

std::optional<Value> ToUint(const CallArgs& c) {
  const Value* x = Converted(c);
  if (x == nullptr) return std::nullopt;
  if (x->is(T::kUint)) return *x;
  if (!x->is(T::kInt)) return std::nullopt;
  if (x->i < 0) return Value::Error("unsigned integer overflow");
  return Value::Uint(static_cast<uint64_t>(x->i));
}

std::optional<Value> ToDouble(const CallArgs& c) {
  const Value* x = Converted(c);
  if (x == nullptr) return std::nullopt;
  switch (x->type) {
    case T::kDouble: return *x;
    case T::kInt: return Value::Double(static_cast<double>(x->i));
    case T::kUint: return Value::Double(static_cast<double>(x->u));
    case T::kString: return Value::Double(std::strtod(x->s.c_str(), nullptr));
    default: return std::nullopt;
  }
}

std::optional<Value> ToBool(const CallArgs& c) {
  const Value* x = Converted(c);
  if (x == nullptr) return std::nullopt;
  if (x->is(T::kBool)) return *x;
  if (x->is(T::kString) && (x->s == "true" || x->s == "false")) return Value::Bool(x->s == "true");
  return std::nullopt;
}

std::optional<Value> OrValue(const CallArgs& c) {
  if (!c.Arity(2) || !c.Is(0, T::kOptional)) return std::nullopt;
  const ValueList& inner = *c.args[0].list;
  return inner.empty() ? c.args[1] : inner[0];
}

std::optional<Value> HasValue(const CallArgs& c) {
  if (!c.Arity(1) || !c.Is(0, T::kOptional)) return std::nullopt;
  return Value::Bool(!c.args[0].list->empty());
}

std::optional<Value> OptionalValue(const CallArgs& c) {
  if (!c.Arity(1) || !c.Is(0, T::kOptional)) return std::nullopt;
  const ValueList& inner = *c.args[0].list;
  return inner.empty() ? Value::Error("optional.none() dereference") : inner[0];
}

// x.includes(y): y is x, or an element of the list x (at most 48 entries).
std::optional<Value> Includes(const CallArgs& c) {
  if (!c.Arity(2) || !c.has_target) return std::nullopt;
  if (!c.Is(0, T::kList)) return Value::Bool(Equal(c.args[0], c.args[1]));
  if (c.args[0].list->size() > 48) return Value::Error("includes: list longer than 48 entries");
  for (const Value& x : *c.args[0].list) {
    if (Equal(x, c.args[1])) return Value::Bool(true);
  }
  return Value::Bool(false);
}

std::optional<Value> Join(const CallArgs& c) {
  if (!c.Is(0, T::kList) || !(c.Arity(1) || (c.Arity(2) && c.Is(1, T::kString)))) return std::nullopt;
  std::string out;
  const ValueList& parts = *c.args[0].list;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (!parts[i].is(T::kString)) return NoOverload("join", {c.args[0]});
    if (i > 0 && c.Arity(2)) out += c.args[1].s;
    out += parts[i].s;
  }
  return Value::String(std::move(out));
}

constexpr std::array kStandardFunctions = {
    NamedBuiltin{"size", Size},         NamedBuiltin{"string", ToString},   NamedBuiltin{"int", ToInt},
    NamedBuiltin{"uint", ToUint},       NamedBuiltin{"double", ToDouble},   NamedBuiltin{"bool", ToBool},
    NamedBuiltin{"orValue", OrValue},   NamedBuiltin{"hasValue", HasValue}, NamedBuiltin{"value", OptionalValue},
    NamedBuiltin{"includes", Includes}, NamedBuiltin{"join", Join},
};

}  // namespace

std::span<const NamedBuiltin> StandardFunctions() { return kStandardFunctions; }

}  // namespace gpusched::dra::cel
