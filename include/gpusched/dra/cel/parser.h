// File: parser.h
//
// Recursive descent over CEL's grammar and precedence (ternary, ||, &&, relations and `in`,
// + -, * / %, unary ! and -, member access, index, calls), nesting at most 128 deep. Macros
// (has, exists, all, exists_one, map, filter, cel.bind) become their own nodes; every other call
// is resolved against the builtin table here, so that an unknown function is a compile error
// and evaluation never looks a name up.
#pragma once

#include <memory>
#include <string_view>

#include "gpusched/common/status.h"
#include "gpusched/dra/cel/ast.h"

namespace gpusched::dra::cel {

// Parses `expression`. Errors: InvalidArgument "CEL syntax error at offset N: ..." naming what was
// expected, an undeclared function, a malformed macro or a literal regex that does not compile.
StatusOr<std::unique_ptr<Node>> Parse(std::string_view expression);

}  // namespace gpusched::dra::cel
