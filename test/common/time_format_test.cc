#include "gpusched/common/time_format.h"

#include <gtest/gtest.h>

namespace gpusched {
namespace time_format_test {

TEST(TimeFormat, WritesMetav1TimeAndReadsItBack) {
  EXPECT_EQ(FormatRfc3339(1796205600000), "2026-12-02T10:00:00Z");
  EXPECT_EQ(FormatRfc3339(1796205600999), "2026-12-02T10:00:00Z");  // seconds, truncated
  EXPECT_EQ(ParseRfc3339("2026-12-02T10:00:00Z"), 1796205600000);
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseRfc3339("2024-02-29T23:59:59Z"), 1709251199000);  // a leap day
}

TEST(TimeFormat, ReadsFractionsAndOffsetsAndRefusesTheRest) {
  EXPECT_EQ(ParseRfc3339("2026-12-02T10:00:00.25Z"), 1796205600250);
  EXPECT_EQ(ParseRfc3339("2026-12-02T10:00:00.123456Z"), 1796205600123);  // metav1.MicroTime
  EXPECT_EQ(ParseRfc3339("2026-12-02T11:30:00+01:30"), 1796205600000);
  EXPECT_EQ(ParseRfc3339("2026-12-02T08:00:00-02:00"), 1796205600000);
  for (const char* bad : {"", "2026-12-02", "2026-12-02T10:00:00", "2026-13-02T10:00:00Z", "2026-12-02T10:00:00Zx",
                          "2026-12-02 10:00:00Z", "2026-12-02T10:00:00.Z", "yesterday"}) {
    EXPECT_FALSE(ParseRfc3339(bad).has_value()) << bad;
  }
}

}  // namespace time_format_test
}  // namespace gpusched
