// File: quantity.cc
//
// Quantities in exact integer arithmetic: text taken apart into sign, digits and powers of ten and
// two, scaled to nano units rounded away from zero, then to milli or whole units; and the canonical
// form written back (decimal SI, binary SI or exponent).
#include "gpusched/common/quantity.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace gpusched {
namespace {

using Int128 = __int128;

constexpr Int128 kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kNanoPerUnit = 1'000'000'000;
constexpr int64_t kNanoPerMilli = 1'000'000;
// Above this many nano units a value exceeds int64 in every unit we return (2^63 * 10^9 < 10^28).
constexpr int kMaxNanoDigits = 28;

Status Malformed(std::string_view text, std::string_view why) {
  return InvalidArgumentError(fmt::format("invalid quantity \"{}\": {}", text, why));
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A quantity taken apart: sign * digits * 10^exp10 * 2^exp2, digits without leading zeros.
struct Parts {
  QuantityFormat format = QuantityFormat::kDecimalSI;
  bool negative = false;
  std::string digits;
  int64_t exp10 = 0;
  int exp2 = 0;
};

// Reads "[+-]<number>" from the front of *text; returns false if there is no digit.
bool TakeNumber(std::string_view* text, Parts* p) {
  std::string_view s = *text;
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) p->negative = s[i++] == '-';
  bool any = false;
  for (; i < s.size() && IsDigit(s[i]); ++i, any = true) {
    if (!p->digits.empty() || s[i] != '0') p->digits.push_back(s[i]);
  }
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && IsDigit(s[i]); ++i, any = true) {
      if (!p->digits.empty() || s[i] != '0') p->digits.push_back(s[i]);
      --p->exp10;
    }
  }
  text->remove_prefix(i);
  return any;
}

// Applies the suffix to *p. Returns false if it is not one of the grammar's suffixes.
bool TakeSuffix(std::string_view suffix, Parts* p) {
  if (suffix.empty()) return true;
  if (suffix.size() == 2 && suffix[1] == 'i') {
    static constexpr std::string_view kBinary = "KMGTPE";
    size_t pos = kBinary.find(suffix[0]);
    if (pos == std::string_view::npos) return false;
    p->exp2 = 10 * static_cast<int>(pos + 1);
    p->format = QuantityFormat::kBinarySI;
    return true;
  }
  if (suffix.size() == 1) {
    static constexpr std::string_view kDecimal = "numkMGTPE";
    static constexpr int kExp[] = {-9, -6, -3, 3, 6, 9, 12, 15, 18};
    size_t pos = kDecimal.find(suffix[0]);
    if (pos == std::string_view::npos) return false;
    p->exp10 += kExp[pos];
    return true;
  }
  if (suffix[0] != 'e' && suffix[0] != 'E') return false;
  p->format = QuantityFormat::kDecimalExponent;
  // An exponent: a signed integer. Its size only matters up to where any value over- or
  // underflows, so it saturates there.
  std::string_view e = suffix.substr(1);
  bool negative = false;
  if (!e.empty() && (e[0] == '+' || e[0] == '-')) {
    negative = e[0] == '-';
    e.remove_prefix(1);
  }
  if (e.empty()) return false;
  int64_t value = 0;
  for (char c : e) {
    if (!IsDigit(c)) return false;
    value = std::min<int64_t>(value * 10 + (c - '0'), int64_t{1} << 40);
  }
  p->exp10 += negative ? -value : value;
  return true;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

StatusOr<Parts> Split(std::string_view text) {
  // Quantity.UnmarshalJSON trims surrounding white space before it parses.
  std::string_view s = text;
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  if (s.empty()) return Malformed(text, "empty");
  Parts p;
  if (!TakeNumber(&s, &p)) return Malformed(text, "no digits");
  if (!TakeSuffix(s, &p)) return Malformed(text, fmt::format("unknown suffix \"{}\"", s));
  // Trailing zeros move into the exponent: digits is then short for round values ("8000" = 8e3).
  while (!p.digits.empty() && p.digits.back() == '0') {
    p.digits.pop_back();
    ++p.exp10;
  }
  return p;
}

// Returns ceil(|value| * 10^9): the value in nano units, rounded up as apimachinery rounds, or
// -1 when that exceeds 10^28 (no unit we return can hold it).
Int128 MagnitudeNano(const Parts& p) {
  if (p.digits.empty()) return 0;
  // Exact decimal digits of digits * 2^exp2, least significant first.
  std::string d(p.digits.rbegin(), p.digits.rend());
  for (int k = 0; k < p.exp2; ++k) {
    int carry = 0;
    for (char& c : d) {
      int v = (c - '0') * 2 + carry;
      c = static_cast<char>('0' + v % 10);
      carry = v / 10;
    }
    if (carry != 0) d.push_back(static_cast<char>('0' + carry));
  }
  // The value is d * 10^shift nano units.
  int64_t shift = p.exp10 + 9;
  int64_t integer_digits = static_cast<int64_t>(d.size()) + shift;
  if (integer_digits > kMaxNanoDigits) return -1;
  if (integer_digits <= 0) return 1;  // below one nano unit: rounds up to one
  Int128 out = 0;
  bool fraction = false;
  for (int64_t i = static_cast<int64_t>(d.size()) - 1; i >= 0; --i) {
    if (i + shift >= 0) {
      out = out * 10 + (d[static_cast<size_t>(i)] - '0');
    } else if (d[static_cast<size_t>(i)] != '0') {
      fraction = true;
    }
  }
  for (int64_t z = 0; z < shift; ++z) out *= 10;
  return fraction ? out + 1 : out;
}

// Returns the quantity's value in nano units (rounded up away from zero), or an error. Like
// apimachinery, a DecimalSI or BinarySI magnitude above 2^63-1 is capped there.
StatusOr<Int128> ParseNano(std::string_view text) {
  GPUSCHED_ASSIGN_OR_RETURN(Parts p, Split(text));
  Int128 nano = MagnitudeNano(p);
  constexpr Int128 kCap = kInt64Max * kNanoPerUnit;
  if (p.format != QuantityFormat::kDecimalExponent && (nano < 0 || nano > kCap)) nano = kCap;
  if (nano < 0) return Malformed(text, "out of range");
  return p.negative ? -nano : nano;
}

// Returns nano / divisor rounded away from zero, as apimachinery's ScaledValue rounds
// (negativeScaleInt64: "if not exact, is rounded away from zero").
Int128 RoundAway(Int128 nano, int64_t divisor) {
  Int128 q = nano / divisor;
  if (nano % divisor == 0) return q;
  return nano > 0 ? q + 1 : q - 1;
}

// Returns the decimal text of nano / 10^9, without trailing zeros ("1.5").
std::string DecimalText(Int128 nano) {
  bool negative = nano < 0;
  Int128 m = negative ? -nano : nano;
  auto whole = static_cast<uint64_t>(m / kNanoPerUnit);
  auto frac = static_cast<uint64_t>(m % kNanoPerUnit);
  std::string out = fmt::format("{}{}", negative ? "-" : "", whole);
  if (frac == 0) return out;
  std::string f = fmt::format("{:09}", frac);
  while (f.back() == '0') f.pop_back();
  return out + "." + f;
}

}  // namespace

