// Expiry (inventory/expiry.h), the reservation book's one time type: each clock's deadline, at
// its edge, and a replica's stamp counted either way.
#include "gpusched/inventory/expiry.h"

#include <gtest/gtest.h>

namespace gpusched::inventory {
namespace expiry_test {

using std::chrono::seconds;
using Time = Expiry::Time;

const Time t0 = Time{} + seconds(1000);

TEST(Expiry, NeverPasses) {
  EXPECT_FALSE(Expiry::Never().Passed(t0 + seconds(1'000'000), 1'000'000'000'000));
  EXPECT_EQ(Expiry(), Expiry::Never());
}

TEST(Expiry, ThroughStillCountsAtItsDeadlineAndBeforeDoesNot) {
  EXPECT_FALSE(Expiry::Through(t0).Passed(t0, 0));
  EXPECT_TRUE(Expiry::Through(t0).Passed(t0 + std::chrono::nanoseconds(1), 0));
  EXPECT_FALSE(Expiry::Before(t0).Passed(t0 - std::chrono::nanoseconds(1), 0));
  EXPECT_TRUE(Expiry::Before(t0).Passed(t0, 0));
  EXPECT_EQ(Expiry::Before(t0 + seconds(30)).Left(t0), seconds(30));
  EXPECT_EQ(Expiry::Through(t0).Left(t0 + seconds(5)), -seconds(5));
}

TEST(Expiry, AWallDeadlinePassesAtItsMillisecondWhateverTheMonotonicClock) {
  Expiry e = Expiry::BeforeWall(50'000);
  EXPECT_FALSE(e.Passed(t0 + seconds(1'000'000), 49'999));
  EXPECT_TRUE(e.Passed(Time{}, 50'000));
  EXPECT_EQ(e.Left(t0), std::chrono::nanoseconds::zero());
}

TEST(Expiry, AStampCountsWhileYoungerThanItsSpanMeasuredEitherWay) {
  Expiry e = Expiry::Stamped(100'000, seconds(300));
  EXPECT_FALSE(e.Passed(t0, 100'000 + 299'999));
  EXPECT_TRUE(e.Passed(t0, 100'000 + 300'000));
  // A writer whose clock runs ahead: a stamp in the future counts as long, no longer.
  EXPECT_FALSE(e.Passed(t0, 100'000 - 299'999));
  EXPECT_TRUE(e.Passed(t0, 100'000 - 300'000));
}

}  // namespace expiry_test
}  // namespace gpusched::inventory
