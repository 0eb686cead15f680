// File: operators.cc
//
// CEL's binary operators: `in` on lists and maps, ordering across numeric types and on strings and
// bools, equality, arithmetic on int, uint and double with overflow and division by zero as error
// values, and string and list concatenation.
#include "gpusched/dra/cel/operators.h"

#include <limits>
#include <string_view>

namespace gpusched::dra::cel {
namespace {

using T = Value::Type;

Value In(const Value& a, const Value& b, const DeviceMaps& maps) {
  if (b.type == T::kList) {
    for (const Value& x : *b.list) {
      if (Equal(x, a)) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  if (b.type == T::kMap && !DeviceMaps::IsRoot(b)) return Value::Bool(maps.Lookup(b, a).has_value());
  return NoOverload("@in", {a, b});
}

Value Ordering(Op op, const Value& a, const Value& b) {
  int c;
  if (IsNumber(a) && IsNumber(b)) {
    c = CompareNumbers(a, b);
    if (c == 2) return Value::Bool(false);  // NaN
  } else if (a.type == b.type && a.type == T::kString) {
    c = a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
  } else if (a.type == b.type && a.type == T::kBool) {
    c = a.b == b.b ? 0 : a.b ? 1 : -1;
  } else {
    static constexpr std::string_view kNames[] = {"_<_", "_<=_", "_>_", "_>=_"};
    return NoOverload(kNames[static_cast<int>(op) - static_cast<int>(Op::kLt)], {a, b});
  }
  switch (op) {
    case Op::kLt: return Value::Bool(c < 0);
    case Op::kLe: return Value::Bool(c <= 0);
    case Op::kGt: return Value::Bool(c > 0);
    default: return Value::Bool(c >= 0);
  }
}

std::optional<Value> IntArithmetic(Op op, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (op) {
    case Op::kAdd: return __builtin_add_overflow(a, b, &r) ? Value::Error("integer overflow") : Value::Int(r);
    case Op::kSub: return __builtin_sub_overflow(a, b, &r) ? Value::Error("integer overflow") : Value::Int(r);
    case Op::kMul: return __builtin_mul_overflow(a, b, &r) ? Value::Error("integer overflow") : Value::Int(r);
    case Op::kDiv:
    case Op::kMod:
      if (b == 0) return Value::Error(op == Op::kDiv ? "division by zero" : "modulus by zero");
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return Value::Error("integer overflow");
      return Value::Int(op == Op::kDiv ? a / b : a % b);
    default: return std::nullopt;
  }
}

std::optional<Value> UintArithmetic(Op op, uint64_t a, uint64_t b) {
  uint64_t r = 0;
  switch (op) {
    case Op::kAdd: return __builtin_add_overflow(a, b, &r) ? Value::Error("unsigned integer overflow") : Value::Uint(r);
    case Op::kSub: return __builtin_sub_overflow(a, b, &r) ? Value::Error("unsigned integer overflow") : Value::Uint(r);
    case Op::kMul: return __builtin_mul_overflow(a, b, &r) ? Value::Error("unsigned integer overflow") : Value::Uint(r);
    case Op::kDiv:
    case Op::kMod:
      if (b == 0) return Value::Error(op == Op::kDiv ? "division by zero" : "modulus by zero");
      return Value::Uint(op == Op::kDiv ? a / b : a % b);
    default: return std::nullopt;
  }
}

std::optional<Value> DoubleArithmetic(Op op, double a, double b) {
  switch (op) {
    case Op::kAdd: return Value::Double(a + b);
    case Op::kSub: return Value::Double(a - b);
    case Op::kMul: return Value::Double(a * b);
    case Op::kDiv: return Value::Double(a / b);
    default: return std::nullopt;
  }
}

Value Arithmetic(Op op, const Value& a, const Value& b) {
  if (op == Op::kAdd && a.type == b.type) {
    if (a.type == T::kString) return Value::String(a.s + b.s);
    if (a.type == T::kList) {
      ValueList out = *a.list;
      out.insert(out.end(), b.list->begin(), b.list->end());
      return Value::List(std::move(out));
    }
  }
  std::optional<Value> r;
  if (a.type == T::kInt && b.type == T::kInt) r = IntArithmetic(op, a.i, b.i);
  if (a.type == T::kUint && b.type == T::kUint) r = UintArithmetic(op, a.u, b.u);
  if (a.type == T::kDouble && b.type == T::kDouble) r = DoubleArithmetic(op, a.d, b.d);
  if (r) return std::move(*r);
  static constexpr std::string_view kNames[] = {"_+_", "_-_", "_*_", "_/_", "_%_"};
  return NoOverload(kNames[static_cast<int>(op) - static_cast<int>(Op::kAdd)], {a, b});
}

}  // namespace

Value ApplyBinary(Op op, const Value& a, const Value& b, const DeviceMaps& maps) {
  switch (op) {
    case Op::kEq: return Value::Bool(Equal(a, b));
    case Op::kNe: return Value::Bool(!Equal(a, b));
    case Op::kIn: return In(a, b, maps);
    case Op::kLt: case Op::kLe: case Op::kGt: case Op::kGe: return Ordering(op, a, b);
    default: return Arithmetic(op, a, b);
  }
}

}  // namespace gpusched::dra::cel