StatusOr<int64_t> ParseQuantityMilli(std::string_view text) {
  GPUSCHED_ASSIGN_OR_RETURN(Int128 nano, ParseNano(text));
  Int128 milli = RoundAway(nano, kNanoPerMilli);
  if (milli > kInt64Max || milli < -kInt64Max) return Malformed(text, "out of range");
  return static_cast<int64_t>(milli);
}

StatusOr<int64_t> ParseQuantityWhole(std::string_view text) {
  GPUSCHED_ASSIGN_OR_RETURN(Int128 nano, ParseNano(text));
  Int128 milli = RoundAway(nano, kNanoPerMilli);
  if (milli % 1000 != 0) {
    return Malformed(text, fmt::format("{} is not a whole number", DecimalText(nano)));
  }
  Int128 whole = milli / 1000;
  if (whole > kInt64Max || whole < -kInt64Max) return Malformed(text, "out of range");
  return static_cast<int64_t>(whole);
}

std::string FormatQuantity(int64_t value, QuantityFormat format) {
  if (value == 0) return "0";
  // Magnitude as unsigned: INT64_MIN has no positive int64.
  uint64_t m = value < 0 ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  std::string_view sign = value < 0 ? "-" : "";
  if (format == QuantityFormat::kBinarySI && m >= 1024 && m % 1024 == 0) {
    static constexpr std::string_view kBinary[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int k = 0;
    while (k < 6 && m % 1024 == 0) {
      m /= 1024;
      ++k;
    }
    return fmt::format("{}{}{}", sign, m, kBinary[k]);
  }
  int k = 0;
  while (k < 6 && m % 1000 == 0) {
    m /= 1000;
    ++k;
  }
  if (format == QuantityFormat::kDecimalExponent) {
    return k == 0 ? fmt::format("{}{}", sign, m) : fmt::format("{}{}e{}", sign, m, 3 * k);
  }
  static constexpr std::string_view kDecimal[] = {"", "k", "M", "G", "T", "P", "E"};
  return fmt::format("{}{}{}", sign, m, kDecimal[k]);
}

}  // namespace gpusched
