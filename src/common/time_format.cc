// File: time_format.cc
//
// RFC 3339 both ways: Unix milliseconds written in UTC with whole seconds, and text read back with
// optional fractional seconds and numeric offsets, dates converted by Hinnant's days-from-civil.
#include "gpusched/common/time_format.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <charconv>
#include <ctime>

namespace gpusched {
namespace {

// Reads `width` digits at text[*at]; false if they are not all digits.
bool Digits(std::string_view text, size_t* at, size_t width, int* out) {
  if (*at + width > text.size()) return false;
  auto [ptr, ec] = std::from_chars(text.data() + *at, text.data() + *at + width, *out);
  if (ec != std::errc() || ptr != text.data() + *at + width) return false;
  *at += width;
  return true;
}

bool Expect(std::string_view text, size_t* at, char c) {
  if (*at >= text.size() || (text[*at] != c && !(c == 'T' && text[*at] == 't'))) return false;
  ++*at;
  return true;
}

// Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

}  // namespace

std::string FormatRfc3339(int64_t unix_ms) {
  std::time_t t = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", tm);
}

std::optional<int64_t> ParseRfc3339(std::string_view text) {
  size_t at = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(text, &at, 4, &year) || !Expect(text, &at, '-') || !Digits(text, &at, 2, &month) || !Expect(text, &at, '-') ||
      !Digits(text, &at, 2, &day) || !Expect(text, &at, 'T') || !Digits(text, &at, 2, &hour) || !Expect(text, &at, ':') ||
      !Digits(text, &at, 2, &minute) || !Expect(text, &at, ':') || !Digits(text, &at, 2, &second)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return std::nullopt;
  int64_t millis = 0;
  if (at < text.size() && text[at] == '.') {
    ++at;
    int64_t scale = 100;
    size_t start = at;
    for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at, scale /= 10) millis += (text[at] - '0') * scale;
    if (at == start) return std::nullopt;
  }
  int64_t offset_min = 0;
  if (at < text.size() && (text[at] == 'Z' || text[at] == 'z')) {
    ++at;
  } else if (at < text.size() && (text[at] == '+' || text[at] == '-')) {
    int sign = text[at++] == '-' ? -1 : 1;
    int oh = 0, om = 0;
    if (!Digits(text, &at, 2, &oh) || !Expect(text, &at, ':') || !Digits(text, &at, 2, &om)) return std::nullopt;
    offset_min = sign * (oh * 60 + om);
  } else {
    return std::nullopt;
  }
  if (at != text.size()) return std::nullopt;
  int64_t seconds = DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_min * 60;
  return seconds * 1000 + millis;
}

}  // namespace gpusched
