// File: evaluator.cc
//
// The tree walk, one cost step per node: identifiers and bound variables, field selection and
// optionals, indexing, has(), && and || absorbing errors, the ternary, cel.bind, comprehension
// macros, binary operators (operators.cc) and calls tried overload by overload.
#include "gpusched/dra/cel/evaluator.h"

#include <fmt/format.h>

#include <limits>
#include <optional>

#include "gpusched/dra/cel.h"
#include "gpusched/dra/cel/operators.h"

namespace gpusched::dra::cel {

Value Evaluator::Eval(const Node& n) {
  if (++cost_ > kMaxCost) return Value::Error("operation cancelled: actual cost limit exceeded");
  switch (n.op) {
    case Op::kLiteral: return n.literal;
    case Op::kIdent: return Ident(n.name);
    case Op::kSelect:
    case Op::kOptSelect: return Select(n);
    case Op::kIndex: {
      Value base = Eval(*n.args[0]);
      if (base.error()) return base;
      Value key = Eval(*n.args[1]);
      if (key.error()) return key;
      return Index(base, key);
    }
    case Op::kCall: return Call(n);
    case Op::kList:
    case Op::kMap: {
      ValueList items;
      if (Value e = EvalAll(n, &items); e.error()) return e;
      return n.op == Op::kList ? Value::List(std::move(items)) : Value::LiteralMap(std::move(items));
    }
    case Op::kNot:
    case Op::kNeg: return Unary(n);
    case Op::kAnd:
    case Op::kOr: return Logical(n);
    case Op::kTernary: return Ternary(n);
    case Op::kHas: return Has(*n.args[0]);
    case Op::kBind: return Bind(n);
    case Op::kComprehension: return Comprehension(n);
    default: return Binary(n);
  }
}

Value Evaluator::EvalAll(const Node& n, ValueList* out) {
  out->reserve(n.args.size());
  for (const auto& a : n.args) {
    Value v = Eval(*a);
    if (v.error()) return v;
    out->push_back(std::move(v));
  }
  return Value();
}

Value Evaluator::Ident(const std::string& name) const {
  for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
    if (it->first == name) return it->second;
  }
  if (name == "device") return DeviceMaps::Root();
  return Value::Error(fmt::format("undeclared reference to '{}'", name));
}

Value Evaluator::Select(const Node& n) {
  Value base = Eval(*n.args[0]);
  if (base.error()) return base;
  if (base.type == Value::Type::kOptional) {
    // a.?b.c and a.?b.?c chain through an empty optional.
    if (base.list->empty()) return base;
    return maps_.Field((*base.list)[0], n.name, true);
  }
  return maps_.Field(base, n.name, n.op == Op::kOptSelect);
}

Value Evaluator::Index(const Value& base, const Value& key) const {
  if (base.type == Value::Type::kList) {
    int64_t i = 0;
    if (key.type == Value::Type::kInt) {
      i = key.i;
    } else if (key.type == Value::Type::kUint) {
      i = static_cast<int64_t>(key.u);
    } else {
      return NoOverload("_[_]", {base, key});
    }
    if (i < 0 || static_cast<size_t>(i) >= base.list->size()) return Value::Error(fmt::format("index out of range: {}", i));
    return (*base.list)[static_cast<size_t>(i)];
  }
  if (base.type == Value::Type::kMap) {
    if (DeviceMaps::IsRoot(base) && key.type == Value::Type::kString) return maps_.Field(base, key.s, false);
    std::optional<Value> v = maps_.Lookup(base, key);
    if (!v) return Value::Error(fmt::format("no such key: {}", key.type == Value::Type::kString ? key.s : TypeName(key)));
    return *v;
  }
  if (base.type == Value::Type::kOptional) {
    if (base.list->empty()) return base;
    return Index((*base.list)[0], key);
  }
  return NoOverload("_[_]", {base, key});
}

Value Evaluator::Has(const Node& select) {
  Value base = Eval(*select.args[0]);
  if (base.error()) return base;
  if (DeviceMaps::IsRoot(base)) return Value::Bool(DeviceMaps::RootHas(select.name));
  if (base.type != Value::Type::kMap) return Value::Error(fmt::format("invalid type for field selection: {}", TypeName(base)));
  return Value::Bool(maps_.Lookup(base, Value::String(select.name)).has_value());
}

