// File: evaluator.h
//
// Walks a parsed selector for one device. Errors are values (Value::Type::kError) that travel up
// the tree: `&&`/`||` absorb them commutatively, comprehensions keep the first, everything else
// returns them. Each node visited costs one step; past cel::kMaxCost the result is an error.
//
// Not thread-safe: one evaluator per evaluation (the tree it walks may be shared).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "gpusched/dra/cel/ast.h"
#include "gpusched/dra/cel/device_maps.h"
#include "gpusched/dra/cel/value.h"

namespace gpusched::dra::cel {

class Evaluator {
 public:
  // REQUIRES: device outlives the evaluator.
  explicit Evaluator(const DeviceView& device) : maps_(device) {}

  Value Eval(const Node& n);

 private:
  Value Ident(const std::string& name) const;
  Value Select(const Node& n);
  Value Index(const Value& base, const Value& key) const;
  Value Has(const Node& select);
  Value Logical(const Node& n);
  Value Unary(const Node& n);
  Value Ternary(const Node& n);
  Value Bind(const Node& n);
  Value Comprehension(const Node& n);
  Value Binary(const Node& n);
  Value Call(const Node& n);
  // Evaluates every operand of n in order; the first error instead, if any.
  Value EvalAll(const Node& n, ValueList* out);

  DeviceMaps maps_;
  int64_t cost_ = 0;
  std::vector<std::pair<std::string, Value>> vars_;  // cel.bind and comprehension variables, innermost last
};

}  // namespace gpusched::dra::cel
