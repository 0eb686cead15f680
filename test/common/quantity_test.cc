#include "gpusched/common/quantity.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

namespace gpusched {
namespace quantity_test {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(Quantity, ParsesPlainIntegers) {
  EXPECT_EQ(*ParseQuantityWhole("2"), 2);
  EXPECT_EQ(*ParseQuantityWhole("0"), 0);
  EXPECT_EQ(*ParseQuantityWhole("+7"), 7);
  EXPECT_EQ(*ParseQuantityWhole("-3"), -3);
  EXPECT_EQ(*ParseQuantityWhole("92112"), 92112);
  EXPECT_EQ(*ParseQuantityWhole("0007"), 7);
}

// ../shared/specs/quantity.md: what the API server writes back, and the value it means.
TEST(Quantity, ReadsEveryCanonicalFormTheApiServerWrites) {
  struct Case {
    const char* text;
    int64_t value;
  };
  for (const Case& c : {Case{"8k", 8000}, {"24k", 24000}, {"96k", 96000}, {"1k", 1000}, {"8192", 8192},
                        {"40960", 40960}, {"81920", 81920}, {"100", 100}, {"1500", 1500}, {"1Gi", 1073741824},
                        {"2Ki", 2048}, {"512Ki", 524288}, {"1e3", 1000}, {"12e6", 12000000}, {"0", 0},
                        {"1M", 1000000}, {"3k", 3000}, {"300Mi", 314572800}, {"1001Gi", int64_t{1001} << 30}}) {
    StatusOr<int64_t> q = ParseQuantityWhole(c.text);
    ASSERT_TRUE(q.ok()) << c.text << ": " << q.status().message();
    EXPECT_EQ(*q, c.value) << c.text;
  }
}

TEST(Quantity, EverySpellingOfAValueReadsTheSame) {
  for (const char* text : {"8000", "8k", "8e3", "8E3", "8.0k", "8000.000", "0.008M", "8000000m", "8000000000000n",
                           "+8k", " 8k", "8k\n", "8.e3", "0.8e4", "80e2", "8e+3", "8000e-0"}) {
    StatusOr<int64_t> q = ParseQuantityWhole(text);
    ASSERT_TRUE(q.ok()) << text << ": " << q.status().message();
    EXPECT_EQ(*q, 8000) << text;
    EXPECT_EQ(*ParseQuantityMilli(text), 8000000) << text;
  }
  EXPECT_EQ(*ParseQuantityWhole("1024Mi"), *ParseQuantityWhole("1Gi"));
  EXPECT_EQ(*ParseQuantityWhole("0.5Ki"), 512);
  EXPECT_EQ(*ParseQuantityWhole("0k"), 0);
  EXPECT_EQ(*ParseQuantityWhole("0Mi"), 0);
  EXPECT_EQ(*ParseQuantityWhole("-0"), 0);
}

// Vectors of apimachinery's TestQuantityParse, as milli values.
TEST(Quantity, MatchesApimachineryOnItsOwnVectors) {
  struct Case {
    const char* text;
    int64_t milli;
  };
  for (const Case& c : {Case{"5n", 1}, {"4u", 1}, {"3m", 3}, {"9", 9000}, {"50k", 50000000}, {"7M", 7000000000},
                        {"1E-3", 1}, {"1e3", 1000000}, {"100.035k", 100035000}, {"0.001", 1}, {"0.0005k", 500},
                        {"0.5e-1", 50}, {"0.5e-2", 5}, {"10.035M", 10035000000}, {"1.2e3", 1200000},
                        {"1.3E+6", 1300000000}, {"9.01", 9010}, {"8.1k", 8100000}, {"7.123456M", 7123456000},
                        {"3.001n", 1}, {"1.1E-9", 1}, {"0.0000000001", 1}, {"0.00000012345", 1},
                        {"100.035Ki", 102435840}, {"0.5Mi", 524288000}, {"0.05Gi", 53687091200},
                        {".001", 1}, {".0001k", 100}, {"1.", 1000}, {"1.G", 1000000000000}, {".001Ki", 1024},
                        {".000000000001Ki", 1}}) {
    StatusOr<int64_t> q = ParseQuantityMilli(c.text);
    ASSERT_TRUE(q.ok()) << c.text << ": " << q.status().message();
    EXPECT_EQ(*q, c.milli) << c.text;
  }
}

// negativeScaleInt64: "if not exact, is rounded away from zero" (found by fuzz_quantity: "-0.0001"
// read as whole 0 while "0.0001" was not whole).
TEST(Quantity, NegativeValuesRoundAwayFromZeroAsPositiveOnes) {
  EXPECT_EQ(*ParseQuantityMilli("-0.0001"), -1);
  EXPECT_EQ(*ParseQuantityMilli("-1.0001"), -1001);
  EXPECT_FALSE(ParseQuantityWhole("-0.0001").ok());
  EXPECT_EQ(*ParseQuantityWhole("-0.9999999"), -1);
}

TEST(Quantity, MilliValueRoundsUp) {
  EXPECT_EQ(*ParseQuantityMilli("1n"), 1);
  EXPECT_EQ(*ParseQuantityMilli("1.0001"), 1001);
  EXPECT_EQ(*ParseQuantityMilli("0.5"), 500);
  EXPECT_EQ(*ParseQuantityMilli(".5"), 500);
  EXPECT_EQ(*ParseQuantityMilli("5."), 5000);
  EXPECT_EQ(*ParseQuantityMilli("1e-100"), 1);
}

// The API server's rule for extended resources: the milli value must be a multiple of 1000.
TEST(Quantity, WholeIsTheApiServersIntegerRule) {
  StatusOr<int64_t> q = ParseQuantityWhole("1500m");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("\"1500m\": 1.5 is not a whole number"), std::string::npos)
      << q.status().message();
  EXPECT_FALSE(ParseQuantityWhole("1.5").ok());
  EXPECT_FALSE(ParseQuantityWhole("500m").ok());
  EXPECT_FALSE(ParseQuantityWhole("1.0001").ok());
  EXPECT_EQ(*ParseQuantityWhole("3000m"), 3);
  EXPECT_EQ(*ParseQuantityWhole("1.5k"), 1500);
  // Rounded up to a whole milli first, as MilliValue does: the API server accepts these as 1.
  EXPECT_EQ(*ParseQuantityWhole("0.9999999"), 1);
  EXPECT_EQ(*ParseQuantityWhole("999999999n"), 1);
}

TEST(Quantity, RejectsMalformedTextNamingIt) {
  for (const char* bad : {"", "abc", "1x", "1Ki2", "--1", "1e", "1e+", "Gi", ".", "1.2.3", "1 2", "1.1.M", "1+1.0M",
                          "0.1mi", "0.1am", "aoeu", ".5i", "1i", "-3.01i", "-3.01e-", "1K", "1e3.5", "1ki"}) {
    StatusOr<int64_t> q = ParseQuantityWhole(bad);
    ASSERT_FALSE(q.ok()) << bad;
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(q.status().message().find(std::string("\"") + bad + "\""), std::string::npos) << q.status().message();
  }
}

// apimachinery caps DecimalSI and BinarySI values at 2^63-1 ("9Ei" reads as the maximum).
TEST(Quantity, CapsHugeValuesAsApimachineryDoes) {
  EXPECT_EQ(*ParseQuantityWhole("9223372036854775807"), kMax);
  EXPECT_EQ(*ParseQuantityWhole("9223372036854775808"), kMax);
  EXPECT_EQ(*ParseQuantityWhole("9Ei"), kMax);
  EXPECT_EQ(*ParseQuantityWhole("9223372036854775807Ki"), kMax);
  EXPECT_EQ(*ParseQuantityWhole("99999999999999999999999999999999999999999999"), kMax);
  EXPECT_EQ(*ParseQuantityWhole("8Ei"), kMax);
  EXPECT_EQ(*ParseQuantityWhole("7Ei"), int64_t{7} << 60);
  EXPECT_EQ(*ParseQuantityWhole("-9Ei"), -kMax);
  // The milli value of the maximum does not fit int64.
  EXPECT_FALSE(ParseQuantityMilli("9223372036854775807").ok());
  // A DecimalExponent value is not capped: it is out of range.
  EXPECT_FALSE(ParseQuantityWhole("1e9999").ok());
  EXPECT_FALSE(ParseQuantityWhole("1e99999999999999999999999").ok());
}

TEST(Quantity, FormatsCanonicallyAsTheApiServerDoes) {
  EXPECT_EQ(FormatQuantity(8000), "8k");
  EXPECT_EQ(FormatQuantity(96000), "96k");
  EXPECT_EQ(FormatQuantity(1000), "1k");
  EXPECT_EQ(FormatQuantity(8192), "8192");
  EXPECT_EQ(FormatQuantity(100), "100");
  EXPECT_EQ(FormatQuantity(1500), "1500");
  EXPECT_EQ(FormatQuantity(0), "0");
  EXPECT_EQ(FormatQuantity(1000000000), "1G");
  EXPECT_EQ(FormatQuantity(-3000), "-3k");
  EXPECT_EQ(FormatQuantity(1073741824, QuantityFormat::kBinarySI), "1Gi");
  EXPECT_EQ(FormatQuantity(314572800, QuantityFormat::kBinarySI), "300Mi");
  EXPECT_EQ(FormatQuantity(1025, QuantityFormat::kBinarySI), "1025");
  EXPECT_EQ(FormatQuantity(5, QuantityFormat::kBinarySI), "5");
  EXPECT_EQ(FormatQuantity(1000, QuantityFormat::kDecimalExponent), "1e3");
  EXPECT_EQ(FormatQuantity(12000000, QuantityFormat::kDecimalExponent), "12e6");
}

TEST(Quantity, FormattedValuesReadBackExactly) {
  for (int64_t v : {int64_t{0}, int64_t{1}, int64_t{999}, int64_t{1000}, int64_t{1024}, int64_t{8000}, int64_t{96000},
                    int64_t{81920}, int64_t{1} << 32, int64_t{5000000000}, kMax, -kMax, int64_t{-1024}}) {
    for (QuantityFormat f : {QuantityFormat::kDecimalSI, QuantityFormat::kBinarySI, QuantityFormat::kDecimalExponent}) {
      std::string text = FormatQuantity(v, f);
      StatusOr<int64_t> q = ParseQuantityWhole(text);
      ASSERT_TRUE(q.ok()) << text;
      EXPECT_EQ(*q, v) << text;
    }
  }
}

}  // namespace quantity_test
}  // namespace gpusched
