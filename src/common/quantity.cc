#include "gpusched/common/quantity.h"

#include <fmt/format.h>

#include <limits>

namespace gpusched {
namespace {

using Int128 = __int128;

// An exact decimal value: sign * mantissa * 10^exp10 * 2^exp2.
struct Decimal {
  bool negative = false;
  Int128 mantissa = 0;
  int exp10 = 0;
  int exp2 = 0;
};

constexpr int kMaxDigits = 36;  // 10^36 < 2^127: the mantissa never overflows.

Status Malformed(std::string_view text, std::string_view why) {
  return InvalidArgumentError(fmt::format("invalid quantity \"{}\": {}", text, why));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

StatusOr<Decimal> ParseDecimal(std::string_view text) {
  Decimal d;
  size_t i = 0;
  if (text.empty()) return Malformed(text, "empty");
  if (text[i] == '+' || text[i] == '-') {
    d.negative = text[i] == '-';
    ++i;
  }
  int digits = 0;
  int significant = 0;
  bool seen_digit = false;
  auto take_digit = [&](char c, bool fraction) -> Status {
    seen_digit = true;
    if (significant == 0 && c == '0') {
      if (fraction) --d.exp10;
      return OkStatus();
    }
    if (significant >= kMaxDigits) {
      // Extra integer digits scale the value; extra fraction digits only matter if non-zero.
      if (!fraction) {
        ++d.exp10;
        if (c != '0') return Malformed(text, "too many significant digits");
      } else if (c != '0') {
        return Malformed(text, "too many significant digits");
      }
      return OkStatus();
    }
    d.mantissa = d.mantissa * 10 + (c - '0');
    ++significant;
    if (fraction) --d.exp10;
    return OkStatus();
  };
  while (i < text.size() && IsDigit(text[i])) {
    GPUSCHED_RETURN_IF_ERROR(take_digit(text[i], false));
    ++i;
    ++digits;
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && IsDigit(text[i])) {
      GPUSCHED_RETURN_IF_ERROR(take_digit(text[i], true));
      ++i;
      ++digits;
    }
  }
  if (!seen_digit) return Malformed(text, "no digits");

  std::string_view suffix = text.substr(i);
  if (suffix.empty()) return d;
  if (suffix.size() == 2 && suffix[1] == 'i') {
    static constexpr std::string_view kBinary = "KMGTPE";
    size_t pos = kBinary.find(suffix[0]);
    if (pos == std::string_view::npos) return Malformed(text, fmt::format("unknown suffix \"{}\"", suffix));
    d.exp2 = 10 * static_cast<int>(pos + 1);
    return d;
  }
  if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'n': d.exp10 -= 9; return d;
      case 'u': d.exp10 -= 6; return d;
      case 'm': d.exp10 -= 3; return d;
      case 'k': d.exp10 += 3; return d;
      case 'M': d.exp10 += 6; return d;
      case 'G': d.exp10 += 9; return d;
      case 'T': d.exp10 += 12; return d;
      case 'P': d.exp10 += 15; return d;
      case 'E': d.exp10 += 18; return d;
      default: break;
    }
  }
  if (suffix[0] == 'e' || suffix[0] == 'E') {
    std::string_view exp = suffix.substr(1);
    bool neg = false;
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) {
      neg = exp[0] == '-';
      exp.remove_prefix(1);
    }
    if (exp.empty() || exp.size() > 4) return Malformed(text, "bad exponent");
    int e = 0;
    for (char c : exp) {
      if (!IsDigit(c)) return Malformed(text, "bad exponent");
      e = e * 10 + (c - '0');
    }
    d.exp10 += neg ? -e : e;
    return d;
  }
  return Malformed(text, fmt::format("unknown suffix \"{}\"", suffix));
}

constexpr Int128 kInt64Max = std::numeric_limits<int64_t>::max();

// Returns ceil(|d| * 10^shift) as a non-negative Int128, or -1 if it exceeds int64.
// `exact` reports whether no rounding happened.
Int128 ScaleMagnitude(const Decimal& d, int shift, bool* exact) {
  *exact = true;
  Int128 m = d.mantissa;
  if (m == 0) return 0;
  for (int k = 0; k < d.exp2; ++k) {
    m *= 2;
    if (m > kInt64Max * 1000000000LL) return -1;
  }
  int e = d.exp10 + shift;
  for (; e > 0; --e) {
    m *= 10;
    if (m > kInt64Max) return -1;
  }
  for (; e < 0; ++e) {
    Int128 q = m / 10;
    if (q * 10 != m) *exact = false;
    m = q;
    if (m == 0) break;
  }
  if (!*exact) m += 1;  // ceil for the magnitude
  if (m > kInt64Max) return -1;
  return m;
}

StatusOr<int64_t> Finish(std::string_view text, const Decimal& d, int shift, bool require_exact) {
  bool exact = true;
  Int128 m = ScaleMagnitude(d, shift, &exact);
  if (m < 0) return Malformed(text, "out of range");
  if (require_exact && !exact) return Malformed(text, "not a whole number");
  if (d.negative) {
    // Ceil of a negative value truncates toward zero: undo the +1 of the magnitude.
    if (!exact) m -= 1;
    return static_cast<int64_t>(-m);
  }
  return static_cast<int64_t>(m);
}

}  // namespace

StatusOr<int64_t> ParseQuantityMilli(std::string_view text) {
  GPUSCHED_ASSIGN_OR_RETURN(Decimal d, ParseDecimal(text));
  return Finish(text, d, 3, false);
}

StatusOr<int64_t> ParseQuantityWhole(std::string_view text) {
  GPUSCHED_ASSIGN_OR_RETURN(Decimal d, ParseDecimal(text));
  return Finish(text, d, 0, true);
}

}  // namespace gpusched
