// The reservation book (inventory/reservation_book.h): one entry per pod, each counted for the
// time of its origin, bare commitments and gone pods on times of their own, all run out by one
// Expire.
#include "gpusched/inventory/reservation_book.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_clock.h"

namespace gpusched::inventory {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;
using gpusched::testing::FakeClock;
using std::chrono::seconds;

Allocation On(std::string uid, std::string node) {
  return Allocation{.pod_uid = std::move(uid), .pod_namespace = "ml", .pod_name = "p", .node_name = std::move(node)};
}

struct Book {
  FakeClock clock;
  ReservationBook book{ReservationTtls{.assume_ttl = seconds(600), .booking_ttl = seconds(300)}, &clock};
};

TEST(ReservationBook, ACommitCountsForAssumeTtlUnlessTheClusterShowsThePodBound) {
  Book b;
  ASSERT_TRUE(b.book.Commit(On("a", "n1")).ok());
  ASSERT_TRUE(b.book.Commit(On("b", "n1")).ok());
  EXPECT_EQ(b.book.Find("a")->origin, AllocationOrigin::kCommitted);
  b.book.Observe(On("b", "n1"));  // the cluster caught up with b
  b.clock.Advance(seconds(600));
  EXPECT_TRUE(b.book.InFlight("a"));
  EXPECT_THAT(b.book.Expire().entries, IsEmpty());
  b.clock.Advance(seconds(1));
  EXPECT_FALSE(b.book.InFlight("a"));
  EXPECT_FALSE(b.book.InFlight("b"));  // observed: the cluster's word, not in flight
  EXPECT_THAT(b.book.Expire().entries, ElementsAre("a"));
}

TEST(ReservationBook, APodHoldsOneEntryThatACommitCannotReplace) {
  Book b;
  ASSERT_TRUE(b.book.Commit(On("a", "n1")).ok());
  EXPECT_EQ(b.book.Commit(On("a", "n2")).code(), StatusCode::kFailedPrecondition);
  b.book.Book(On("a", "n2"), b.clock.WallMs());  // a booking replaces it, with its own time
  EXPECT_EQ(b.book.Find("a")->node_name, "n2");
  EXPECT_THAT(b.book.OnNode("n1"), IsEmpty());
  EXPECT_EQ(b.book.size(), 1u);
  b.clock.Advance(seconds(301));
  EXPECT_THAT(b.book.Expire().entries, ElementsAre("a"));  // booking_ttl, not assume_ttl
  EXPECT_EQ(b.book.Release("a"), "n2");
  EXPECT_EQ(b.book.Release("a"), "");
}

TEST(ReservationBook, ABookingCountsFromItsWritersStampMeasuredEitherWay) {
  Book b;
  b.book.Book(On("old", "n1"), b.clock.WallMs() - 299'000);
  b.book.Book(On("ahead", "n1"), b.clock.WallMs() + 299'000);  // a writer whose clock runs ahead
  EXPECT_THAT(b.book.Expire().entries, IsEmpty());
  b.clock.Advance(seconds(1));
  EXPECT_THAT(b.book.Expire().entries, ElementsAre("old"));
  b.clock.SetWallMs(b.clock.WallMs() - 2'000);  // and one whose stamp is now further ahead
  EXPECT_THAT(b.book.Expire().entries, UnorderedElementsAre("ahead"));
}

TEST(ReservationBook, ABareCommitmentRunsOutOnItsOwnTimeWhateverHappensToTheEntry) {
  Book b;
  b.book.CommitBare("a");
  b.book.Observe(On("a", "n1"));  // what its claims hold, read again
  b.book.Release("a");
  b.clock.Advance(seconds(601));
  ReservationBook::Due due = b.book.Expire();
  EXPECT_THAT(due.bare, ElementsAre("a"));
  EXPECT_THAT(due.entries, IsEmpty());
  EXPECT_TRUE(b.book.EndBare("a"));
  EXPECT_FALSE(b.book.IsBare("a"));
}

TEST(ReservationBook, SecondBookingsCountOnTheirNodeBesideItsEntries) {
  Book b;
  b.book.Observe(On("a", "n1"));
  b.book.Book(On("b", "n1"), b.clock.WallMs());
  EXPECT_TRUE(b.book.SetSecondBookings("n2", {On("b", "n2")}));
  EXPECT_FALSE(b.book.SetSecondBookings("n2", {On("b", "n2")}));  // unchanged
  EXPECT_EQ(b.book.CountedOn("n1").size(), 2u);
  ASSERT_EQ(b.book.CountedOn("n2").size(), 1u);
  EXPECT_EQ(b.book.CountedOn("n2")[0]->pod_uid, "b");
  EXPECT_THAT(b.book.NodesWithSecondBookings(), ElementsAre("n2"));
  b.book.DropSecondBookings("n2");
  EXPECT_THAT(b.book.CountedOn("n2"), IsEmpty());
  EXPECT_FALSE(b.book.SetSecondBookings("n2", {}));
}

TEST(ReservationBook, AForgottenPodIsGoneForTwiceTheBookingTtl) {
  Book b;
  ASSERT_TRUE(b.book.Commit(On("a", "n1")).ok());
  b.book.CommitBare("c");
  EXPECT_EQ(b.book.Forget("a"), "n1");
  EXPECT_EQ(b.book.Forget("c"), "");
  EXPECT_EQ(b.book.Find("a"), nullptr);
  EXPECT_FALSE(b.book.IsBare("c"));
  EXPECT_TRUE(b.book.IsGone("a"));
  b.clock.Advance(seconds(600));
  b.book.Expire();
  EXPECT_TRUE(b.book.IsGone("a"));
  b.clock.Advance(seconds(1));
  b.book.Expire();
  EXPECT_FALSE(b.book.IsGone("a"));
  EXPECT_FALSE(b.book.IsGone("c"));
}

}  // namespace
}  // namespace gpusched::inventory
