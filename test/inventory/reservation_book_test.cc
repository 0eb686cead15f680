// The reservation book (inventory/reservation_book.h): one entry per pod, each counted for the
// time of its origin; bare commitments, gone pods, defrag holds and nominations' holds on times of
// their own; all run out by one Expire.
#include "gpusched/inventory/reservation_book.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_clock.h"

namespace gpusched::inventory {
namespace reservation_book_test {

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
  ReservationBook book{
      ReservationTtls{.assume_ttl = seconds(600), .booking_ttl = seconds(300), .nomination_ttl = seconds(60)}, &clock};
  std::string leaving_node;  // where pods of lower priority are still terminating

  ReservationBook::Due Expire() {
    return book.Expire([this](std::string_view node, int32_t) { return node == leaving_node; });
  }
};

// A nominated pod's GPU hold runs out by the same Expire, nomination_ttl after its victims are
// gone: while pods of lower priority still terminate on its node, its clock starts again.
TEST(ReservationBook, ANominationsHoldRunsOutByTheBooksExpireOnceItsVictimsAreGone) {
  Book b;
  std::set<std::string> touched;
  b.book.nominations().Nominate(Pod{.uid = "p", .name = "p", .priority = 10, .nominated_node = "n1"}, true, b.clock.Now(),
                                &touched);
  b.leaving_node = "n1";
  b.clock.Advance(seconds(90));
  EXPECT_THAT(b.Expire().hold_nodes, IsEmpty());  // victims leaving: counted from now
  b.leaving_node = "";
  b.clock.Advance(seconds(60));
  EXPECT_THAT(b.Expire().hold_nodes, IsEmpty());
  b.clock.Advance(seconds(1));
  EXPECT_THAT(b.Expire().hold_nodes, ElementsAre("n1"));
  EXPECT_FALSE(b.book.nominations().all().at("p").gpus);  // the pod itself stays nominated
  EXPECT_THAT(b.Expire().hold_nodes, IsEmpty());
}

TEST(ReservationBook, ACommitCountsForAssumeTtlUnlessTheClusterShowsThePodBound) {
  Book b;
  ASSERT_TRUE(b.book.Commit(On("a", "n1")).ok());
  ASSERT_TRUE(b.book.Commit(On("b", "n1")).ok());
  EXPECT_EQ(b.book.Find("a")->origin, AllocationOrigin::kCommitted);
  b.book.Observe(On("b", "n1"));  // the cluster caught up with b
  b.clock.Advance(seconds(600));
  EXPECT_TRUE(b.book.InFlight("a"));
  EXPECT_THAT(b.Expire().entries, IsEmpty());
  b.clock.Advance(seconds(1));
  EXPECT_FALSE(b.book.InFlight("a"));
  EXPECT_FALSE(b.book.InFlight("b"));  // observed: the cluster's word, not in flight
  EXPECT_THAT(b.Expire().entries, ElementsAre("a"));
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
  EXPECT_THAT(b.Expire().entries, ElementsAre("a"));  // booking_ttl, not assume_ttl
  EXPECT_EQ(b.book.Release("a"), "n2");
  EXPECT_EQ(b.book.Release("a"), "");
}

TEST(ReservationBook, ABookingCountsFromItsWritersStampMeasuredEitherWay) {
  Book b;
  b.book.Book(On("old", "n1"), b.clock.WallMs() - 299'000);
  b.book.Book(On("ahead", "n1"), b.clock.WallMs() + 299'000);  // a writer whose clock runs ahead
  EXPECT_THAT(b.Expire().entries, IsEmpty());
  b.clock.Advance(seconds(1));
  EXPECT_THAT(b.Expire().entries, ElementsAre("old"));
  b.clock.SetWallMs(b.clock.WallMs() - 2'000);  // and one whose stamp is now further ahead
  EXPECT_THAT(b.Expire().entries, UnorderedElementsAre("ahead"));
}

TEST(ReservationBook, ABareCommitmentRunsOutOnItsOwnTimeWhateverHappensToTheEntry) {
  Book b;
  b.book.CommitBare("a");
  b.book.Observe(On("a", "n1"));  // what its claims hold, read again
  b.book.Release("a");
  b.clock.Advance(seconds(601));
  ReservationBook::Due due = b.Expire();
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
  b.Expire();
  EXPECT_TRUE(b.book.IsGone("a"));
  b.clock.Advance(seconds(1));
  b.Expire();
  EXPECT_FALSE(b.book.IsGone("a"));
  EXPECT_FALSE(b.book.IsGone("c"));
}

Reservation HeldFor(std::string holder, std::string node, std::chrono::steady_clock::time_point until, int64_t at_ms) {
  Allocation a = On(std::move(holder), std::move(node));
  a.origin = AllocationOrigin::kHeld;
  return Reservation{.held = a, .expiry = Expiry::Before(until), .stamp_ms = at_ms};
}

TEST(ReservationBook, AHoldIsUsedByThePodItWasMadeForElseByItsControllersNextPodOldestFirst) {
  Book b;
  auto until = b.clock.Now() + seconds(60);
  b.book.PutHold("moved-1", HeldFor("ctrl:rs", "n1", until, 2));
  b.book.PutHold("moved-2", HeldFor("ctrl:rs", "n1", until, 1));
  b.book.PutHold("about", HeldFor("pending", "n2", until, 3));
  EXPECT_EQ(b.book.UseHold("new-1", "ctrl:rs", "n1"), "n1");  // a replacement: the oldest, moved-2's
  EXPECT_EQ(b.book.FindHold("moved-2"), nullptr);
  EXPECT_EQ(b.book.UseHold("new-2", "ctrl:rs", "n2"), "");  // not on the hold's node
  EXPECT_EQ(b.book.UseHold("moved-1", "ctrl:rs", "n1"), "");  // the moved pod itself, back: not its replacement
  EXPECT_EQ(b.book.UseHold("pending", "", "n9"), "n2");  // made for it: wherever it binds
  ASSERT_EQ(b.book.holds().size(), 1u);
  EXPECT_EQ(b.book.holds().begin()->first, "moved-1");
}

TEST(ReservationBook, AHoldRunsOutOnItsTimeAndAnEndedAnnotatedHoldIsRememberedUntilItsOwn) {
  Book b;
  b.book.PutHold("a", HeldFor("pending", "n1", b.clock.Now() + seconds(30), 1));
  b.book.PutHold("a", HeldFor("pending", "n2", b.clock.Now() + seconds(60), 2));  // replaces
  b.book.EndAnnotated("x@1", ReservationBook::EndedHold{.node = "n3", .until = Expiry::BeforeWall(b.clock.WallMs() + 45'000)});
  b.clock.Advance(seconds(45));
  ReservationBook::Due due = b.Expire();
  EXPECT_THAT(due.hold_nodes, IsEmpty());
  EXPECT_FALSE(b.book.AnnotatedEnded("x@1"));
  ASSERT_NE(b.book.FindHold("a"), nullptr);
  b.clock.Advance(seconds(15));
  EXPECT_THAT(b.Expire().hold_nodes, ElementsAre("n2"));
  EXPECT_FALSE(b.book.EndHold("a").has_value());
}

}  // namespace reservation_book_test
}  // namespace gpusched::inventory
