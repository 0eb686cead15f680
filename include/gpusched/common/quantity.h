// File: quantity.h
//
// Kubernetes resource quantities ("2", "500m", "16Gi", "8k", "1.5e3") read exactly as
// apimachinery's resource.Quantity reads them, once, at the JSON boundary. The grammar:
//
//   <quantity>     ::= <sign> <number> <suffix>      (surrounding spaces are ignored, as JSON does)
//   <number>       ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//   <sign>         ::= "" | "+" | "-"
//   <suffix>       ::= "" | n | u | m | k | M | G | T | P | E        (powers of 1000)
//                    | Ki | Mi | Gi | Ti | Pi | Ei                    (powers of 1024)
//                    | (e|E) <sign> <digits>                          (a power of ten)
//
// A value is first rounded away from zero to a whole number of nano units, as apimachinery does
// ("if you want some resources, you should get some"), and so is every scaling after that; all
// of it exact integer arithmetic. No floating point anywhere.
//
// The API server writes quantities in canonical form (FormatQuantity): "8000" comes back as "8k",
// "1024Mi" as "1Gi". Every spelling of a value parses to the same number.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpusched/common/status.h"

namespace gpusched {

// Returns q * 1000 rounded away from zero, as resource.Quantity.MilliValue does.
// Errors: InvalidArgument for text outside the grammar or a result outside int64.
StatusOr<int64_t> ParseQuantityMilli(std::string_view text);

// Returns the quantity as an integer, by the rule the API server applies to extended resources:
// the value is whole when its milli value is a multiple of 1000 ("3000m" is 3, "1500m" is not).
// Errors: InvalidArgument for malformed text, for a value that is not whole (the message shows
// the value as a decimal, "1500m" is 1.5) and for values outside int64.
StatusOr<int64_t> ParseQuantityWhole(std::string_view text);

// The suffix family a quantity is written in; the API server keeps it when it canonicalizes.
enum class QuantityFormat { kDecimalSI, kBinarySI, kDecimalExponent };

// Returns `value` in the API server's canonical form for `format`: the largest suffix (or
// exponent, a multiple of 3) that keeps the value exact. A BinarySI value below 1024 in
// magnitude or not a multiple of 1024 is written DecimalSI. 8000 -> "8k", 1000 -> "1k",
// 8192 -> "8192", 1073741824 (BinarySI) -> "1Gi", 12000000 (DecimalExponent) -> "12e6".
std::string FormatQuantity(int64_t value, QuantityFormat format = QuantityFormat::kDecimalSI);

}  // namespace gpusched
