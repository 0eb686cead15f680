// File: operators.h
//
// CEL's binary operators on two evaluated operands: == and != (never an error), < <= > >= on
// numbers (across int/uint/double; NaN compares false), strings and bools, `in` on lists and
// maps, + on strings and lists, and + - * / % on int, uint and double with overflow and
// division by zero as errors.
#pragma once

#include "gpusched/dra/cel/ast.h"
#include "gpusched/dra/cel/device_maps.h"
#include "gpusched/dra/cel/value.h"

namespace gpusched::dra::cel {

// REQUIRES: op is one of kEq ... kMod; neither operand is an error.
Value ApplyBinary(Op op, const Value& a, const Value& b, const DeviceMaps& maps);

}  // namespace gpusched::dra::cel
