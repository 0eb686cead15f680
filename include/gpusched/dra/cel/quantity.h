// File: quantity.h
//
// The Kubernetes CEL Quantity library: quantity(), isQuantity(), and on quantities compareTo,
// isGreaterThan, isLessThan, add, sub, asInteger, isInteger, asApproximateFloat and sign. A
// quantity value is held exactly in milli-units (common/quantity.h reads the text).
#pragma once

#include <span>

#include "gpusched/dra/cel/builtins.h"

namespace gpusched::dra::cel {

std::span<const NamedBuiltin> QuantityFunctions();

}  // namespace gpusched::dra::cel
