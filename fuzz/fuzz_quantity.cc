// Fuzz target: Kubernetes quantity parsing over apimachinery's whole grammar. Must never crash,
// and every value read must agree with:
//   - an independent, direct computation for the common domain (at most 18 significant digits,
//     exponents within +-30): |q| * 10^9 rounded up, in 128-bit arithmetic;
//   - the same text with an explicit "+" (equal) and "-" (negated) sign;
//   - its whole value and its milli value (milli = 1000 * whole);
//   - its canonical spellings (FormatQuantity in every format reads back the same whole value);
//   - the same text with surrounding white space, as JSON unmarshalling trims it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "gpusched/common/quantity.h"

namespace {

using Int128 = __int128;

std::string_view g_input;  // the input being checked, shown when a check fails

void Check(bool ok) {
  if (ok) return;
  std::fprintf(stderr, "quantity check failed for input \"%.*s\"\n", static_cast<int>(g_input.size()), g_input.data());
  __builtin_trap();
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

// Returns q * 1000 rounded away from zero for text in the common domain, or nullopt outside it: computed directly
// from the digits, without the parser under test.
std::optional<int64_t> ReferenceMilli(std::string_view text) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  Int128 mantissa = 0;
  int significant = 0, scale = 0;  // value = mantissa * 10^-scale
  bool digit = false, dot = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') break;
    digit = true;
    if (significant > 0 || c != '0') ++significant;
    if (significant > 18) return std::nullopt;
    mantissa = mantissa * 10 + (c - '0');
    if (dot) ++scale;
  }
  if (!digit) return std::nullopt;
  std::string_view suffix = text.substr(i);
  int exp10 = 0, exp2 = 0;
  static constexpr std::pair<std::string_view, int> kDecimal[] = {
      {"", 0}, {"n", -9}, {"u", -6}, {"m", -3}, {"k", 3}, {"M", 6}, {"G", 9}, {"T", 12}, {"P", 15}, {"E", 18}};
  static constexpr std::pair<std::string_view, int> kBinary[] = {{"Ki", 10}, {"Mi", 20}, {"Gi", 30},
                                                                 {"Ti", 40}, {"Pi", 50}, {"Ei", 60}};
  bool known = false;
  for (auto [s, e] : kDecimal) known = known || (suffix == s && (exp10 = e, true));
  for (auto [s, e] : kBinary) known = known || (suffix == s && (exp2 = e, true));
  if (!known) {
    if (suffix.size() < 2 || (suffix[0] != 'e' && suffix[0] != 'E')) return std::nullopt;
    size_t k = 1;
    bool minus = false;
    if (suffix[k] == '+' || suffix[k] == '-') minus = suffix[k++] == '-';
    if (k >= suffix.size() || suffix.size() - k > 2) return std::nullopt;
    for (; k < suffix.size(); ++k) {
      if (suffix[k] < '0' || suffix[k] > '9') return std::nullopt;
      exp10 = exp10 * 10 + (suffix[k] - '0');
    }
    if (minus) exp10 = -exp10;
    if (exp10 > 30 || exp10 < -30) return std::nullopt;
  }
  // value * 10^9 = mantissa * 2^exp2 * 10^(exp10 + 9 - scale); round the magnitude up.
  Int128 num = mantissa;
  for (int k = 0; k < exp2; ++k) num *= 2;
  int shift = exp10 + 9 - scale;
  Int128 den = 1;
  for (; shift > 0; --shift) {
    num *= 10;
    if (num > (Int128(1) << 100)) return std::nullopt;
  }
  if (shift < -36) return std::nullopt;
  for (; shift < 0; ++shift) den *= 10;
  Int128 nano = num / den + (num % den != 0 ? 1 : 0);
  Int128 milli = nano / 1000000 + (nano % 1000000 != 0 ? 1 : 0);
  if (milli > INT64_MAX) return std::nullopt;
  if (negative) milli = -milli;  // rounded away from zero, as apimachinery
  return static_cast<int64_t>(milli);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  g_input = text;
  gpusched::StatusOr<int64_t> milli = gpusched::ParseQuantityMilli(text);
  gpusched::StatusOr<int64_t> whole = gpusched::ParseQuantityWhole(text);
  if (whole.ok() && milli.ok()) Check(*milli == *whole * 1000);
  if (std::optional<int64_t> want = ReferenceMilli(text)) Check(milli.ok() && *milli == *want);
  if (!text.empty() && text[0] != '+' && text[0] != '-' && !IsSpace(text[0])) {
    gpusched::StatusOr<int64_t> plus = gpusched::ParseQuantityMilli("+" + std::string(text));
    Check(plus.ok() == milli.ok() && (!plus.ok() || *plus == *milli));
    gpusched::StatusOr<int64_t> minus = gpusched::ParseQuantityWhole("-" + std::string(text));
    Check(minus.ok() == whole.ok() && (!minus.ok() || *minus == -*whole));
  }
  gpusched::StatusOr<int64_t> padded = gpusched::ParseQuantityMilli(" " + std::string(text) + "\n");
  Check(padded.ok() == milli.ok() && (!padded.ok() || *padded == *milli));
  if (whole.ok()) {
    for (auto f : {gpusched::QuantityFormat::kDecimalSI, gpusched::QuantityFormat::kBinarySI,
                   gpusched::QuantityFormat::kDecimalExponent}) {
      gpusched::StatusOr<int64_t> again = gpusched::ParseQuantityWhole(gpusched::FormatQuantity(*whole, f));
      Check(again.ok() && *again == *whole);
    }
  }
  return 0;
}