Value Evaluator::Logical(const Node& n) {
  bool is_and = n.op == Op::kAnd;
  Value left = Eval(*n.args[0]);
  if (left.type == Value::Type::kBool && left.b != is_and) return left;  // false && _, true || _
  Value right = Eval(*n.args[1]);
  if (right.type == Value::Type::kBool && right.b != is_and) return right;  // _ && false, _ || true
  if (left.error()) return left;
  if (right.error()) return right;
  if (left.type != Value::Type::kBool || right.type != Value::Type::kBool) {
    return NoOverload(is_and ? "_&&_" : "_||_", {left, right});
  }
  return Value::Bool(is_and);
}

Value Evaluator::Unary(const Node& n) {
  Value v = Eval(*n.args[0]);
  if (v.error()) return v;
  if (n.op == Op::kNot) {
    if (v.type != Value::Type::kBool) return NoOverload("!_", {v});
    return Value::Bool(!v.b);
  }
  if (v.type == Value::Type::kInt) {
    if (v.i == std::numeric_limits<int64_t>::min()) return Value::Error("integer overflow");
    return Value::Int(-v.i);
  }
  if (v.type == Value::Type::kDouble) return Value::Double(-v.d);
  return NoOverload("-_", {v});
}

Value Evaluator::Ternary(const Node& n) {
  Value c = Eval(*n.args[0]);
  if (c.error()) return c;
  if (c.type != Value::Type::kBool) return NoOverload("_?_:_", {c});
  return Eval(*n.args[c.b ? 1 : 2]);
}

Value Evaluator::Bind(const Node& n) {
  Value init = Eval(*n.args[0]);
  vars_.emplace_back(n.name, std::move(init));
  Value out = Eval(*n.args[1]);
  vars_.pop_back();
  return out;
}

Value Evaluator::Comprehension(const Node& n) {
  Value range = Eval(*n.args[0]);
  if (range.error()) return range;
  ValueList items;
  if (range.type == Value::Type::kList) {
    items = *range.list;
  } else if (range.type == Value::Type::kMap && !DeviceMaps::IsRoot(range)) {
    items = maps_.Keys(range);
  } else {
    return Value::Error(fmt::format("expression of type '{}' cannot be range of a comprehension", TypeName(range)));
  }
  ValueList kept;  // map: the results; filter: the items kept
  int64_t true_count = 0;
  std::optional<Value> first_error;
  for (const Value& item : items) {
    vars_.emplace_back(n.name, item);
    Value v = Eval(*n.args[1]);
    vars_.pop_back();
    if (n.macro == Macro::kMap) {
      if (v.error()) return v;
      kept.push_back(std::move(v));
      continue;
    }
    if (v.error()) {
      if (n.macro == Macro::kFilter || n.macro == Macro::kExistsOne) return v;
      if (!first_error) first_error = v;
      continue;
    }
    if (v.type != Value::Type::kBool) return NoOverload("comprehension", {v});
    if (n.macro == Macro::kExists && v.b) return Value::Bool(true);
    if (n.macro == Macro::kAll && !v.b) return Value::Bool(false);
    if (n.macro == Macro::kExistsOne) true_count += v.b ? 1 : 0;
    if (n.macro == Macro::kFilter && v.b) kept.push_back(item);
  }
  switch (n.macro) {
    case Macro::kExists: return first_error ? *first_error : Value::Bool(false);
    case Macro::kAll: return first_error ? *first_error : Value::Bool(true);
    case Macro::kExistsOne: return Value::Bool(true_count == 1);
    case Macro::kMap:
    case Macro::kFilter: return Value::List(std::move(kept));
  }
  return Value::Error("unreachable");
}

Value Evaluator::Binary(const Node& n) {
  Value a = Eval(*n.args[0]);
  if (a.error()) return a;
  Value b = Eval(*n.args[1]);
  if (b.error()) return b;
  return ApplyBinary(n.op, a, b, maps_);
}

Value Evaluator::Call(const Node& n) {
  ValueList args;
  if (Value e = EvalAll(n, &args); e.error()) return e;
  CallArgs call{.args = args, .has_target = n.has_target, .regex = n.regex.get(), .maps = &maps_};
  for (Builtin fn : n.builtins) {
    if (std::optional<Value> v = fn(call)) return std::move(*v);
  }
  return NoOverload(n.name, std::span<const Value>(args));
}

}  // namespace gpusched::dra::cel
