// File: builtins.h
//
// The functions an expression may call, resolved when it is parsed: each name has an overload
// set, one implementation per library that declares the name (compareTo is both a Quantity and a
// Semver function), tried in order; an implementation answers nullopt when the arguments are not
// its overload, and a call none answers is "no matching overload". A name without an overload
// set is a compile error ("undeclared reference").
//
// The libraries: standard.cc (size, conversions, optionals, includes, join), strings.cc,
// quantity.cc (Kubernetes Quantity), semver.cc (Kubernetes Semver).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "gpusched/dra/cel/value.h"

namespace re2 {
class RE2;
}

namespace gpusched::dra::cel {

class DeviceMaps;

// One call's evaluated arguments (the receiver first, for `x.f(...)`) and what it may consult.
struct CallArgs {
  std::span<const Value> args;
  bool has_target = false;               // called as a method: x.f(...)
  const re2::RE2* regex = nullptr;       // matches() with a literal pattern: compiled at parse time
  const DeviceMaps* maps = nullptr;      // the device, for size() of its maps

  bool Arity(size_t n) const { return args.size() == n; }
  bool Is(size_t i, Value::Type t) const { return i < args.size() && args[i].type == t; }
};

// Returns the result, or nullopt if `call` is not this implementation's overload.
using Builtin = std::optional<Value> (*)(const CallArgs& call);

struct NamedBuiltin {
  std::string_view name;
  Builtin fn;
};

// compareTo, isGreaterThan and isLessThan of a library whose `kOrder` answers -1, 0 or 1 for
// two of its values, or nullopt when the arguments are not two of them.
using Order = std::optional<int> (*)(const CallArgs& call);
template <Order kOrder>
std::optional<Value> CompareTo(const CallArgs& call) {
  if (std::optional<int> o = kOrder(call)) return Value::Int(*o);
  return std::nullopt;
}
template <Order kOrder>
std::optional<Value> IsGreaterThan(const CallArgs& call) {
  if (std::optional<int> o = kOrder(call)) return Value::Bool(*o > 0);
  return std::nullopt;
}
template <Order kOrder>
std::optional<Value> IsLessThan(const CallArgs& call) {
  if (std::optional<int> o = kOrder(call)) return Value::Bool(*o < 0);
  return std::nullopt;
}

// The implementations for `name`, in the order to try them; empty if no library declares it.
std::span<const Builtin> FindBuiltins(std::string_view name);

// The standard library's functions (standard.cc) and the string library's (strings.cc).
std::span<const NamedBuiltin> StandardFunctions();
std::span<const NamedBuiltin> StringFunctions();

}  // namespace gpusched::dra::cel
