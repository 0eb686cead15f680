// File: cel.cc
//
// The public face of the CEL subset: compile (size limit, parse into a shareable Program), evaluate
// (unsupported attribute values refused, a bool result required), and a cache that compiles each
// expression text once, errors included.
#include "gpusched/dra/cel.h"

#include <fmt/format.h>

#include "gpusched/dra/cel/ast.h"
#include "gpusched/dra/cel/evaluator.h"
#include "gpusched/dra/cel/parser.h"

namespace gpusched::dra::cel {

StatusOr<ProgramPtr> Compile(std::string_view expression) {
  if (expression.size() > kMaxExpressionBytes) {
    return InvalidArgumentError(fmt::format("CEL expression is {} bytes, more than the limit of {}", expression.size(),
                                            kMaxExpressionBytes));
  }
  StatusOr<std::unique_ptr<Node>> root = Parse(expression);
  if (!root.ok()) return root.status();
  auto program = std::make_shared<Program>();
  program->root = std::move(root).value();
  program->text = std::string(expression);
  return ProgramPtr(std::move(program));
}

StatusOr<bool> Evaluate(const Program& program, const DeviceView& device) {
  for (const auto& [key, value] : device.device->attributes) {
    if (value.kind == AttributeValue::Kind::kUnsupported ||
        (value.kind == AttributeValue::Kind::kVersion && !ParseSemver(value.text).ok())) {
      return InvalidArgumentError(fmt::format("attribute {}: unsupported attribute value", key));
    }
  }
  Evaluator evaluator(device);
  Value v = evaluator.Eval(*program.root);
  if (v.error()) return InvalidArgumentError(std::move(v.s));
  if (v.type != Value::Type::kBool) {
    return InvalidArgumentError(fmt::format("expression must evaluate to bool, got {}", TypeName(v)));
  }
  return v.b;
}

StatusOr<ProgramPtr> ProgramCache::Get(const std::string& expression) {
  {
    MutexLock lock(&mu_);
    if (auto it = programs_.find(expression); it != programs_.end()) return it->second;
  }
  StatusOr<ProgramPtr> compiled = Compile(expression);
  MutexLock lock(&mu_);
  return programs_.emplace(expression, std::move(compiled)).first->second;
}

size_t ProgramCache::size() const {
  MutexLock lock(&mu_);
  return programs_.size();
}

}  // namespace gpusched::dra::cel
