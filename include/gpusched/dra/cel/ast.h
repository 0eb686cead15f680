// File: ast.h
//
// A parsed selector: the syntax tree the parser builds and the evaluator walks. Everything that
// can be decided before a device is seen is decided here: literals are values, calls carry
// their resolved overload set, a literal regular expression is compiled.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpusched/dra/cel/builtins.h"
#include "gpusched/dra/cel/value.h"

namespace gpusched::dra::cel {

enum class Op {
  kLiteral, kIdent, kSelect, kOptSelect, kIndex, kCall, kList, kMap, kNot, kNeg, kAnd, kOr, kTernary,
  // Binary operators, in this order (operators.h relies on it).
  kEq, kNe, kLt, kLe, kGt, kGe, kIn, kAdd, kSub, kMul, kDiv, kMod,
  kHas, kBind, kComprehension
};

enum class Macro { kExists, kAll, kExistsOne, kMap, kFilter };

struct Node {
  Op op = Op::kLiteral;
  Value literal;                            // kLiteral
  std::string name;                         // kIdent, kSelect/kOptSelect field, kCall function, kBind/kComprehension var
  std::vector<std::unique_ptr<Node>> args;  // operands; kCall: target first if has_target
  bool has_target = false;                  // kCall: x.f(...)
  std::span<const Builtin> builtins;        // kCall: the overload set of `name`
  Macro macro = Macro::kExists;             // kComprehension
  std::unique_ptr<RE2> regex;               // kCall "matches" with a literal pattern
};

class Program {
 public:
  std::unique_ptr<Node> root;
  std::string text;
};

}  // namespace gpusched::dra::cel
