// File: quantity.h
//
// Kubernetes resource quantities ("2", "500m", "16Gi", "1k", "1.5e3") parsed once, at the JSON
// boundary, into exact integers. The grammar is apimachinery's resource.Quantity:
//
//   <quantity> ::= [+-] <digits>[.<digits>] <suffix>
//   <suffix>   ::= "" | n | u | m | k | M | G | T | P | E | Ki | Mi | Gi | Ti | Pi | Ei | (e|E)[+-]<digits>
//
// Arithmetic is exact (128-bit); a value that does not fit int64 after scaling is an error, never
// a silent wrap.
#pragma once

#include <cstdint>
#include <string_view>

#include "gpusched/common/status.h"

namespace gpusched {

// Returns ceil(q * 1000) for the quantity text `text` (as resource.Quantity.MilliValue does).
// Errors: InvalidArgument for text outside the grammar or a result outside int64.
StatusOr<int64_t> ParseQuantityMilli(std::string_view text);

// Returns the quantity as an exact integer. Errors: InvalidArgument for malformed text, for a
// fractional value ("1500m" is fine, "1.5" is not) and for values outside int64.
StatusOr<int64_t> ParseQuantityWhole(std::string_view text);

}  // namespace gpusched
