#include "gpusched/common/quantity.h"

#include <gtest/gtest.h>

namespace gpusched {
namespace {

TEST(Quantity, ParsesPlainIntegers) {
  EXPECT_EQ(*ParseQuantityWhole("2"), 2);
  EXPECT_EQ(*ParseQuantityWhole("0"), 0);
  EXPECT_EQ(*ParseQuantityWhole("+7"), 7);
  EXPECT_EQ(*ParseQuantityWhole("-3"), -3);
  EXPECT_EQ(*ParseQuantityWhole("92112"), 92112);
}

TEST(Quantity, ParsesSuffixes) {
  EXPECT_EQ(*ParseQuantityMilli("500m"), 500);
  EXPECT_EQ(*ParseQuantityWhole("1k"), 1000);
  EXPECT_EQ(*ParseQuantityWhole("16Gi"), int64_t{16} << 30);
  EXPECT_EQ(*ParseQuantityWhole("2086400000Ki"), int64_t{2086400000} * 1024);
  EXPECT_EQ(*ParseQuantityWhole("1.5e3"), 1500);
  EXPECT_EQ(*ParseQuantityWhole("2E2"), 200);
  EXPECT_EQ(*ParseQuantityMilli("191450m"), 191450);
}

TEST(Quantity, MilliValueRoundsUp) {
  EXPECT_EQ(*ParseQuantityMilli("1n"), 1);
  EXPECT_EQ(*ParseQuantityMilli("1.0001"), 1001);
  EXPECT_EQ(*ParseQuantityMilli("0.5"), 500);
  EXPECT_EQ(*ParseQuantityMilli(".5"), 500);
  EXPECT_EQ(*ParseQuantityMilli("5."), 5000);
}

TEST(Quantity, WholeRejectsFractions) {
  StatusOr<int64_t> q = ParseQuantityWhole("1.5");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("not a whole number"), std::string::npos);
  EXPECT_FALSE(ParseQuantityWhole("500m").ok());
  EXPECT_EQ(*ParseQuantityWhole("3000m"), 3);
}

TEST(Quantity, RejectsMalformedTextNamingIt) {
  for (const char* bad : {"", "abc", "1x", "1Ki2", "--1", "1e", "1e+", "Gi", ".", "1.2.3", "1 "}) {
    StatusOr<int64_t> q = ParseQuantityWhole(bad);
    ASSERT_FALSE(q.ok()) << bad;
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(q.status().message().find(std::string("\"") + bad + "\""), std::string::npos) << q.status().message();
  }
}

TEST(Quantity, RejectsOverflowInsteadOfWrapping) {
  EXPECT_FALSE(ParseQuantityWhole("9223372036854775808").ok());
  EXPECT_EQ(*ParseQuantityWhole("9223372036854775807"), INT64_MAX);
  EXPECT_FALSE(ParseQuantityWhole("8Ei").ok());
  EXPECT_FALSE(ParseQuantityMilli("9223372036854775807").ok());
  EXPECT_FALSE(ParseQuantityWhole("1e9999").ok());
  EXPECT_FALSE(ParseQuantityWhole("99999999999999999999999999999999999999999999").ok());
}

}  // namespace
}  // namespace gpusched
